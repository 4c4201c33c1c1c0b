-- 011_detector_state.sql - what the detectors remember per host between
-- ingest requests and across server restarts (server/ingest/detect.c).
-- state is the engine's own versioned binary format (det_host_save); the
-- row is locked FOR UPDATE while a request feeds that host's samples, which
-- serialises concurrent requests for one host, across servers too.
-- last_ts_ms / interval_ms sit beside it for the host_silent tick.
CREATE TABLE detector_state (
  host text PRIMARY KEY,
  last_ts_ms bigint NOT NULL DEFAULT 0,
  interval_ms bigint NOT NULL DEFAULT 0,
  state bytea NOT NULL DEFAULT '\x'::bytea,
  updated_at timestamptz NOT NULL DEFAULT now());

CREATE INDEX detector_state_last_idx ON detector_state (last_ts_ms);
