-- 095_host_keys.sql - one host key for every per-host table, and no
-- triggers: the schema a distributed PostgreSQL (Citus) can split by host
-- (docs/scaling.md §3), the same on one PostgreSQL. Every table about a
-- host carries host_id (integer, hosts.id) and has it in its primary key;
-- what rows triggers used to derive, the server writes in the same
-- transaction (alerts' outbox rows, the overrides version).

-- Host names: hosts.name cannot be UNIQUE once hosts is split by id, so the
-- name -> id mapping is a small table of its own (a reference table on
-- Citus: on every node, read locally, written only when a host is new).
-- Ids come from a sequence the server calls: two servers adding the same
-- new host race on host_names' primary key, and one id wins.
CREATE TABLE host_names (
	name text PRIMARY KEY,
	id integer NOT NULL UNIQUE
);
INSERT INTO host_names (name, id) SELECT name, id FROM hosts;
CREATE SEQUENCE host_ids AS integer;
SELECT setval('host_ids', greatest((SELECT max(id) FROM hosts), 0) + 1, false);
ALTER TABLE hosts ALTER COLUMN id DROP IDENTITY IF EXISTS;
ALTER TABLE hosts DROP CONSTRAINT hosts_name_key;

-- Metric names and cgroups: bigint identities.
ALTER TABLE metric_names ALTER COLUMN id TYPE bigint;
ALTER SEQUENCE metric_names_id_seq AS bigint;

-- cgroups: the primary key includes the host, and cgroup_rollup_5m (keyed
-- by cgroup id only) gets the host id, so that both split by host.
ALTER TABLE cgroup_rollup_5m DROP CONSTRAINT cgroup_rollup_5m_cgroup_id_fkey;
ALTER TABLE cgroup_rollup_5m DROP CONSTRAINT cgroup_rollup_5m_pkey;
ALTER TABLE cgroups DROP CONSTRAINT cgroups_pkey;
ALTER TABLE cgroups ALTER COLUMN id TYPE bigint;
ALTER SEQUENCE cgroups_id_seq AS bigint;
ALTER TABLE cgroups ADD PRIMARY KEY (host_id, id);
ALTER TABLE cgroup_rollup_5m ADD COLUMN host_id integer, ALTER COLUMN cgroup_id TYPE bigint;
UPDATE cgroup_rollup_5m r SET host_id = g.host_id FROM cgroups g WHERE g.id = r.cgroup_id;
DELETE FROM cgroup_rollup_5m WHERE host_id IS NULL;
ALTER TABLE cgroup_rollup_5m ALTER COLUMN host_id SET NOT NULL;
ALTER TABLE cgroup_rollup_5m ADD PRIMARY KEY (host_id, cgroup_id, b5);
ALTER TABLE cgroup_rollup_5m ADD FOREIGN KEY (host_id, cgroup_id) REFERENCES cgroups (host_id, id) ON DELETE CASCADE;

-- alerts: by host id. host_id 0 is reserved for the fleet's alerts (host
-- '', 092_fleet_alerts.sql): no host row has it, and on Citus they share
-- one shard like a host's alerts; an alert whose host is gone keeps its
-- name and gets 0 too.
ALTER TABLE alerts ADD COLUMN host_id integer;
UPDATE alerts a SET host_id = coalesce((SELECT n.id FROM host_names n WHERE n.name = a.host), 0);
ALTER TABLE alerts ALTER COLUMN host_id SET NOT NULL,
	ADD CONSTRAINT alerts_fleet_host_id_check CHECK (host <> '' OR host_id = 0);
DROP TRIGGER alerts_notify ON alerts;
DROP FUNCTION vmscope_alert_event();
ALTER TABLE alerts DROP CONSTRAINT alerts_pkey;
ALTER TABLE alerts ADD PRIMARY KEY (host_id, id);
DROP INDEX alerts_host_started_idx;
CREATE INDEX alerts_host_started_idx ON alerts (host_id, started_at DESC, id DESC);
DROP INDEX alerts_one_open_idx;
CREATE UNIQUE INDEX alerts_one_open_idx ON alerts (host_id, (coalesce(cgroup, '')), kind, (coalesce(subject, '')))
  WHERE state = 'open';

-- The notification outbox, by the host of its alert.
ALTER TABLE notify_outbox ADD COLUMN host_id integer;
UPDATE notify_outbox o SET host_id = coalesce((SELECT a.host_id FROM alerts a WHERE a.id = o.alert_id), 0);
ALTER TABLE notify_outbox ALTER COLUMN host_id SET NOT NULL;
ALTER TABLE notify_outbox DROP CONSTRAINT notify_outbox_pkey;
ALTER TABLE notify_outbox ADD PRIMARY KEY (host_id, id);
DROP INDEX notify_outbox_alert_idx;
CREATE INDEX notify_outbox_alert_idx ON notify_outbox (host_id, alert_id);

-- The overrides version moves with the server's own writes.
DROP TRIGGER detector_overrides_bump ON detector_overrides;
DROP FUNCTION detector_overrides_bump();

-- The per-host tables that had no foreign key to hosts get one (forgetting
-- a host deletes them explicitly anyway).
ALTER TABLE detector_state ADD FOREIGN KEY (host_id) REFERENCES hosts (id) ON DELETE CASCADE;
