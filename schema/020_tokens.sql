-- 020_tokens.sql - ingest tokens managed with `vmscope-server token add /
-- revoke / list` (server/auth/token_cli.c). Only the SHA-256 of a token is kept
-- (64 lowercase hex digits): the table holds nothing an agent could post
-- with. A revoked token keeps its row (and its name) for the record;
-- running servers re-read the unrevoked ones every few seconds.
CREATE TABLE ingest_tokens (
	name       text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
	sha256     text NOT NULL UNIQUE CHECK (sha256 ~ '^[0-9a-f]{64}$'),
	created_at timestamptz NOT NULL DEFAULT now(),
	revoked_at timestamptz
);
