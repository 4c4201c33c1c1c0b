-- 012_detector_state_silent.sql - set by the host_silent tick when it opens
-- an alert, so that the ingest hook only touches the alerts table to resolve
-- it when there is one (one query less per host per request otherwise).
ALTER TABLE detector_state ADD COLUMN silent boolean NOT NULL DEFAULT false;
