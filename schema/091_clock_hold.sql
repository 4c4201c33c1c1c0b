-- 091_clock_hold.sql - what clock_skew needs to follow a clock that is
-- stepped, and to resolve without flapping (server/ingest/liveness.c).
--
-- lag_last_ms: arrival - ts of the host's latest arrival (NULL: none yet).
--   Every arrival's lag bounds the offset from above; the latest one
--   tells a clock that was corrected from one still wrong.
-- clock_bad_ms: the server's clock at the host's latest arrival whose lag
--   was 30 s or more either way (0: none). An open clock_skew resolves
--   only when no such arrival and no refusal came for a hold period.
ALTER TABLE detector_state
	ADD COLUMN lag_last_ms bigint,
	ADD COLUMN clock_bad_ms bigint NOT NULL DEFAULT 0;
