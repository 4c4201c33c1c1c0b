#!/usr/bin/env bash
# deb.sh - `make deb`: vmscope-agent_VERSION_ARCH.deb and
# vmscope-server_VERSION_ARCH.deb (and their -dbgsym debug symbols) in DIST (dist/),
# built by dpkg-buildpackage with debian/ from a copy of the sources, then
# checked by lintian (any error fails the build).
#
# The copy (under build/, removed afterwards) holds what git tracks plus the
# files it does not ignore, as they are in the work tree, and web/vendor
# (made by `make deps`): the package build never sees a developer's build/,
# bin/ or node_modules/, and its `debian/rules clean` cannot touch them.
# debian/changelog is written into the copy from VERSION, so the file VERSION
# (or VERSION=... in the environment) stays the one place the version is set.
# The build's output goes to DIST/vmscope_VERSION_ARCH.build.
#
# DEB_WORKDIR=DIR keeps the build tree in DIR instead: a later run with the
# same DIR refreshes the sources (keeping their times) and builds on the
# previous objects (dpkg-buildpackage --no-pre-clean after dh_clean), so a
# second build of the same sources at another version recompiles only what
# prints the version. DEB_LINT=0 skips lintian.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
V=${VERSION:-$(cat VERSION)}
DIST=${DIST:-dist}
ARCH=$(dpkg --print-architecture)
MAINT=$(sed -n 's/^Maintainer: //p' debian/control)

[ -s web/vendor/uPlot.min.esm.js ] || { echo "deb: web/vendor/ is missing: run make deps" >&2; exit 1; }
mkdir -p build "$DIST"
DIST=$(cd "$DIST" && pwd)
if [ -n "${DEB_WORKDIR:-}" ]; then
	mkdir -p "$DEB_WORKDIR"
	stage=$(cd "$DEB_WORKDIR" && pwd)
	src="$stage/vmscope"
	mkdir -p "$src"
	# the sources are copied afresh; the previous build's objects stay
	find "$src" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
	rm -f "$stage"/*.deb "$stage"/*.buildinfo "$stage"/*.changes
	[ -d "$src/build/pkg" ] && noclean=--no-pre-clean
else
	stage=$(mktemp -d "$ROOT/build/deb.XXXXXX")
	trap 'rm -rf "$stage"' EXIT
	src="$stage/vmscope-$V"
	mkdir "$src"
fi

# the sources: git's view when this is a checkout, else the tree less outputs
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard
else
	find . \( -path ./build -o -path ./bin -o -path ./dist -o -path ./node_modules \
		-o -path ./.tools -o -path ./tests/out -o -path ./.git \) -prune -o -type f -printf '%P\0'
fi | { cat; printf '%s\0' web/vendor/*; } |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf - | tar -xf - -C "$src"

# A reproducible date: the last commit's, unless SOURCE_DATE_EPOCH says otherwise.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
cat >"$src/debian/changelog" <<EOF
vmscope ($V) unstable; urgency=medium

  * vmscope $V.

 -- $MAINT  $(LC_ALL=C date -u -R -d "@$epoch")
EOF

log="$DIST/vmscope_${V}_${ARCH}.build"
echo "deb: building vmscope $V for $ARCH (log: $log)" >&2
# with --no-pre-clean, dh_clean still drops the previous run's stamps and
# package trees (dh would take the build as done), but not build/pkg. The
# calling make's MAKEFLAGS stay out: its variables (SANITIZE=..., OUT=...)
# must not reach debian/rules' make.
if ! (cd "$src" && unset MAKEFLAGS MFLAGS MAKELEVEL && { [ -z "${noclean:-}" ] || dh_clean; } &&
      SOURCE_DATE_EPOCH=$epoch dpkg-buildpackage -b -us -uc -Jauto ${noclean:-}) >"$log" 2>&1; then
	tail -40 "$log" >&2
	echo "deb: dpkg-buildpackage failed (log: $log)" >&2
	exit 1
fi
debs=("$stage/vmscope-agent_${V}_${ARCH}.deb" "$stage/vmscope-server_${V}_${ARCH}.deb")
cp "${debs[@]}" "$DIST/"
cp "$stage"/vmscope-*-dbgsym_"${V}_${ARCH}".deb "$DIST/" 2>/dev/null || true

# lintian: errors fail, warnings and the rest are printed (its advice
# against running as root is not about the packages: dropped)
if [ "${DEB_LINT:-1}" != 0 ]; then
	rc=0
	lint=$(lintian --fail-on error --tag-display-limit 0 "${debs[@]}" 2>&1) || rc=$?
	lint=$(grep -v '^running with root privileges' <<<"$lint" || true)
	[ -z "$lint" ] || echo "$lint" >&2
	[ "$rc" = 0 ] || { echo "deb: lintian reports errors" >&2; exit 1; }
fi
for f in "${debs[@]}"; do
	echo "$DIST/$(basename "$f")"
done
