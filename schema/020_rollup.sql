-- 020_rollup.sql - 5-minute rollups of the metrics the fleet view and long
-- series ranges need (server/store/store_rollup.c, docs/design.md "Rollups").
-- One row per (host, cgroup or 0, 5-minute bucket); slot i of the fixed
-- metric list in store_rollup.c has nI (non-null values), sI (their sum),
-- loI / hiI (min / max), of the same values GET .../series returns (rates
-- for counters, gauges scaled). Maintained on ingest in the sample's
-- transaction; partitioned by month of bucket_ms so that retention
-- (--rollup-retention-days) drops whole partitions.
CREATE TABLE rollup_5m (
	host_id integer NOT NULL,
	cgroup_id integer NOT NULL DEFAULT 0,
	bucket_ms bigint NOT NULL,
	n integer NOT NULL,	-- samples that fell into the bucket
	n0 smallint NOT NULL DEFAULT 0, s0 double precision NOT NULL DEFAULT 0, lo0 real, hi0 real,
	n1 smallint NOT NULL DEFAULT 0, s1 double precision NOT NULL DEFAULT 0, lo1 real, hi1 real,
	n2 smallint NOT NULL DEFAULT 0, s2 double precision NOT NULL DEFAULT 0, lo2 real, hi2 real,
	n3 smallint NOT NULL DEFAULT 0, s3 double precision NOT NULL DEFAULT 0, lo3 real, hi3 real,
	n4 smallint NOT NULL DEFAULT 0, s4 double precision NOT NULL DEFAULT 0, lo4 real, hi4 real,
	n5 smallint NOT NULL DEFAULT 0, s5 double precision NOT NULL DEFAULT 0, lo5 real, hi5 real,
	n6 smallint NOT NULL DEFAULT 0, s6 double precision NOT NULL DEFAULT 0, lo6 real, hi6 real,
	n7 smallint NOT NULL DEFAULT 0, s7 double precision NOT NULL DEFAULT 0, lo7 real, hi7 real,
	n8 smallint NOT NULL DEFAULT 0, s8 double precision NOT NULL DEFAULT 0, lo8 real, hi8 real,
	n9 smallint NOT NULL DEFAULT 0, s9 double precision NOT NULL DEFAULT 0, lo9 real, hi9 real,
	PRIMARY KEY (host_id, cgroup_id, bucket_ms)
) PARTITION BY RANGE (bucket_ms);

-- The fleet view reads one time range for every host.
CREATE INDEX rollup_5m_bucket_idx ON rollup_5m (bucket_ms);
