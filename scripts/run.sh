#!/usr/bin/env bash
# run.sh - `make run`: a PostgreSQL cluster of the project's own (unless
# VMSCOPE_DB names a database), the server on 127.0.0.1:8080 with a generated
# ingest token and admin token, and an agent on this machine posting to it.
# Ctrl-C or SIGTERM stops all of it; nothing is left running or listening,
# and the exit status is 0 (an orderly stop is not an error: make prints
# none). A server or agent that exits on its own stops the rest and gives 1.
# VMSCOPE_VAR moves var/ (tests), VMSCOPE_BIN picks the binaries (default
# bin/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VAR=${VMSCOPE_VAR:-$ROOT/var}
mkdir -p "$VAR"

LISTEN=${VMSCOPE_LISTEN:-127.0.0.1:8080}
PG_PORT=${VMSCOPE_PG_PORT:-54329}
INTERVAL=${VMSCOPE_INTERVAL:-10}
pids=()
started_pg=0

say() { echo "vmscope: $*" >&2; }

cleanup() {
	# make forwards a SIGTERM it got to us: a second signal during the cleanup
	# must not cut it short (the database would be left running)
	trap '' INT TERM
	trap - EXIT
	say "stopping"
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -TERM "${pids[$i]}" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if [ "$started_pg" = 1 ]; then
		scripts/pg.sh stop "$VAR/pg"
	fi
	say "stopped"
}
trap cleanup EXIT
# Ctrl-C reaches make, this script, the server and the agent at once; make
# waits for this script and reports a non-zero status as "Error N"
trap 'exit 0' INT TERM

if ss -Hltn "sport = :${LISTEN##*:}" 2>/dev/null | grep -q .; then
	say "cannot listen on $LISTEN: the port is in use (set VMSCOPE_LISTEN=ADDR:PORT)"
	exit 1
fi

if [ -z "${VMSCOPE_DB:-}" ]; then
	if ss -Hltn "sport = :$PG_PORT" 2>/dev/null | grep -q . &&
	   ! scripts/pg.sh status "$VAR/pg" >/dev/null 2>&1; then
		PG_PORT=$(scripts/freeport.sh)
	fi
	VMSCOPE_DB=$(scripts/pg.sh start "$VAR/pg" "$PG_PORT")
	started_pg=1
	say "database: $VMSCOPE_DB (cluster in $(scripts/pg.sh dir "$VAR/pg"))"
fi
export VMSCOPE_DB

# new_token FILE WHAT: 24 random bytes as hex, readable by this user only
new_token() {
	if [ ! -s "$1" ]; then
		(umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$1")
		say "generated $2 in $1"
	fi
}
TOKEN_FILE="$VAR/ingest.token"
ADMIN_FILE="$VAR/admin.token"
new_token "$TOKEN_FILE" "an ingest token"
new_token "$ADMIN_FILE" "an admin token"

"${VMSCOPE_BIN:-bin}"/vmscope-server --listen "$LISTEN" --tokens-file "$TOKEN_FILE" \
	--admin-token-file "$ADMIN_FILE" &
pids+=($!)
for _ in $(seq 100); do
	curl -fsS "http://$LISTEN/healthz" >/dev/null 2>&1 && break
	kill -0 "${pids[0]}" 2>/dev/null || { say "the server exited"; exit 1; }
	sleep 0.2
done

mkdir -p "$VAR/spool"
"${VMSCOPE_BIN:-bin}"/vmscope-agent --server "http://$LISTEN" --token-file "$TOKEN_FILE" \
	--interval "$INTERVAL" --spool "$VAR/spool" &
pids+=($!)

say "dashboard: http://$LISTEN/"
say "API:       curl http://$LISTEN/api/v1/hosts"
say "changes (silences, overrides, forgetting a host) need the admin token:"
say "           ADMIN_TOKEN=\$(cat $ADMIN_FILE)"
say "           curl -H \"Authorization: Bearer \$ADMIN_TOKEN\" -H 'Content-Type: application/json' \\"
say "                -d '{\"host\":\"$(hostname)\",\"duration_s\":3600}' http://$LISTEN/api/v1/silences"
say "press Ctrl-C to stop"
wait -n "${pids[@]}" || true
say "a process exited; shutting down"
exit 1
