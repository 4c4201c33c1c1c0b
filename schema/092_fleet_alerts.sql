-- 092_fleet_alerts.sql - alerts about the fleet rather than one host (the
-- kernel-regression watch: server/regress/, docs/detectors.md "Kernel
-- regressions"), silences that can match them, and the watch's own state.
--
-- A fleet alert has host '' (never a host's name: those are 1 to 253
-- characters) and names what it is about in subject (for kernel_regression
-- the kernel release found worse); host and cgroup alerts have subject
-- NULL. host stays NOT NULL so that every row keeps a host key, which a
-- table distributed by host needs: the fleet's alerts share the key ''.
ALTER TABLE alerts ADD COLUMN subject text;
DROP INDEX alerts_one_open_idx;
-- At most one open alert per (host, cgroup, kind, subject).
CREATE UNIQUE INDEX alerts_one_open_idx ON alerts (host, (coalesce(cgroup, '')), kind, (coalesce(subject, '')))
  WHERE state = 'open';

-- A silence without host matches every host's alerts and the fleet's; one
-- with a subject only alerts with that subject. A silence must name a host
-- or a kind (nothing silences everything), and a cgroup only with its host.
ALTER TABLE silences ALTER COLUMN host DROP NOT NULL;
ALTER TABLE silences DROP CONSTRAINT silences_host_check;
ALTER TABLE silences ADD CONSTRAINT silences_host_check CHECK (host IS NULL OR length(host) BETWEEN 1 AND 253),
	ADD COLUMN subject text CHECK (subject IS NULL OR length(subject) BETWEEN 1 AND 256),
	ADD CONSTRAINT silences_matcher_check CHECK (host IS NOT NULL OR kind IS NOT NULL),
	ADD CONSTRAINT silences_cgroup_host_check CHECK (cgroup IS NULL OR host IS NOT NULL);

-- The kernel-regression watch (one row): the baseline release an operator
-- pinned (NULL: the release with the most host-hours over 7 days), and the
-- report of the last run, written by whichever server ran it (one at a
-- time, under an advisory lock); last_run_at paces the runs across servers.
CREATE TABLE regression_watch (
	id          smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
	baseline    text CHECK (baseline IS NULL OR length(baseline) BETWEEN 1 AND 256),
	pinned_at   timestamptz,
	pinned_by   text NOT NULL DEFAULT '' CHECK (length(pinned_by) <= 200),
	last_run_at timestamptz,
	last_report jsonb
);
INSERT INTO regression_watch (id) VALUES (1);
