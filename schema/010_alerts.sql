-- 010_alerts.sql - alerts raised by the detectors (docs/api.md "Alerts table",
-- CONTRACT.md §3). Owned by server/store/alert_store.c; read by GET /api/v1/alerts.
CREATE TABLE alerts (
  id bigserial PRIMARY KEY, host text NOT NULL, cgroup text,  -- NULL: host-wide
  kind text NOT NULL, severity text NOT NULL CHECK (severity IN ('warning','critical')),
  state text NOT NULL CHECK (state IN ('open','resolved')),
  started_at timestamptz NOT NULL, opened_at timestamptz NOT NULL,
  ended_at timestamptz, updated_at timestamptz NOT NULL,
  summary text NOT NULL, evidence jsonb NOT NULL DEFAULT '{}');

-- The API's default order and its host filter.
CREATE INDEX alerts_started_idx ON alerts (started_at DESC, id DESC);
CREATE INDEX alerts_host_started_idx ON alerts (host, started_at DESC, id DESC);
-- At most one open alert per (host, cgroup, kind): the detectors adopt an
-- existing open alert (ON CONFLICT) instead of raising a duplicate, even if
-- their state was lost. Also serves "open alerts of a host" (fleet view).
CREATE UNIQUE INDEX alerts_one_open_idx ON alerts (host, (coalesce(cgroup, '')), kind)
  WHERE state = 'open';
