-- 094_host_ownership.sql - a host's working state lives in the memory of the
-- server that owns it; the database keeps a checkpoint of it and the raw
-- samples from which the rest is rebuilt (docs/design.md "Ingest").
--
-- hosts.lease: the server that owns the host (a random number per server
-- process; 0 none). Every ingest transaction updates the host's row only
-- WHERE lease = its own, which locks the row (serialising the host across
-- servers) and tells a server that another one took the host over since
-- (no row updated): it then takes it back and rebuilds the host's state.
-- hosts.silent: the host_silent tick opened an alert that the host's next
-- sample resolves (in the hosts row, which ingest updates anyway, so that
-- the tick's row lock serialises it with ingest).
-- hosts.seen_ms, lag_*, clock_bad_ms, refused_*: the host's arrivals, clock
-- window, latest lag, last skewed arrival and refused samples
-- (090_liveness.sql, 091_clock_hold.sql), moved here from detector_state:
-- ingest writes them with the host's row in every transaction (the tick
-- judges silence and clocks by them), and the refusal path by host id. A
-- host whose every sample was refused has a hosts row without samples.
ALTER TABLE hosts
	ADD COLUMN lease bigint NOT NULL DEFAULT 0,
	ADD COLUMN silent boolean NOT NULL DEFAULT false,
	ADD COLUMN seen_ms bigint NOT NULL DEFAULT 0,
	ADD COLUMN lag_win_ms bigint NOT NULL DEFAULT 0,
	ADD COLUMN lag_min_ms bigint,
	ADD COLUMN lag_prev_ms bigint,
	ADD COLUMN lag_last_ms bigint,
	ADD COLUMN clock_bad_ms bigint NOT NULL DEFAULT 0,
	ADD COLUMN refused_n bigint NOT NULL DEFAULT 0,
	ADD COLUMN refused_at_ms bigint NOT NULL DEFAULT 0,
	ADD COLUMN refused_ts_ms bigint NOT NULL DEFAULT 0;
INSERT INTO hosts (name) SELECT d.host FROM detector_state d
	WHERE NOT EXISTS (SELECT 1 FROM hosts h WHERE h.name = d.host) ORDER BY d.host;
UPDATE hosts h SET silent = d.silent, seen_ms = d.seen_ms, lag_win_ms = d.lag_win_ms, lag_min_ms = d.lag_min_ms,
	lag_prev_ms = d.lag_prev_ms, lag_last_ms = d.lag_last_ms, clock_bad_ms = d.clock_bad_ms, refused_n = d.refused_n, refused_at_ms = d.refused_at_ms,
	refused_ts_ms = d.refused_ts_ms
	FROM detector_state d WHERE d.host = h.name;

-- detector_state is the checkpoint, keyed by the host id like every other
-- per-host table: the detectors' state after the host's in-order samples
-- up to last_ts_ms, written every --checkpoint-interval by the owning
-- server together with the 5-minute rollups of the same samples, so that
-- rollup_5m holds exactly the host's in-order samples up to last_ts_ms (0:
-- none). Taking a host over replays the stored samples after it.
ALTER TABLE detector_state ADD COLUMN host_id integer;
UPDATE detector_state d SET host_id = h.id FROM hosts h WHERE h.name = d.host;
DELETE FROM detector_state WHERE host_id IS NULL;
ALTER TABLE detector_state DROP CONSTRAINT detector_state_pkey;
ALTER TABLE detector_state DROP COLUMN host, DROP COLUMN silent, DROP COLUMN seen_ms, DROP COLUMN lag_win_ms,
	DROP COLUMN lag_min_ms, DROP COLUMN lag_prev_ms, DROP COLUMN lag_last_ms, DROP COLUMN clock_bad_ms,
	DROP COLUMN refused_n, DROP COLUMN refused_at_ms,
	DROP COLUMN refused_ts_ms,
	ALTER COLUMN host_id SET NOT NULL, ADD PRIMARY KEY (host_id);
-- Before this migration every sample's rollups and detector step committed
-- with it: both are complete up to the host's newest sample.
INSERT INTO detector_state (host_id, last_ts_ms)
	SELECT id, 0 FROM hosts ON CONFLICT (host_id) DO NOTHING;
UPDATE detector_state d SET last_ts_ms = coalesce(h.last_ts_ms, 0) FROM hosts h WHERE h.id = d.host_id;

-- The history of a host's descriptive fields (020_host_meta.sql) is written
-- by the server, which knows when they change (its memory of the host),
-- instead of a trigger on every update of the hosts row.
DROP TRIGGER host_meta_record ON hosts;
DROP FUNCTION host_meta_record();
