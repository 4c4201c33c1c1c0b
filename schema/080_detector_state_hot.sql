-- 080_detector_state_hot.sql - every ingest transaction rewrites the
-- detector_state row of each of its hosts (server/ingest/detect.c); make that
-- rewrite a cheap in-place (HOT) update. Measured in docs/scaling.md §1.
--
-- * No index on last_ts_ms: it changes on every update, so the index made
--   every update a new tuple plus an entry in both indexes. Its only reader,
--   the host_silent tick's scan (alert_store.c), compares last_ts_ms with a
--   per-row bound (3 x interval_ms) that no index serves; it reads the table
--   sequentially with or without it.
-- * The state (det_host_save version 2, ~2.2 KB for a host with 20 cgroups)
--   stays in the row, uncompressed: toast_tuple_target = 8160 keeps rows up
--   to a page out of TOAST, where each update wrote two new chunks, deleted
--   two and updated the TOAST index, and compressed the state with pglz
--   (and each lock decompressed it). Hosts with hundreds of cgroups still
--   go to TOAST.
-- * fillfactor 70 leaves room on the page for the next version of a row,
--   the condition for a HOT update (with ~2.2 KB rows: two per page).
DROP INDEX IF EXISTS detector_state_last_idx;
ALTER TABLE detector_state SET (fillfactor = 70, toast_tuple_target = 8160);
