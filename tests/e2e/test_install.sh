#!/usr/bin/env bash
# test_install.sh - `make install` (deploy/README.md): into a DESTDIR, the
# tree has the programs, every migration, the dashboard, the units (their
# paths following PREFIX, journald logging with a SyslogIdentifier) and the
# configuration examples with the right modes; `systemd-analyze verify`
# accepts the units; the installed server, given no --schema or --web,
# finds both beside itself, migrates a fresh database and serves the
# dashboard; the installed agent, with the installed agent.conf, posts to
# it and its samples are stored.
. "$(dirname "$0")/_lib.sh"
e2e_init install
ROOT="$E2E_DIR/root"
PFX=/opt/vmscope	# not the units' /usr/local: their paths must follow PREFIX

make -s -C "$E2E_ROOT" install DESTDIR="$ROOT" PREFIX="$PFX" >"$E2E_DIR/install.log" 2>&1
check_eq "$?" 0 "make install DESTDIR PREFIX=$PFX $(tail -2 "$E2E_DIR/install.log")"
for f in bin/vmscope-server bin/vmscope-agent bin/vmscope-replay; do
	check "$f installed, executable" test -x "$ROOT$PFX/$f"
done
check_eq "$(ls "$ROOT$PFX/share/vmscope/schema" | wc -l)" "$(ls "$E2E_ROOT"/schema/*.sql | wc -l)" "every migration installed"
check "the dashboard installed" test -s "$ROOT$PFX/share/vmscope/web/index.html"
check "the docs installed" test -s "$ROOT$PFX/share/doc/vmscope/README.md"
check_eq "$(stat -c %a "$ROOT/etc/vmscope/server.env")" 640 "server.env 0640 (read by systemd)"
check_eq "$(stat -c %a "$ROOT/etc/vmscope/agent.conf")" 644 "agent.conf 0644 (read by the agent's dynamic user)"
for u in vmscope-server vmscope-agent; do
	unit="$ROOT/lib/systemd/system/$u.service"
	check "$u.service installed" test -s "$unit"
	check "$u.service logs to journald as $u" grep -qx "SyslogIdentifier=$u" "$unit"
	check "$u.service: StandardError=journal" grep -qx "StandardError=journal" "$unit"
	check "$u.service runs $PFX/bin/$u" grep -q "^ExecStart=$PFX/bin/$u " "$unit"
	# verify wants the ExecStart binary where the unit says: a copy pointing into DESTDIR
	mkdir -p "$E2E_DIR/verify"
	sed "s|$PFX/|$ROOT$PFX/|g" "$unit" >"$E2E_DIR/verify/$u.service"
done
out=$(systemd-analyze verify "$E2E_DIR/verify/vmscope-server.service" "$E2E_DIR/verify/vmscope-agent.service" 2>&1)
check_eq "$?:$out" "0:" "systemd-analyze verify: no complaint"

# --- the installed server and agent ---
port=$("$E2E_ROOT/scripts/freeport.sh")
URL="http://127.0.0.1:$port"
TOK=install-token-$RANDOM$RANDOM
(umask 077; printf '# one ingest token\n%s\n' "$TOK" >"$E2E_DIR/tokens"; openssl rand -hex 16 >"$E2E_DIR/admin.token")
VMSCOPE_LISTEN=127.0.0.1:$port VMSCOPE_DB="$E2E_DB" "$ROOT$PFX/bin/vmscope-server" \
	--tokens-file "$E2E_DIR/tokens" --admin-token-file "$E2E_DIR/admin.token" >"$E2E_DIR/server.log" 2>&1 &
E2E_PID=$!
E2E_PIDS+=("$E2E_PID")
E2E_LOG="$E2E_DIR/server.log"
E2E_URL=$URL
for _ in $(seq 300); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")" = 200 ] && break
	sleep 0.1
done
req GET /healthz
check_status 200 "the installed server migrated a fresh database and is healthy"
check "it found the dashboard beside itself" grep -q "web $ROOT$PFX/bin/../share/vmscope/web" "$E2E_DIR/server.log"
req GET /
check_status 200 "it serves the dashboard"
check_contains "<html" "an HTML page"

sed -i "s|^# *server = .*|server = $URL|" "$ROOT/etc/vmscope/agent.conf"
printf '%s\n' "$TOK" >"$E2E_DIR/agent.token"
for i in 1 2; do
	"$ROOT$PFX/bin/vmscope-agent" --config "$ROOT/etc/vmscope/agent.conf" --token-file "$E2E_DIR/agent.token" \
		--spool "$E2E_DIR/spool" --host installed-01 --once >"$E2E_DIR/agent.log" 2>&1
	check_eq "$?" 0 "the installed agent posts sample $i ($(tail -1 "$E2E_DIR/agent.log"))"
	sleep 1.1
done
req GET /api/v1/hosts/installed-01
check_status 200 "the host is known"
check_jq '.samples == 2' "both samples stored"

e2e_server_stop
e2e_done
