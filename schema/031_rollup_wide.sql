-- 031_rollup_wide.sql - slots 10..32 of rollup_5m: every host-level metric
-- the host view charts and every figure GET /api/v1/compare needs, so a
-- host's 7-day view reads no raw rows (server/store/store_rollup.c lists what
-- each slot holds on each kernel). Same layout as 020_rollup.sql: nI
-- (non-null values), sI (their sum), loI / hiI (min / max). Adding columns
-- with constant defaults rewrites no partition; buckets written before
-- this migration have nI = 0 for the new slots and the series endpoint
-- reads raw rows for them (store_series.c).
ALTER TABLE rollup_5m
	ADD COLUMN n10 smallint NOT NULL DEFAULT 0, ADD COLUMN s10 double precision NOT NULL DEFAULT 0, ADD COLUMN lo10 real, ADD COLUMN hi10 real,
	ADD COLUMN n11 smallint NOT NULL DEFAULT 0, ADD COLUMN s11 double precision NOT NULL DEFAULT 0, ADD COLUMN lo11 real, ADD COLUMN hi11 real,
	ADD COLUMN n12 smallint NOT NULL DEFAULT 0, ADD COLUMN s12 double precision NOT NULL DEFAULT 0, ADD COLUMN lo12 real, ADD COLUMN hi12 real,
	ADD COLUMN n13 smallint NOT NULL DEFAULT 0, ADD COLUMN s13 double precision NOT NULL DEFAULT 0, ADD COLUMN lo13 real, ADD COLUMN hi13 real,
	ADD COLUMN n14 smallint NOT NULL DEFAULT 0, ADD COLUMN s14 double precision NOT NULL DEFAULT 0, ADD COLUMN lo14 real, ADD COLUMN hi14 real,
	ADD COLUMN n15 smallint NOT NULL DEFAULT 0, ADD COLUMN s15 double precision NOT NULL DEFAULT 0, ADD COLUMN lo15 real, ADD COLUMN hi15 real,
	ADD COLUMN n16 smallint NOT NULL DEFAULT 0, ADD COLUMN s16 double precision NOT NULL DEFAULT 0, ADD COLUMN lo16 real, ADD COLUMN hi16 real,
	ADD COLUMN n17 smallint NOT NULL DEFAULT 0, ADD COLUMN s17 double precision NOT NULL DEFAULT 0, ADD COLUMN lo17 real, ADD COLUMN hi17 real,
	ADD COLUMN n18 smallint NOT NULL DEFAULT 0, ADD COLUMN s18 double precision NOT NULL DEFAULT 0, ADD COLUMN lo18 real, ADD COLUMN hi18 real,
	ADD COLUMN n19 smallint NOT NULL DEFAULT 0, ADD COLUMN s19 double precision NOT NULL DEFAULT 0, ADD COLUMN lo19 real, ADD COLUMN hi19 real,
	ADD COLUMN n20 smallint NOT NULL DEFAULT 0, ADD COLUMN s20 double precision NOT NULL DEFAULT 0, ADD COLUMN lo20 real, ADD COLUMN hi20 real,
	ADD COLUMN n21 smallint NOT NULL DEFAULT 0, ADD COLUMN s21 double precision NOT NULL DEFAULT 0, ADD COLUMN lo21 real, ADD COLUMN hi21 real,
	ADD COLUMN n22 smallint NOT NULL DEFAULT 0, ADD COLUMN s22 double precision NOT NULL DEFAULT 0, ADD COLUMN lo22 real, ADD COLUMN hi22 real,
	ADD COLUMN n23 smallint NOT NULL DEFAULT 0, ADD COLUMN s23 double precision NOT NULL DEFAULT 0, ADD COLUMN lo23 real, ADD COLUMN hi23 real,
	ADD COLUMN n24 smallint NOT NULL DEFAULT 0, ADD COLUMN s24 double precision NOT NULL DEFAULT 0, ADD COLUMN lo24 real, ADD COLUMN hi24 real,
	ADD COLUMN n25 smallint NOT NULL DEFAULT 0, ADD COLUMN s25 double precision NOT NULL DEFAULT 0, ADD COLUMN lo25 real, ADD COLUMN hi25 real,
	ADD COLUMN n26 smallint NOT NULL DEFAULT 0, ADD COLUMN s26 double precision NOT NULL DEFAULT 0, ADD COLUMN lo26 real, ADD COLUMN hi26 real,
	ADD COLUMN n27 smallint NOT NULL DEFAULT 0, ADD COLUMN s27 double precision NOT NULL DEFAULT 0, ADD COLUMN lo27 real, ADD COLUMN hi27 real,
	ADD COLUMN n28 smallint NOT NULL DEFAULT 0, ADD COLUMN s28 double precision NOT NULL DEFAULT 0, ADD COLUMN lo28 real, ADD COLUMN hi28 real,
	ADD COLUMN n29 smallint NOT NULL DEFAULT 0, ADD COLUMN s29 double precision NOT NULL DEFAULT 0, ADD COLUMN lo29 real, ADD COLUMN hi29 real,
	ADD COLUMN n30 smallint NOT NULL DEFAULT 0, ADD COLUMN s30 double precision NOT NULL DEFAULT 0, ADD COLUMN lo30 real, ADD COLUMN hi30 real,
	ADD COLUMN n31 smallint NOT NULL DEFAULT 0, ADD COLUMN s31 double precision NOT NULL DEFAULT 0, ADD COLUMN lo31 real, ADD COLUMN hi31 real,
	ADD COLUMN n32 smallint NOT NULL DEFAULT 0, ADD COLUMN s32 double precision NOT NULL DEFAULT 0, ADD COLUMN lo32 real, ADD COLUMN hi32 real;
