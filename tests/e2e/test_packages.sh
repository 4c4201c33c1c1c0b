#!/usr/bin/env bash
# test_packages.sh - `make deb` and `make image` (deploy/README.md), as root:
#
# 1. make image (so make deb): the two packages, lintian without errors;
#    Depends computed from the binaries (the packages owning the agent's
#    NEEDED libraries, none of the server's); /etc/vmscope/* conffiles.
# 2. The image: config (numeric non-root user, the DaemonSet's volumes),
#    the agent byte for byte the package's, the libraries exactly those ldd
#    names; unpacked with umoci, its default process runs as the image's user
#    in a chroot of the root filesystem with this machine's /proc and /sys
#    read-only at /host, and prints one sample (validated by the packaged
#    server's ingest in 3).
# 3. In a throwaway overlay of / (upper layer in a tmpfs, in this test's own
#    mount namespace): dpkg -i both packages; files, conffiles, users, units
#    enabled the Debian way, systemd-analyze verify, the units' start
#    conditions; the installed server (as its user) takes the image's sample
#    and the installed agent's; a second build with a higher version
#    installed over them keeps an edited conffile; dpkg -r, then dpkg -P,
#    and nothing is left: the overlay's upper layer holds only dpkg's records.
#
# The machine itself is never written (its dpkg database, users, /etc, /usr):
# everything installed lives in the overlay and goes with the namespace, so
# the test can run beside the others and on a developer's machine.
if [ -z "${VMSCOPE_PKGTEST_NS:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "test_packages: needs root (dpkg -i, mounts, chroot), as make test runs in CI" >&2
		echo "0 passed, 1 failed"
		exit 1
	fi
	VMSCOPE_PKGTEST_NS=1 exec unshare --mount --propagation private -- "$0" "$@"
fi
. "$(dirname "$0")/_lib.sh"
e2e_init packages

V=$(cat "$E2E_ROOT/VERSION")
V2="$V+pkgtest"
ARCH=$(dpkg --print-architecture)
V1DIR=$E2E_DIR/v1
V2DIR=$E2E_DIR/v2
OV=$(mktemp -d /tmp/vmscope-pkgtest-ov.XXXXXX)
R=$OV/root
pkg_cleanup() {
	# unmount before anything is removed: rm must never walk into / or /dev
	umount -R "$R" 2>/dev/null
	umount "$OV" 2>/dev/null
	rmdir "$OV" 2>/dev/null
	e2e_cleanup
}
trap pkg_cleanup EXIT

# --- 1. the packages ---
t0=$SECONDS
# no -dbgsym packages: not looked at here, and dwz and xz cost seconds
export DEB_BUILD_OPTIONS=noautodbgsym
DEB_WORKDIR=$E2E_DIR/debbuild make -s -C "$E2E_ROOT" image DIST="$V1DIR" >"$E2E_DIR/make1.log" 2>&1
check_eq "$?" 0 "make image (make deb, lintian without errors): $(tail -5 "$E2E_DIR/make1.log")"
echo "make image: $((SECONDS - t0)) s"
t0=$SECONDS
# the same sources at a higher version, built on the first build's objects
DEB_WORKDIR=$E2E_DIR/debbuild DEB_LINT=0 make -s -C "$E2E_ROOT" deb VERSION="$V2" DIST="$V2DIR" >"$E2E_DIR/make2.log" 2>&1
check_eq "$?" 0 "make deb VERSION=$V2: $(tail -5 "$E2E_DIR/make2.log")"
echo "make deb (second version): $((SECONDS - t0)) s"
AG=$V1DIR/vmscope-agent_${V}_${ARCH}.deb
SV=$V1DIR/vmscope-server_${V}_${ARCH}.deb
AG2=$V2DIR/vmscope-agent_${V2}_${ARCH}.deb
SV2=$V2DIR/vmscope-server_${V2}_${ARCH}.deb
for f in "$AG" "$SV" "$AG2" "$SV2"; do
	check "$(basename "$f") built" test -s "$f"
done
check "lintian printed no error" bash -c "! grep -E '^E: ' '$E2E_DIR/make1.log'"
check_eq "$(dpkg-deb -f "$AG" Version)" "$V" "agent package version = VERSION"
check_eq "$(dpkg-deb -f "$SV2" Version)" "$V2" "second build's version"

# Depends: dpkg-shlibdeps' answer is the packages that own the libraries the
# binary names in NEEDED (plus adduser for the maintainer scripts)
deps_of() { dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort -u; }
needed_pkgs() {	# packages owning the NEEDED libraries of the binary in a .deb
	local d bin lib path
	d=$(mktemp -d "$E2E_DIR/x.XXXXXX")
	dpkg-deb -x "$1" "$d"
	for bin in "$d"/usr/bin/*; do
		for lib in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			path=$(ldd "$bin" | awk -v l="$lib" '$1 == l { print $3 }')
			# dpkg knows a file by the path its package ships (merged /usr:
			# /lib/... or /usr/lib/..., the soname's link or its target)
			for p in "$path" "$(readlink -f "$path")" "/usr$path" "${path#/usr}"; do
				dpkg -S "$p" 2>/dev/null && break
			done | head -1 | cut -d: -f1
		done
	done | sort -u
}
agent_deps=$(deps_of "$AG")
check_eq "$(echo "$agent_deps" | grep -vx adduser | tr '\n' ' ')" "$(needed_pkgs "$AG" | tr '\n' ' ')" \
	"agent Depends: the packages of its NEEDED libraries"
check_eq "$(deps_of "$SV" | grep -vx adduser | tr '\n' ' ')" "$(needed_pkgs "$SV" | tr '\n' ' ')" \
	"server Depends: the packages of its and vmscope-replay's NEEDED libraries"
check "agent Depends: libcurl4 and zlib1g" bash -c "grep -qx libcurl4 <<<'$agent_deps' && grep -qx zlib1g <<<'$agent_deps'"
check "agent Depends: none of the server's libraries" \
	bash -c "! grep -Ex 'libpq5|libmicrohttpd12|libjansson4|libyajl2|libnettle8' <<<'$agent_deps'"
check "server Depends: libpq5, libmicrohttpd12" bash -c "deps=\$(dpkg-deb -f '$SV' Depends); [[ \$deps == *libpq5* && \$deps == *libmicrohttpd12* ]]"
check_eq "$(dpkg-deb -f "$AG" Description | head -1)" "memory-reclaim sampling agent for vmscope" "agent description"
ctl=$(mktemp -d "$E2E_DIR/ctl.XXXXXX")
dpkg-deb -e "$AG" "$ctl/agent"
dpkg-deb -e "$SV" "$ctl/server"
check_eq "$(cat "$ctl/agent/conffiles")" "/etc/vmscope/agent.conf" "agent conffiles"
check_eq "$(cat "$ctl/server/conffiles")" "/etc/vmscope/server.env" "server conffiles"
check "agent postinst enables the unit with deb-systemd-helper" grep -q "deb-systemd-helper enable 'vmscope-agent.service'" "$ctl/agent/postinst"
check "server postinst enables the unit with deb-systemd-helper" grep -q "deb-systemd-helper enable 'vmscope-server.service'" "$ctl/server/postinst"

# --- 2. the image ---
OCI=$V1DIR/vmscope-agent.oci
TARBALL=$V1DIR/vmscope-agent_${V}_${ARCH}.docker.tar
cfg=$(skopeo inspect --config "oci:$OCI:$V" 2>&1)
check_eq "$(jq -r .config.User <<<"$cfg")" "65532:65532" "image user: numeric, not root"
check_eq "$(jq -c .config.Entrypoint <<<"$cfg")" '["/usr/bin/vmscope-agent"]' "image entrypoint"
check_eq "$(jq -c '.config.Volumes | keys' <<<"$cfg")" '["/host/proc","/host/sys","/var/lib/vmscope/spool"]' "image volumes: the DaemonSet's mounts"
check_eq "$(jq -r .config.Labels[\"org.opencontainers.image.version\"] <<<"$cfg")" "$V" "image version label"
check_eq "$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$OCI/index.json")" "$V" "OCI layout tag = VERSION"
check_eq "$(tar -xOf "$TARBALL" manifest.json | jq -r '.[0].RepoTags[0]')" "docker.io/library/vmscope-agent:$V" "docker-archive named vmscope-agent:VERSION"
ds_image=$(sed -n 's/^ *image: *\([^ ]*\).*/\1/p' "$E2E_ROOT/deploy/k8s/vmscope-agent-daemonset.yaml")
check_eq "$ds_image" "vmscope-agent:$V" "the DaemonSet names this image"
check "the DaemonSet runs the image's agent" grep -q 'command: \["/usr/bin/vmscope-agent"\]' "$E2E_ROOT/deploy/k8s/vmscope-agent-daemonset.yaml"

BUNDLE=$E2E_DIR/bundle
umoci unpack --image "$OCI:$V" "$BUNDLE" >"$E2E_DIR/unpack.log" 2>&1
check_eq "$?" 0 "umoci unpack: $(tail -2 "$E2E_DIR/unpack.log")"
RF=$BUNDLE/rootfs
dpkg-deb --fsys-tarfile "$AG" | tar -xO ./usr/bin/vmscope-agent >"$E2E_DIR/agent.deb.bin"
check "the image's agent is the package's" cmp "$RF/usr/bin/vmscope-agent" "$E2E_DIR/agent.deb.bin"
want_libs=$(ldd "$RF/usr/bin/vmscope-agent" | awk '$2 == "=>" { print $3; next } $1 ~ /^\// { print $1 }' | sort)
have_libs=$(cd "$RF" && find . -name '*.so*' | sed 's/^\.//' | sort)
check_eq "$have_libs" "$want_libs" "the image holds exactly the libraries ldd names"
check_eq "$(cd "$RF" && find . -type f ! -name '*.so*' | sort | tr '\n' ' ')" \
	"./etc/ssl/certs/ca-certificates.crt ./usr/bin/vmscope-agent " "and besides them only the agent and the CA bundle"
check_eq "$(stat -c %u:%g "$RF/var/lib/vmscope/spool")" "65532:65532" "the spool is the image user's"

# the image's default process, as the runtime config umoci wrote says: its
# user, its arguments, the host's /proc and /sys read-only under /host
uid=$(jq -r .process.user.uid "$BUNDLE/config.json")
gid=$(jq -r .process.user.gid "$BUNDLE/config.json")
mapfile -t args < <(jq -r '.process.args[]' "$BUNDLE/config.json")
check_eq "$uid:$gid ${args[*]}" "65532:65532 /usr/bin/vmscope-agent --once --stdout --root=/host" "runtime config: user and process"
IMG_HOST=image-$$
unshare --mount --propagation private -- sh -c '
	rf=$1 spec=$2; shift 2
	mount --bind /proc "$rf/host/proc" && mount -o remount,bind,ro "$rf/host/proc" &&
	mount --rbind /sys "$rf/host/sys" && mount -o remount,bind,ro "$rf/host/sys" &&
	exec chroot --userspec="$spec" "$rf" "$@"' sh "$RF" "$uid:$gid" "${args[@]}" --host "$IMG_HOST" \
	>"$E2E_DIR/image-sample.json" 2>"$E2E_DIR/image-agent.err"
check_eq "$?" 0 "the image's agent ran: $(tail -3 "$E2E_DIR/image-agent.err")"
check_eq "$(jq -r .host "$E2E_DIR/image-sample.json" 2>&1)" "$IMG_HOST" "one sample on stdout"
check "it read this machine's /proc (vmstat, meminfo, PSI)" \
	jq -e '.vmstat.pgfault > 0 and .meminfo.MemTotal > 0 and (.psi.memory.some.total >= 0)' "$E2E_DIR/image-sample.json"
check "and its memory cgroups under /host/sys" jq -e '.cgroups | length > 0' "$E2E_DIR/image-sample.json"
check "vmscope-replay parses it" bash -c "'${REPLAY:-$E2E_ROOT/bin/san/vmscope-replay}' '$E2E_DIR/image-sample.json' >/dev/null"

# --- 3. install, upgrade, remove, purge in an overlay of / ---
mount -t tmpfs -o mode=0700 tmpfs "$OV" &&
	mkdir "$OV/upper" "$OV/work" "$R" &&
	mount -t overlay overlay -o "lowerdir=/,upperdir=$OV/upper,workdir=$OV/work" "$R" &&
	mount --rbind /proc "$R/proc" && mount --rbind /sys "$R/sys" && mount --rbind /dev "$R/dev"
check_eq "$?" 0 "an overlay of / to install into"
# A clean environment in the overlay's root. /run there is the root file
# system's empty directory, never a running systemd's, so deb-systemd-invoke
# starts nothing; policy-rc.d says so too, as in any chroot.
in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d" && chmod 0755 "$R/usr/sbin/policy-rc.d"
# a machine with vmscope installed from packages or make install: start clean
for p in vmscope-agent vmscope-server; do
	dpkg-query -W "$p" >/dev/null 2>&1 && in_root dpkg --purge "$p" >/dev/null 2>&1
done
rm -rf "$R/etc/vmscope" "$R/var/lib/vmscope" "$R/var/lib/private/vmscope"
for u in vmscope vmscope-agent; do
	in_root getent passwd "$u" >/dev/null && in_root userdel "$u"
	in_root getent group "$u" >/dev/null && in_root groupdel "$u"
done
# systemd's own directory for DynamicUser= state, there on any systemd machine
install -d -m 0700 "$R/var/lib/private"
# what the overlay holds before the packages: compared with what it holds after the purge
upper_files() {	# every non-directory, and every directory the real / lacks
	(cd "$OV/upper" && find . \( -type d -exec test -d "/{}" \; \) -o -print | sed 's/^\.//' | sort)
}
base=$(upper_files)
mkdir "$E2E_DIR/etc-before"
cp -p "$R"/etc/{passwd,group,shadow,gshadow} "$E2E_DIR/etc-before/"
mkdir -p "$R/tmp/pkgtest-$$"
cp "$AG" "$SV" "$AG2" "$SV2" "$R/tmp/pkgtest-$$/"
P=/tmp/pkgtest-$$

in_root dpkg -i "$P/$(basename "$AG")" "$P/$(basename "$SV")" </dev/null >"$E2E_DIR/install.log" 2>&1
check_eq "$?" 0 "dpkg -i both packages: $(tail -3 "$E2E_DIR/install.log")"
check_eq "$(in_root dpkg-query -W -f='${db:Status-Abbrev}${Version} ' vmscope-agent vmscope-server)" "ii $V ii $V " "both installed"
check "the agent's postinst says how to configure it" grep -q "vmscope-agent is installed but does not run until it is configured" "$E2E_DIR/install.log"
check "the server's postinst says how to configure it" grep -q "vmscope-server is installed but does not run until it is configured" "$E2E_DIR/install.log"
for f in /usr/bin/vmscope-agent /usr/bin/vmscope-server /usr/bin/vmscope-replay; do
	check "$f installed" test -x "$R$f"
done
check_eq "$(ls "$R/usr/share/vmscope/schema" | wc -l)" "$(ls "$E2E_ROOT"/schema/*.sql | wc -l)" "every migration installed"
check "the dashboard installed, uPlot with it" test -s "$R/usr/share/vmscope/web/vendor/uPlot.min.esm.js"
check "README.Debian of the agent" grep -q "does not run until it is configured" "$R/usr/share/doc/vmscope-agent/README.Debian"
check "manual pages" test -s "$R/usr/share/man/man1/vmscope-agent.1.gz" -a -s "$R/usr/share/man/man1/vmscope-server.1.gz"
check_eq "$(in_root vmscope-agent --version) / $(in_root vmscope-server --version) / $(in_root vmscope-replay --version)" \
	"vmscope-agent $V / vmscope-server $V / vmscope-replay $V" "--version of the installed programs"
check_eq "$(in_root dpkg-query -W -f='${Conffiles}' vmscope-agent | awk 'NF { print $1 }')" "/etc/vmscope/agent.conf" "agent.conf a conffile"
check_eq "$(stat -c %a "$R/etc/vmscope/server.env")" 640 "server.env 0640"
for u in vmscope vmscope-agent; do
	pw=$(in_root getent passwd "$u")
	check "system user $u created: $pw" bash -c "IFS=: read -r _ _ uid gid _ home shell <<<'$pw' &&
		[ \$uid -lt 1000 ] && [ \$home = /nonexistent ] && [ \$shell = /usr/sbin/nologin ]"
	check "group $u created" in_root getent group "$u"
done
for u in vmscope-agent vmscope-server; do
	check_eq "$(in_root systemctl is-enabled "$u.service" 2>&1)" enabled "$u.service enabled (deb-systemd-helper)"
	check_eq "$(readlink "$R/etc/systemd/system/multi-user.target.wants/$u.service")" "/lib/systemd/system/$u.service" "$u.service wanted by multi-user.target"
	check "$u.service runs /usr/bin/$u as its user" grep -q "^ExecStart=/usr/bin/$u " "$R/lib/systemd/system/$u.service"
done
out=$(in_root systemd-analyze verify /lib/systemd/system/vmscope-agent.service /lib/systemd/system/vmscope-server.service 2>&1)
check_eq "$?:$out" "0:" "systemd-analyze verify: no complaint"
# not started until configured: the units' start conditions fail now
conds() { grep '^Condition' "$R/lib/systemd/system/$1.service"; }
check "vmscope-agent.service is skipped until the token exists" bash -c "! chroot '$R' systemd-analyze condition $(conds vmscope-agent | tr '\n' ' ')"
check "vmscope-server.service is skipped until the tokens exist" bash -c "! chroot '$R' systemd-analyze condition $(conds vmscope-server | tr '\n' ' ')"

# configured as README.Debian says: the conditions hold, the programs run as their users
TOK=pkg-token-$RANDOM$RANDOM
(umask 077; echo "$TOK" >"$R/etc/vmscope/tokens"; echo "admin-$RANDOM$RANDOM" >"$R/etc/vmscope/admin.token"
 echo "$TOK" >"$R/etc/vmscope/agent.token")
check "vmscope-agent.service's conditions hold once configured" chroot "$R" systemd-analyze condition $(conds vmscope-agent)
check "vmscope-server.service's conditions hold once configured" chroot "$R" systemd-analyze condition $(conds vmscope-server)
port=$("$E2E_ROOT/scripts/freeport.sh")
E2E_URL="http://127.0.0.1:$port"
# the credentials systemd would hand over (LoadCredential=): copies the user can read
cred="$R/run/pkgtest-$$"
install -d -m 0755 "$cred"
srv_ids=$(in_root id -u vmscope):$(in_root id -g vmscope)
agt_ids=$(in_root id -u vmscope-agent):$(in_root id -g vmscope-agent)
install -m 0400 -o "${srv_ids%:*}" "$R/etc/vmscope/tokens" "$cred/tokens"
install -m 0400 -o "${agt_ids%:*}" "$R/etc/vmscope/agent.token" "$cred/agent.token"
install -d -m 0700 -o "${agt_ids%:*}" "$cred/spool"
# what the unit leaves in its StateDirectory= (with DynamicUser=,
# /var/lib/private/vmscope and a link to it at /var/lib/vmscope, which only
# the service's own mount namespace can walk): a spool with a record in it
install -d -m 0700 -o "${agt_ids%:*}" -g "${agt_ids#*:}" "$R/var/lib/private/vmscope" "$R/var/lib/private/vmscope/spool"
cp "$E2E_DIR/image-sample.json" "$R/var/lib/private/vmscope/spool/0000000000000001.seg"
chown "$agt_ids" "$R/var/lib/private/vmscope/spool/0000000000000001.seg"
ln -s private/vmscope "$R/var/lib/vmscope"
E2E_LOG="$E2E_DIR/installed-server.log"
chroot "$R" setpriv --reuid "${srv_ids%:*}" --regid "${srv_ids#*:}" --clear-groups \
	/usr/bin/vmscope-server --listen "127.0.0.1:$port" --db "$E2E_DB" --tokens-file "/run/pkgtest-$$/tokens" \
	>"$E2E_LOG" 2>&1 &
E2E_PID=$!
E2E_PIDS+=("$E2E_PID")
for _ in $(seq 300); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$E2E_URL/healthz")" = 200 ] && break
	sleep 0.1
done
req GET /healthz
check_status 200 "the installed server, as user vmscope, migrated a fresh database"
check "it found the installed dashboard" grep -q "web /usr/share/vmscope/web\|web /usr/bin/../share/vmscope/web" "$E2E_LOG"
req GET /
check_status 200 "it serves the dashboard"
req POST /api/v1/samples -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
	--data-binary @"$E2E_DIR/image-sample.json"
check_status 202 "it accepts the sample the image's agent took"
sed -i "s|^# *server = .*|server = $E2E_URL|" "$R/etc/vmscope/agent.conf"
echo "# edited by test_packages" >>"$R/etc/vmscope/agent.conf"
chroot "$R" setpriv --reuid "${agt_ids%:*}" --regid "${agt_ids#*:}" --clear-groups \
	/usr/bin/vmscope-agent --config /etc/vmscope/agent.conf --token-file "/run/pkgtest-$$/agent.token" \
	--spool "/run/pkgtest-$$/spool" --once --host "pkg-agent-$$" >"$E2E_DIR/installed-agent.log" 2>&1
check_eq "$?" 0 "the installed agent, as user vmscope-agent, with the installed agent.conf: $(tail -2 "$E2E_DIR/installed-agent.log")"
req GET /api/v1/hosts
check_jq "[.hosts[] | select(.host == \"$IMG_HOST\" or .host == \"pkg-agent-$$\") | .samples] == [1, 1]" \
	"both samples stored (the image's and the installed agent's)"
e2e_server_stop

# upgrade: a second build with a higher version, the edited conffile kept without a question
in_root dpkg -i "$P/$(basename "$AG2")" "$P/$(basename "$SV2")" </dev/null >"$E2E_DIR/upgrade.log" 2>&1
check_eq "$?" 0 "dpkg -i the second build over the first: $(tail -3 "$E2E_DIR/upgrade.log")"
check_eq "$(in_root dpkg-query -W -f='${db:Status-Abbrev}${Version} ' vmscope-agent vmscope-server)" "ii $V2 ii $V2 " "both upgraded"
check_eq "$(in_root vmscope-agent --version)" "vmscope-agent $V2" "the new agent installed"
check "the edited agent.conf kept" grep -qx "# edited by test_packages" "$R/etc/vmscope/agent.conf"
check "no conffile question asked" bash -c "! grep -qi 'configuration file' '$E2E_DIR/upgrade.log'"
check_eq "$(in_root systemctl is-enabled vmscope-agent.service 2>&1)" enabled "still enabled"
check "the users kept" in_root getent passwd vmscope-agent vmscope

# remove: programs and units go, configuration stays
rm -rf "$cred"
in_root dpkg -r vmscope-agent vmscope-server </dev/null >"$E2E_DIR/remove.log" 2>&1
check_eq "$?" 0 "dpkg -r: $(tail -3 "$E2E_DIR/remove.log")"
check_eq "$(in_root dpkg-query -W -f='${db:Status-Abbrev}' vmscope-agent vmscope-server)" "rc rc " "removed, configuration kept"
check "the programs gone" bash -c "! ls '$R'/usr/bin/vmscope-* 2>/dev/null"
check "the units gone" bash -c "! ls '$R'/lib/systemd/system/vmscope-* 2>/dev/null"
check "the configuration kept" test -s "$R/etc/vmscope/agent.conf" -a -s "$R/etc/vmscope/tokens"

# purge: nothing left but dpkg's own records
in_root dpkg -P vmscope-agent vmscope-server </dev/null >"$E2E_DIR/purge.log" 2>&1
check_eq "$?" 0 "dpkg -P: $(tail -3 "$E2E_DIR/purge.log")"
check_eq "$(in_root dpkg-query -W -f='${db:Status-Abbrev}' vmscope-agent vmscope-server 2>/dev/null)" "" "purged"
check "/etc/vmscope gone" test ! -e "$R/etc/vmscope"
for u in vmscope vmscope-agent; do
	check "user and group $u gone" bash -c "! chroot '$R' getent passwd $u && ! chroot '$R' getent group $u"
done
for f in passwd group shadow gshadow; do
	check "/etc/$f as before" cmp "$E2E_DIR/etc-before/$f" "$R/etc/$f"
done
rm -rf "$R$P" "$R/usr/sbin/policy-rc.d"
# Left behind: what the upper layer gained, less dpkg's records and logs, the
# user database (compared above, with its "-" backups and lock), /run's
# locks of adduser and systemd-analyze (a tmpfs on a real machine), and
# files copied up whose content is still the real one.
left=$(comm -13 <(echo "$base") <(upper_files) |
	grep -Ev '^/var/lib/dpkg/|^/var/log/|^/var/cache/(debconf|man)/|^/etc/(passwd|group|shadow|gshadow)-?$|^/etc/\.pwd\.lock$|^/run/(adduser|systemd/)' |
	while IFS= read -r f; do [ -f "$f" ] && [ -f "$R$f" ] && cmp -s "$f" "$R$f" || echo "$f"; done)
check_eq "$left" "" "nothing else left behind"

e2e_done
