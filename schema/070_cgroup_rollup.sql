-- 070_cgroup_rollup.sql - 5-minute rollups of the cgroup metrics the
-- dashboard charts, written by a background job off the ingest path
-- (server/store/store_cgrollup.c, docs/design.md "Cgroup rollups").
--
-- One row per (cgroup, closed 5-minute bucket). b5 is the bucket number
-- (bucket start ms / 300000: an int4 next to the int4 cgroup id leaves no
-- alignment padding). v packs, for each of the 24 slots of cgroll_metric[]
-- the cgroup reported in the bucket, the count of non-null values and
-- their avg / min / max as float4, with constant and all-zero slots
-- shortened (store_cgrollup.c describes the bytes). Partitioned by month
-- of b5 so that retention (--rollup-retention-days) drops whole partitions.
CREATE TABLE cgroup_rollup_5m (
	cgroup_id integer NOT NULL REFERENCES cgroups (id) ON DELETE CASCADE,
	b5 integer NOT NULL,
	v bytea NOT NULL,
	PRIMARY KEY (cgroup_id, b5)
) PARTITION BY RANGE (b5);

-- Per host, the first bucket not rolled up yet: every bucket before
-- next_b5 is in cgroup_rollup_5m for all the host's cgroups, none after.
-- The job locks a host's row (FOR UPDATE SKIP LOCKED) in the transaction
-- that writes the host's rollups and moves next_b5, so two servers or a
-- restart never roll a bucket up twice; the series endpoint reads raw rows
-- from next_b5 on.
CREATE TABLE cgroup_rollup_done (
	host_id integer PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
	next_b5 integer NOT NULL
);
