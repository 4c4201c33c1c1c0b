-- 093_token_scopes.sql - what a table token may do besides posting
-- (server/auth/token_scope.h, `vmscope-server token add NAME --hosts P
-- --new-hosts-per-hour N`): hosts, a comma list of shell-style patterns of
-- the host names it may post for (NULL: any host); new_hosts_per_hour, how
-- many hosts the server has never seen it may bring in per hour (NULL:
-- unlimited; counted per server process).
ALTER TABLE ingest_tokens
	ADD COLUMN hosts text CHECK (length(hosts) <= 1024 AND
				     hosts ~ '^[A-Za-z0-9._*?-]{1,253}(,[A-Za-z0-9._*?-]{1,253})*$'),
	ADD COLUMN new_hosts_per_hour integer CHECK (new_hosts_per_hour BETWEEN 1 AND 1000000);
