#!/usr/bin/env bash
# web-deps.sh - the dashboard's third-party files and the browser test's tools.
# Called by scripts/deps.sh (so by `make deps`, `make run`, `make test`).
# Quiet and quick when everything is there:
#   - Debian's nodejs, npm and chromium, installed with apt only when the
#     commands are missing (a nodejs that already brings npm is kept);
#   - node_modules/ from package-lock.json with `npm ci`, only when it is
#     missing or was installed from another lock file (hash kept beside it);
#   - uPlot copied into web/vendor/ (served by the server, no CDN) when the
#     copy is missing or differs: its CSS, and its minified build made an ES
#     module (uPlot.min.esm.js).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
	echo "web-deps: installing ${need[*]}" >&2
	SUDO=
	[ "$(id -u)" = 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

stamp=node_modules/.vmscope-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules/uplot ] || [ ! -d node_modules/playwright-core ] ||
   [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	echo "web-deps: npm ci" >&2
	npm ci --no-audit --no-fund --loglevel=error >/dev/null
	echo "$want" >"$stamp"
fi

mkdir -p web/vendor
for f in uPlot.min.css; do
	if ! cmp -s "node_modules/uplot/dist/$f" "web/vendor/$f"; then
		cp "node_modules/uplot/dist/$f" "web/vendor/$f"
	fi
done
# uPlot's minified build as an ES module: the package ships its ES module
# unminified only (145 kB, ~50 ms of module evaluation in a fresh page); the
# minified IIFE (51 kB) defines one global, uPlot, and one export line makes
# it a module (~15 ms to compile). No code of ours goes into the file.
esm=$(mktemp)
{ cat node_modules/uplot/dist/uPlot.iife.min.js; printf '\nexport default uPlot;\n'; } >"$esm"
if ! cmp -s "$esm" web/vendor/uPlot.min.esm.js; then chmod 644 "$esm" && mv "$esm" web/vendor/uPlot.min.esm.js; else rm -f "$esm"; fi
rm -f web/vendor/uPlot.esm.js	# the unminified copy earlier versions served
