-- 096_citus.sql - the schema split by host on a distributed PostgreSQL
-- (Citus, docs/scaling.md §3). vmscope_distribute() does nothing where the
-- citus extension is not created. Where it is (the operator created it in
-- the database and added the workers), it makes every per-host table a
-- distributed table by host_id, colocated with hosts (one host's rows of
-- every table on one shard, so that a host's statements run on one node),
-- and the small, rarely written tables reference tables (a copy on every
-- node). Tables already placed are left as they are, so it runs at every
-- server start (migrate.c) and picks up an install moved onto Citus after
-- its migrations ran; existing rows are copied to the shards then.
CREATE FUNCTION vmscope_distribute() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	n integer := 0;
	t text;
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
		RETURN 0;
	END IF;
	FOREACH t IN ARRAY ARRAY['metric_names', 'host_names', 'ingest_tokens', 'silences',
				 'detector_overrides', 'detector_overrides_version', 'regression_watch'] LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = t::regclass) THEN
			PERFORM create_reference_table(t);
			n := n + 1;
		END IF;
	END LOOP;
	IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'hosts'::regclass) THEN
		PERFORM create_distributed_table('hosts', 'id');
		n := n + 1;
	END IF;
	-- referenced tables before the tables whose foreign keys point at them
	FOREACH t IN ARRAY ARRAY['cgroups', 'cgroup_rollup_5m', 'cgroup_rollup_done', 'boots', 'host_meta',
				 'detector_state', 'samples', 'rollup_5m', 'alerts', 'notify_outbox'] LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = t::regclass) THEN
			PERFORM create_distributed_table(t, 'host_id', colocate_with => 'hosts');
			n := n + 1;
		END IF;
	END LOOP;
	-- the rows copied to the shards leave the coordinator's own tables
	-- (once every table is placed: none refers to a local one any more)
	IF n > 0 THEN
		FOREACH t IN ARRAY ARRAY['notify_outbox', 'alerts', 'rollup_5m', 'samples', 'detector_state',
					 'host_meta', 'boots', 'cgroup_rollup_done', 'cgroup_rollup_5m', 'cgroups',
					 'hosts', 'metric_names', 'host_names', 'ingest_tokens', 'silences',
					 'detector_overrides', 'detector_overrides_version', 'regression_watch'] LOOP
			PERFORM truncate_local_data_after_distributing_table(t);
		END LOOP;
	END IF;
	RETURN n;
END
$$;
