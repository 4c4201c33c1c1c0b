-- 100_rollup_all_reclaim.sql - slots 33..36 of rollup_5m: pgscan_anon,
-- pgscan_file, pgsteal_anon, pgsteal_file (5.8+), every reclaim including
-- the reclaim of a cgroup at its own limit, which pgscan_kswapd/_direct
-- never count; the host view charts them beside kswapd and direct
-- reclaim. Same layout as 020_rollup.sql; buckets written before this
-- migration have nI = 0 and the series endpoint reads raw rows for them.
ALTER TABLE rollup_5m
	ADD COLUMN n33 smallint NOT NULL DEFAULT 0, ADD COLUMN s33 double precision NOT NULL DEFAULT 0, ADD COLUMN lo33 real, ADD COLUMN hi33 real,
	ADD COLUMN n34 smallint NOT NULL DEFAULT 0, ADD COLUMN s34 double precision NOT NULL DEFAULT 0, ADD COLUMN lo34 real, ADD COLUMN hi34 real,
	ADD COLUMN n35 smallint NOT NULL DEFAULT 0, ADD COLUMN s35 double precision NOT NULL DEFAULT 0, ADD COLUMN lo35 real, ADD COLUMN hi35 real,
	ADD COLUMN n36 smallint NOT NULL DEFAULT 0, ADD COLUMN s36 double precision NOT NULL DEFAULT 0, ADD COLUMN lo36 real, ADD COLUMN hi36 real;
