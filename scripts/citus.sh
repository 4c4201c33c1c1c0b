#!/usr/bin/env bash
# citus.sh - a local Citus cluster for tests and benchmarks: a coordinator
# and two workers, each a private cluster of scripts/pg.sh on a free
# loopback port, with the citus extension in their database "vmscope"
# and the workers added to the coordinator. One machine standing in for
# several (docs/scaling.md §3).
#
#   scripts/citus.sh installed        exit 0 when Citus is installed into PostgreSQL 15
#   scripts/citus.sh how              how to install it (printed by tests that need it)
#   scripts/citus.sh start DIR        start (creating) the three nodes; prints the
#                                     coordinator's conninfo; DIR/ports lists the ports
#                                     (coordinator first)
#   scripts/citus.sh attach DIR DB    make database DB of the coordinator a Citus one:
#                                     DB created on the workers, the extension in it on
#                                     every node, the workers added (docs/scaling.md §3:
#                                     moving a single-node install onto Citus)
#   scripts/citus.sh stop DIR         stop the three nodes
#   scripts/citus.sh node DIR N [DB]  conninfo of node N (0 coordinator, 1 and 2 workers),
#                                     of its database DB (default vmscope)
set -euo pipefail
cd "$(dirname "$0")/.."
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}

installed() { [ -f "$("$PGBIN/pg_config" --pkglibdir)/citus.so" ]; }

how() {
	cat <<'TXT'
Citus is not installed into this machine's PostgreSQL 15. Install it from the
Citus packages (https://docs.citusdata.com/en/stable/installation/multi_node_debian.html):
  curl https://install.citusdata.com/community/deb.sh | sudo bash
  sudo apt-get install -y postgresql-15-citus-13.2
or, where ../shared/citus/install.sh exists (CI, developer machines), run it
while no PostgreSQL cluster runs: it builds Citus 13.2.2 into PostgreSQL 15.
TXT
}

node_ci() { # node_ci PORT [DB]
	echo "host=127.0.0.1 port=$1 user=postgres dbname=${2:-vmscope}"
}

# attach DIR DB: the extension in DB on every node (DB created where missing),
# the coordinator's own address and the workers recorded in DB
attach() {
	local dir=$1 db=$2 i
	read -r -a ports <"$dir/ports"
	for i in 0 1 2; do
		psql "$(node_ci "${ports[$i]}" postgres)" -qtAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 ||
			psql "$(node_ci "${ports[$i]}" postgres)" -qtAc "CREATE DATABASE $db" >/dev/null
		psql "$(node_ci "${ports[$i]}" "$db")" -qtAc "CREATE EXTENSION IF NOT EXISTS citus" >/dev/null
	done
	local coord
	coord=$(node_ci "${ports[0]}" "$db")
	psql "$coord" -qtAc "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[0]})" >/dev/null
	for i in 1 2; do
		psql "$coord" -qtAc "SELECT 1 FROM pg_dist_node WHERE nodeport = ${ports[$i]}" | grep -q 1 ||
			psql "$coord" -qtAc "SELECT citus_add_node('127.0.0.1', ${ports[$i]})" >/dev/null
	done
}

case "${1:-}" in
installed) installed ;;
how) how ;;
start)
	dir=${2:?DIR}
	installed || { how >&2; exit 3; }
	mkdir -p "$dir"
	if [ -s "$dir/ports" ]; then
		read -r -a ports <"$dir/ports"
	else
		ports=()
		for _ in 0 1 2; do
			p=$(scripts/freeport.sh)
			while [[ " ${ports[*]} " == *" $p "* ]]; do p=$(scripts/freeport.sh); done
			ports+=("$p")
		done
		echo "${ports[*]}" >"$dir/ports"
	fi
	for i in 0 1 2; do
		VMSCOPE_PG_OPTS="-c shared_preload_libraries=citus -c max_prepared_transactions=100 \
			-c citus.log_distributed_deadlock_detection=on ${VMSCOPE_PG_OPTS:-}" \
			scripts/pg.sh start "$dir/node$i" "${ports[$i]}" >/dev/null
	done
	attach "$dir" vmscope
	node_ci "${ports[0]}"
	;;
attach)
	attach "${2:?DIR}" "${3:?DB}"
	node_ci "$(cut -d' ' -f1 "$2/ports")" "$3"
	;;
stop)
	dir=${2:?DIR}
	for i in 0 1 2; do scripts/pg.sh stop "$dir/node$i"; done
	;;
node)
	dir=${2:?DIR}
	read -r -a ports <"$dir/ports"
	node_ci "${ports[${3:?N}]}" "${4:-vmscope}"
	;;
*)
	echo "usage: $0 installed | how | start DIR | attach DIR DB | stop DIR | node DIR N" >&2
	exit 2
	;;
esac
