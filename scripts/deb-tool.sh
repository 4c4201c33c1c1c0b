#!/usr/bin/env bash
# deb-tool.sh PACKAGE PATH NAME - one program out of a Debian package, into
# .tools/bin/NAME of this checkout, without installing the package: for
# packages whose postinst adds a user and starts a service we must not run
# (prometheus for promtool, prometheus-node-exporter for the agent's
# footprint comparison). The .deb comes from `apt-get download`, verified
# against the signed archive index like any apt download, and only PATH
# (e.g. ./usr/bin/promtool) is extracted. Prints the program's path.
# Quiet and quick when .tools/bin/NAME is already there.
set -euo pipefail
pkg=${1:?package} path=${2:?path in the package} name=${3:?name}
TOOLS="$(cd "$(dirname "$0")/.." && pwd)/.tools"
if [ ! -x "$TOOLS/bin/$name" ]; then
	echo "deb-tool: fetching $name from Debian's $pkg package into $TOOLS/bin" >&2
	dl=$(mktemp -d)
	trap 'rm -rf "$dl"' EXIT
	# apt drops privileges to _apt for downloads: let it write there
	if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
	if ! (cd "$dl" && apt-get download -qq "$pkg" 2>/dev/null); then
		SUDO=
		[ "$(id -u)" = 0 ] || SUDO=sudo
		$SUDO apt-get update -qq
		(cd "$dl" && apt-get download -qq "$pkg")
	fi
	mkdir -p "$TOOLS/bin"
	dpkg-deb --fsys-tarfile "$dl"/"${pkg}"_*.deb | tar -x -O "$path" >"$TOOLS/bin/$name.new"
	chmod 0755 "$TOOLS/bin/$name.new"
	mv "$TOOLS/bin/$name.new" "$TOOLS/bin/$name"
fi
echo "$TOOLS/bin/$name"
