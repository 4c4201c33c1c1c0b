#!/usr/bin/env bash
# test_e2e_lib.sh - what tests/e2e/_lib.sh promises the tests built on it:
#  - a test that fails prints the tail of the log of the server it started
#    (and of any other log it keeps in E2E_DIR) before that directory is
#    deleted; a test that passes prints none;
#  - the server's command line names one database (`--db` with a single
#    dbname=), whatever VMSCOPE_TEST_DB names;
#  - scripts/pg.sh dbname, which builds that conninfo, replaces the database
#    of key=value and URI conninfos.
# The failing and passing tests are small scripts written here and run as
# children, so this test's own counters stay its own.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }
TMP=$(mktemp -d /tmp/vmscope-e2elib.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# child OUTCOME: starts a server through _lib.sh, writes an agent-style log
# beside it, then passes or fails one check; prints E2E_DIR and the server's
# command line on stdout
cat >"$TMP/child.sh" <<'EOF'
#!/usr/bin/env bash
. "$E2E_LIB"
e2e_init e2elib
e2e_server_start
echo "dir $E2E_DIR"
echo "cmdline $(tr '\0' ' ' </proc/$E2E_PID/cmdline)"
echo "agent: marker line of the agent's log" >"$E2E_DIR/agent-1.log"
req GET /healthz
if [ "$1" = fail ]; then check_status 599 "a deliberately failing check"; else check_status 200 "healthz"; fi
e2e_done
EOF
chmod +x "$TMP/child.sh"

for outcome in fail pass; do
	E2E_LIB="$ROOT/tests/e2e/_lib.sh" "$TMP/child.sh" "$outcome" >"$TMP/$outcome.out" 2>"$TMP/$outcome.err"
	rc=$?
	dir=$(sed -n 's/^dir //p' "$TMP/$outcome.out")
	[ -n "$dir" ] && [ ! -e "$dir" ] && ok || bad "$outcome: the temporary directory ${dir:-?} was not removed"
	if [ "$outcome" = fail ]; then
		[ "$rc" = 1 ] && ok || bad "fail: exit status $rc, expected 1"
		grep -q -- '---- last 40 lines of server-[0-9]*\.log ----' "$TMP/fail.err" && ok ||
			bad "fail: no server log header on stderr"
		# the server's own lines: its start and the request the check made
		grep -q 'listening on 127.0.0.1:' "$TMP/fail.err" && ok || bad "fail: the server's start line is not printed"
		grep -q 'GET /healthz 200' "$TMP/fail.err" && ok || bad "fail: the server's request log is not printed"
		grep -q "marker line of the agent's log" "$TMP/fail.err" && ok || bad "fail: the other log in E2E_DIR is not printed"
	else
		[ "$rc" = 0 ] && ok || bad "pass: exit status $rc, expected 0: $(tail -5 "$TMP/pass.err")"
		grep -q -- '---- last 40 lines' "$TMP/pass.err" && bad "pass: a passing test printed log tails" || ok
	fi
	cmd=$(sed -n 's/^cmdline //p' "$TMP/$outcome.out")
	n=$(grep -o 'dbname=' <<<"$cmd" | wc -l)
	[ "$n" = 1 ] && ok || bad "$outcome: the server's command line names dbname= $n times: $cmd"
	grep -q "dbname=vmscope_e2e_e2elib_" <<<"$cmd" && ok || bad "$outcome: the server's --db is not the test's database: $cmd"
done

# scripts/pg.sh dbname CONNINFO NAME
while IFS='|' read -r in want; do
	got=$(scripts/pg.sh dbname "$in" newdb)
	[ "$got" = "$want" ] && ok || bad "pg.sh dbname '$in': '$got', expected '$want'"
done <<'EOF'
host=127.0.0.1 port=5432 user=postgres dbname=vmscope|host=127.0.0.1 port=5432 user=postgres dbname=newdb
dbname=a host=h dbname = 'x y\' z' port=1|host=h port=1 dbname=newdb
host=h|host=h dbname=newdb
postgresql://u@h:5432/vmscope?sslmode=disable|postgresql://u@h:5432/newdb?sslmode=disable
postgres://h|postgres://h/newdb
EOF

echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
