-- 060_overrides_version.sql - a counter that moves with every change to
-- detector_overrides, so that the server can keep the rules in memory and
-- re-read them only when they changed (server/ingest/detect.c). The ingest
-- transaction reads the counter in the statement that locks the hosts'
-- detector state (no extra round trip); a server that sees a value other
-- than the one it cached reloads the rules. Every writer of the table goes
-- through the statement trigger, whichever server or client it is.
CREATE TABLE detector_overrides_version (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	v bigint NOT NULL
);
INSERT INTO detector_overrides_version (v) VALUES (1);

CREATE FUNCTION detector_overrides_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE detector_overrides_version SET v = v + 1;
	RETURN NULL;
END $$;

CREATE TRIGGER detector_overrides_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
	ON detector_overrides FOR EACH STATEMENT EXECUTE FUNCTION detector_overrides_bump();
