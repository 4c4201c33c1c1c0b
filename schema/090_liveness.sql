-- 090_liveness.sql - when a host was last heard from, how its clock compares
-- with the server's, and its samples refused for their timestamps
-- (server/ingest/liveness.c, server/store/liveness_store.c).
--
-- seen_ms: the server's clock when the host's newest fed sample arrived.
--   host_silent is judged by it, not by sample timestamps, so that a host
--   whose clock is behind (its samples look old) or ahead does not flap.
-- lag_*: the smallest (arrival - ts) over a window of arrivals: the host's
--   clock offset plus the shortest delivery delay. lag_win_ms starts the
--   current window, lag_min_ms is its minimum so far, lag_prev_ms the
--   minimum of the window before it (NULL: none yet, or not contiguous).
-- refused_*: samples refused for their timestamp (more than 10 minutes
--   ahead of the server's clock, or older than the retention): how many,
--   when the last one was refused (server clock) and its ts. A host whose
--   every sample is refused has a row here and nowhere else.
ALTER TABLE detector_state
	ADD COLUMN seen_ms bigint NOT NULL DEFAULT 0,
	ADD COLUMN lag_win_ms bigint NOT NULL DEFAULT 0,
	ADD COLUMN lag_min_ms bigint,
	ADD COLUMN lag_prev_ms bigint,
	ADD COLUMN refused_n bigint NOT NULL DEFAULT 0,
	ADD COLUMN refused_at_ms bigint NOT NULL DEFAULT 0,
	ADD COLUMN refused_ts_ms bigint NOT NULL DEFAULT 0;

-- hosts from before: last heard from when their state was last written
UPDATE detector_state SET seen_ms = (extract(epoch FROM updated_at) * 1000)::bigint WHERE last_ts_ms > 0;

-- An alert never ends before it opened: the writers clamp ended_at to
-- opened_at (a host back after an outage posts samples taken before its
-- host_silent opened), and the table refuses the rest. Rows written before
-- this migration are clamped first.
UPDATE alerts SET ended_at = opened_at WHERE ended_at < opened_at;
ALTER TABLE alerts ADD CONSTRAINT alerts_ended_after_opened CHECK (ended_at IS NULL OR ended_at >= opened_at);
