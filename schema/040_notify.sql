-- 040_notify.sql - silences and the notification outbox (docs/notify.md).
-- Owned by server/notify/silence.c (silences) and server/notify/notify.c (outbox).

-- A silence keeps matching alerts recorded and shown but holds their
-- notifications back while it is active (starts_at <= now() < until, not
-- ended). cgroup NULL matches every cgroup of the host and the host itself;
-- kind NULL matches every kind. DELETE /api/v1/silences/{id} sets ended_at
-- (the row stays as the record).
CREATE TABLE silences (
	id         bigserial PRIMARY KEY,
	host       text NOT NULL CHECK (length(host) BETWEEN 1 AND 253),
	cgroup     text CHECK (cgroup IS NULL OR length(cgroup) BETWEEN 1 AND 4096),
	kind       text CHECK (kind IS NULL OR kind ~ '^[a-z_]{1,64}$'),
	starts_at  timestamptz NOT NULL DEFAULT now(),
	until      timestamptz NOT NULL,
	ended_at   timestamptz,
	created_at timestamptz NOT NULL DEFAULT now(),
	created_by text NOT NULL DEFAULT '' CHECK (length(created_by) <= 200),
	comment    text NOT NULL DEFAULT '' CHECK (length(comment) <= 2000),
	CHECK (until > starts_at)
);
CREATE INDEX silences_active_idx ON silences (host) WHERE ended_at IS NULL;

-- The outbox: one row per alert event, written by a trigger in the same
-- transaction that opens, escalates or resolves the alert (the ingest
-- transaction), so an event exists exactly when its alert change committed
-- and a restart loses none. The server's notifier (one per database, by an
-- advisory lock) delivers each to the receivers configured with --webhook;
-- delivered lists the receivers done with it (by name, "!name" when it gave
-- up after its retries), done_at is set when all are done or the event was
-- held back by a silence (suppressed).
CREATE TABLE notify_outbox (
	id         bigserial PRIMARY KEY,
	alert_id   bigint NOT NULL,	-- alerts.id; no foreign key, so that deleting or
					-- truncating alerts stays as it was (orphans are skipped and
					-- deleted by the notifier's hourly clean-up)
	event      text NOT NULL CHECK (event IN ('open', 'escalate', 'resolve')),
	created_at timestamptz NOT NULL DEFAULT now(),
	done_at    timestamptz,
	suppressed boolean NOT NULL DEFAULT false,
	delivered  text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX notify_outbox_pending_idx ON notify_outbox (id) WHERE done_at IS NULL;
CREATE INDEX notify_outbox_alert_idx ON notify_outbox (alert_id);
CREATE INDEX notify_outbox_done_idx ON notify_outbox (done_at) WHERE done_at IS NOT NULL;

CREATE FUNCTION vmscope_alert_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		IF NEW.state <> 'open' THEN
			RETURN NULL;
		END IF;
		INSERT INTO notify_outbox (alert_id, event) VALUES (NEW.id, 'open');
	ELSIF OLD.state = 'open' AND NEW.state = 'resolved' THEN
		INSERT INTO notify_outbox (alert_id, event) VALUES (NEW.id, 'resolve');
	ELSIF OLD.state = 'open' AND NEW.state = 'open' AND OLD.severity = 'warning'
	      AND NEW.severity = 'critical' THEN
		INSERT INTO notify_outbox (alert_id, event) VALUES (NEW.id, 'escalate');
	ELSE
		RETURN NULL;
	END IF;
	-- delivered at commit, to the notifier's LISTEN
	PERFORM pg_notify('vmscope_notify', '');
	RETURN NULL;
END $$;

CREATE TRIGGER alerts_notify AFTER INSERT OR UPDATE OF state, severity ON alerts
	FOR EACH ROW EXECUTE FUNCTION vmscope_alert_event();
