#!/usr/bin/env bash
# pg.sh - a PostgreSQL cluster of the project's own, for `make run`, `make test`
# and the benchmarks. Never touches Debian's own cluster on 5432.
#
#   scripts/pg.sh start DIR PORT   create (if new) and start a cluster, print its conninfo
#   scripts/pg.sh stop DIR         stop it (fast shutdown), idempotent
#   scripts/pg.sh status DIR       exit 0 when it runs
#   scripts/pg.sh dir DIR          print where the cluster really lives (see below)
#   scripts/pg.sh standby DIR PORT PRIMARY_PORT
#                                  a streaming standby of the cluster on PRIMARY_PORT
#                                  (pg_basebackup -R), started on PORT; prints its conninfo
#   VMSCOPE_PG_OPTS="-c name=value ..." scripts/pg.sh start DIR PORT
#                                  more server settings (scripts/citus.sh preloads Citus)
#   scripts/pg.sh dbname CONNINFO NAME
#                                  print CONNINFO (key=value words or a URI) naming
#                                  database NAME instead of its own, with one dbname
#
# PostgreSQL refuses to run as root: as root the cluster belongs to Debian's
# `postgres` user. When that user cannot reach DIR (a checkout under /root is
# mode 0700) the cluster lives under /var/tmp/vmscope-pg-<hash of DIR> instead,
# and we say so. Authentication is `trust`, but only on a private unix socket
# directory and on 127.0.0.1 at a port of our own.
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}

as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# Where the cluster for DIR lives: DIR itself when the running user can use it.
real_dir() {
	local want=$1
	mkdir -p "$want"
	want=$(cd "$want" && pwd)
	if [ "$(id -u)" != 0 ]; then
		echo "$want"; return
	fi
	chown postgres: "$want" 2>/dev/null || true
	if runuser -u postgres -- test -w "$want" -a -x "$want" 2>/dev/null; then
		echo "$want"
	else
		local h
		h=$(printf '%s' "$want" | md5sum | cut -c1-10)
		local alt="/var/tmp/vmscope-pg-$h"
		mkdir -p "$alt"
		chown postgres: "$alt"
		chmod 0700 "$alt"
		echo "$alt"
	fi
}

# CONNINFO with database NAME: every dbname= word (quoted or not) of a
# key=value conninfo removed and one appended; a URI's path replaced.
with_dbname() {
	local ci=$1 name=$2
	case "$ci" in
	postgres://* | postgresql://*)
		local rest=${ci#*://} query=
		case "$rest" in *\?*) query="?${rest#*\?}"; rest=${rest%%\?*} ;; esac
		printf '%s://%s/%s%s\n' "${ci%%://*}" "${rest%%/*}" "$name" "$query"
		;;
	*)
		ci=$(printf '%s' "$ci" | sed -E "s/(^|[[:space:]]+)dbname[[:space:]]*=[[:space:]]*('([^'\\\\]|\\\\.)*'|[^[:space:]]*)//g; s/^[[:space:]]+//")
		printf '%s%sdbname=%s\n' "$ci" "${ci:+ }" "$name"
		;;
	esac
}

cmd=${1:-}
case "$cmd" in
dbname)
	with_dbname "${2:?conninfo}" "${3:?database name}"
	;;
dir)
	real_dir "$2"
	;;
start)
	dir=$(real_dir "$2")
	port=$3
	if [ "$dir" != "$(cd "$2" && pwd)" ]; then
		echo "pg.sh: user postgres cannot reach $2; keeping the cluster in $dir" >&2
	fi
	data="$dir/data"
	sock="$dir/sock"
	as_pg mkdir -p "$sock"
	if [ ! -f "$data/PG_VERSION" ]; then
		as_pg "$PGBIN/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
			{ cat "$dir/initdb.log" >&2; exit 1; }
		cat <<CONF | as_pg tee -a "$data/postgresql.conf" >/dev/null
# vmscope: a private cluster
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$sock'
max_connections = 300
shared_buffers = 256MB
# WAL (docs/scaling.md §1, "WAL"): at 2,000 20-cgroup samples/s ingest writes
# ~11 MB of WAL a second; with the default max_wal_size (1 GB) that forced a
# checkpoint every ~90 s, and after each one the first change of every page
# is logged as a whole page. Checkpoints every 15 minutes, and full-page
# images compressed with lz4 (Debian's PostgreSQL 15 is built with it).
wal_compression = lz4
max_wal_size = 8GB
checkpoint_timeout = 15min
synchronous_commit = on
fsync = ${VMSCOPE_PG_FSYNC:-on}
log_min_messages = warning
CONF
	fi
	# the port may differ between runs: pass it on the command line
	if ! as_pg "$PGBIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		as_pg "$PGBIN/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
			-o "-p $port -k $sock -c listen_addresses=127.0.0.1 ${VMSCOPE_PG_OPTS:-}" start >/dev/null ||
			{ tail -20 "$dir/postgres.log" >&2; exit 1; }
	fi
	for _ in $(seq 50); do
		as_pg "$PGBIN/pg_isready" -q -h "$sock" -p "$port" && break
		sleep 0.2
	done
	as_pg psql -q -h "$sock" -p "$port" -U postgres -d postgres -tAc \
		"SELECT 1 FROM pg_database WHERE datname='vmscope'" | grep -q 1 ||
		as_pg psql -q -h "$sock" -p "$port" -U postgres -d postgres -c "CREATE DATABASE vmscope" >/dev/null
	echo "host=127.0.0.1 port=$port user=postgres dbname=vmscope"
	;;
standby)
	dir=$(real_dir "$2")
	port=$3
	data="$dir/data"
	sock="$dir/sock"
	as_pg mkdir -p "$sock"
	if [ ! -f "$data/PG_VERSION" ]; then
		as_pg "$PGBIN/pg_basebackup" -D "$data" -R -X stream -h 127.0.0.1 -p "$4" -U postgres \
			>"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
	fi
	if ! as_pg "$PGBIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		as_pg "$PGBIN/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
			-o "-p $port -k $sock -c listen_addresses=127.0.0.1 -c hot_standby=on" start >/dev/null ||
			{ tail -20 "$dir/postgres.log" >&2; exit 1; }
	fi
	echo "host=127.0.0.1 port=$port user=postgres dbname=vmscope"
	;;
status)
	dir=$(real_dir "$2")
	[ -f "$dir/data/PG_VERSION" ] && as_pg "$PGBIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
	;;
stop)
	dir=$(real_dir "$2")
	if [ -f "$dir/data/PG_VERSION" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	;;
*)
	echo "usage: $0 start DIR PORT | standby DIR PORT PRIMARY_PORT | stop DIR | status DIR | dir DIR | dbname CONNINFO NAME" >&2
	exit 2
	;;
esac
