-- 020_host_meta.sql - the history of a host's descriptive fields (kernel,
-- agent_version, labels), so that an export (server/store/store_export.c) gives
-- every sample the values it was posted with, not the host's current ones.
--
-- Samples rows carry only numbers; these strings change rarely (a reboot
-- into a new kernel, an agent upgrade), so one row per change is kept
-- rather than one per sample. The ingest statement already writes the
-- newest sample's fields into `hosts`; this trigger records a row whenever
-- that moves the host forward in time with different fields. A sample's
-- fields are those of the newest row at or before its ts (the oldest row
-- for samples before it). Exact when the fields do not change inside one
-- ingest batch of a host (an agent changes them only across a restart).

CREATE TABLE host_meta (
	host_id integer NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
	ts_ms bigint NOT NULL,
	kernel text,
	agent_version text,
	labels jsonb NOT NULL DEFAULT '{}',
	PRIMARY KEY (host_id, ts_ms)
);

-- hosts that posted before this migration: their current fields, from their
-- first sample on (the best there is)
INSERT INTO host_meta (host_id, ts_ms, kernel, agent_version, labels)
SELECT id, first_ts_ms, kernel, agent_version, labels FROM hosts
WHERE samples > 0 AND first_ts_ms IS NOT NULL;

CREATE FUNCTION host_meta_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.last_ts_ms IS NOT NULL AND NEW.last_ts_ms IS DISTINCT FROM OLD.last_ts_ms AND
	   (OLD.samples = 0 OR
	    (NEW.kernel, NEW.agent_version, NEW.labels) IS DISTINCT FROM
	    (OLD.kernel, OLD.agent_version, OLD.labels)) THEN
		INSERT INTO host_meta (host_id, ts_ms, kernel, agent_version, labels)
		VALUES (NEW.id, NEW.last_ts_ms, NEW.kernel, NEW.agent_version, NEW.labels)
		ON CONFLICT (host_id, ts_ms) DO UPDATE SET kernel = EXCLUDED.kernel,
			agent_version = EXCLUDED.agent_version, labels = EXCLUDED.labels;
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER host_meta_record AFTER UPDATE ON hosts
	FOR EACH ROW EXECUTE FUNCTION host_meta_record();
