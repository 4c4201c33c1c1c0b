#!/usr/bin/env bash
# test.sh - `make test`: every test against the sanitizer build (ASan+UBSan)
# and a throwaway PostgreSQL on a free port, stopped at the end.
#
# Runs unit-test binaries (bin/san/tests/test_*) and every executable
# tests/*.sh and tests/e2e/*.sh (names starting with "_" are helpers, not
# tests), TEST_JOBS (2) at a time. Each gets in its environment:
#   BIN=bin/san SERVER AGENT REPLAY   the binaries to test
#   VMSCOPE_TEST_DB                   conninfo of the throwaway cluster
#   PG_DIR PG_PORT                    to stop/start it (scripts/pg.sh)
# TEST_ONLY (an extended regex) runs only the programs whose name matches,
# e.g. TEST_ONLY='test_detect|e2e/test_ingest' scripts/test.sh
# Prints one line per test program and "N passed, N failed" at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

export BIN=${BIN:-bin/san}
export SERVER="$ROOT/$BIN/vmscope-server" AGENT="$ROOT/$BIN/vmscope-agent" REPLAY="$ROOT/$BIN/vmscope-replay"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

OUT="$ROOT/tests/out"
rm -rf "$OUT"
mkdir -p "$OUT"
chmod 0755 "$OUT"

export PG_DIR="$OUT/pg"
export PG_PORT=$(scripts/freeport.sh)
# where the cluster really lives: /var/tmp/vmscope-pg-* when user postgres
# cannot reach $OUT (a clone in a 0700 temp dir); removed after the run
PG_REAL=$(scripts/pg.sh dir "$PG_DIR")
cleanup() {
	scripts/pg.sh stop "$PG_REAL"
	[ "$PG_REAL" = "$(cd "$PG_DIR" 2>/dev/null && pwd)" ] || rm -rf "$PG_REAL"
}
trap cleanup EXIT
if ! VMSCOPE_TEST_DB=$(VMSCOPE_PG_FSYNC=off scripts/pg.sh start "$PG_DIR" "$PG_PORT"); then
	echo "test: could not start PostgreSQL" >&2
	exit 1
fi
export VMSCOPE_TEST_DB

# Test programs run TEST_JOBS at a time (default 2): most of their time is
# spent waiting on servers, databases and sleeps, not on the CPU. Each has
# its own log; a failure prints its tail.
TEST_JOBS=${TEST_JOBS:-2}
RES="$OUT/results"
mkdir -p "$RES"
run_one() {
	local name=$1; shift
	local slug
	slug=$(echo "$name" | tr '/' '_')
	local log="$OUT/$slug.log" t0=$SECONDS rc=0
	"$@" >"$log" 2>&1 || rc=$?
	echo "$rc $((SECONDS - t0)) $name" >"$RES/$slug"
	if [ "$rc" = 0 ]; then
		printf 'ok    %-40s %3ds  %s\n' "$name" $((SECONDS - t0)) "$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)"
	else
		# its failed checks, then the end of its output (where a failing
		# test prints the tails of its servers' and agents' logs)
		printf 'FAIL  %-40s %3ds\n%s\n      ...\n%s\n' "$name" $((SECONDS - t0)) \
			"$(grep -E '^FAIL' "$log" | head -20 | sed 's/^/      /')" "$(tail -60 "$log" | sed 's/^/      /')"
	fi
}
throttle() {
	while [ "$(jobs -rp | wc -l)" -ge "$TEST_JOBS" ]; do wait -n || true; done
}

selected() { [ -z "${TEST_ONLY:-}" ] || [[ $1 =~ $TEST_ONLY ]]; }

t_all=$SECONDS
for t in "$BIN"/tests/test_*; do
	[ -x "$t" ] || continue
	selected "unit/$(basename "$t")" || continue
	throttle
	run_one "unit/$(basename "$t")" "$t" &
done
for t in tests/*.sh tests/e2e/*.sh; do
	[ -x "$t" ] || continue
	case "$(basename "$t")" in _*) continue ;; esac
	selected "$t" || continue
	throttle
	run_one "$t" "$t" &
done
wait

passed=0
failed=0
failures=()
for r in "$RES"/*; do
	read -r rc _ name <"$r"
	if [ "$rc" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
done
echo
echo "test programs: $passed passed, $failed failed in $((SECONDS - t_all)) s"
[ "$failed" -eq 0 ] || { echo "failed: ${failures[*]}"; exit 1; }
