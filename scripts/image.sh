#!/usr/bin/env bash
# image.sh - `make image`: the agent's OCI image, from scratch, built without
# a registry or a container daemon, from the agent `make deb` packaged:
#   DIST/vmscope-agent.oci                  OCI layout, tag VERSION
#   DIST/vmscope-agent_VERSION_ARCH.docker.tar
#                                           the same image as a docker-archive
#                                           (docker load, ctr import), named
#                                           vmscope-agent:VERSION
# One layer, written here with tar (no root needed) and added with umoci:
#   /usr/bin/vmscope-agent        the package's binary, byte for byte
#   the shared libraries it loads, each at the path ldd names (so the dynamic
#   linker finds them without an ld.so.cache), symbolic links resolved
#   /etc/ssl/certs/ca-certificates.crt   libcurl's CA bundle, for https servers
#   /host/proc, /host/sys         mount points for the node's /proc and /sys
#   /var/lib/vmscope/spool        the spool, owned by the agent's user
# Config: user 65532:65532 (numeric: the image has no /etc/passwd),
# entrypoint the agent, default arguments one sample of the host mounted at
# /host on standard output (`docker run -v /proc:/host/proc:ro -v
# /sys:/host/sys:ro IMAGE`); the DaemonSet (deploy/k8s) gives its own.
set -euo pipefail
cd "$(dirname "$0")/.."
V=${VERSION:-$(cat VERSION)}
DIST=${DIST:-dist}
ARCH=$(dpkg --print-architecture)
UID_GID=65532:65532
deb="$DIST/vmscope-agent_${V}_${ARCH}.deb"
oci="$DIST/vmscope-agent.oci"
tarball="$DIST/vmscope-agent_${V}_${ARCH}.docker.tar"
[ -s "$deb" ] || { echo "image: $deb is missing (make deb)" >&2; exit 1; }

case "$ARCH" in	# Debian's architecture names -> OCI's (Go's)
	amd64 | arm64 | s390x | riscv64) oarch=$ARCH ;;
	i386) oarch=386 ;;
	armhf | armel) oarch=arm ;;
	ppc64el) oarch=ppc64le ;;
	*) echo "image: no OCI name for architecture $ARCH" >&2; exit 1 ;;
esac

mkdir -p build
work=$(mktemp -d "$PWD/build/image.XXXXXX")
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/pkg"
agent="$work/pkg/usr/bin/vmscope-agent"
root="$work/root"
install -D -m 0755 "$agent" "$root/usr/bin/vmscope-agent"

# the libraries, as the dynamic linker resolves them on this machine
libs=$(ldd "$agent" | awk '
	/not found/ { print "MISSING " $1; next }
	$2 == "=>" && $3 ~ /^\// { print $3; next }
	$1 ~ /^\// { print $1 }')
if grep -q '^MISSING' <<<"$libs"; then
	echo "image: the agent needs libraries this machine lacks:" >&2
	grep '^MISSING' <<<"$libs" >&2
	exit 1
fi
for l in $libs; do
	install -D -m "$(stat -L -c %a "$l")" "$(readlink -f "$l")" "$root$l"
done
[ -s /etc/ssl/certs/ca-certificates.crt ] &&
	install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
install -d -m 0555 "$root/host/proc" "$root/host/sys"
install -d -m 0755 "$root/var/lib/vmscope"

# The layer: sorted, one timestamp, everything root's but the spool (tar's
# --owner applies to a whole call, so the spool is appended by a second one).
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
tarflags=(--format=ustar --sort=name --mtime="@$epoch" --numeric-owner)
(cd "$root" && tar "${tarflags[@]}" --owner=0 --group=0 -cf "$work/layer.tar" .)
install -d -m 0700 "$work/spool/var/lib/vmscope/spool"
(cd "$work/spool" && tar "${tarflags[@]}" --owner="${UID_GID%:*}" --group="${UID_GID#*:}" \
	--no-recursion -rf "$work/layer.tar" ./var/lib/vmscope/spool)

rm -rf "$oci"
umoci init --layout "$oci"
umoci new --image "$oci:$V"
umoci raw add-layer --image "$oci:$V" --history.created "$created" \
	--history.created_by "scripts/image.sh: vmscope-agent $V and the libraries it links" "$work/layer.tar"
umoci config --image "$oci:$V" --no-history --created "$created" --os linux --architecture "$oarch" \
	--config.user "$UID_GID" --config.workingdir / \
	--config.entrypoint /usr/bin/vmscope-agent \
	--config.cmd --once --config.cmd --stdout --config.cmd --root=/host \
	--config.volume /host/proc --config.volume /host/sys --config.volume /var/lib/vmscope/spool \
	--config.label org.opencontainers.image.title=vmscope-agent \
	--config.label org.opencontainers.image.version="$V" \
	--config.label org.opencontainers.image.description="vmscope memory-reclaim sampling agent" \
	--manifest.annotation org.opencontainers.image.version="$V"
umoci gc --layout "$oci"

rm -f "$tarball"
skopeo copy --quiet "oci:$oci:$V" "docker-archive:$tarball:vmscope-agent:$V"
echo "$oci (tag $V)"
echo "$tarball (vmscope-agent:$V)"
