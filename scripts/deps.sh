#!/usr/bin/env bash
# deps.sh [packaging] - install the Debian packages vmscope needs, and only
# those missing. Idempotent and quiet when everything is there. Needs root
# (or sudo) only when installing.
#   deps.sh            building, running and testing (`make deps`, hence
#                      `make run` and `make test`), the dashboard's npm
#                      packages and promtool
#   deps.sh packaging  only what `make deb` and `make image` need (Debian's
#                      packaging tools, umoci, skopeo); `make test` installs
#                      it too, for tests/e2e/test_packages.sh
set -euo pipefail

# make deb / make image: debhelper and dpkg-dev build the packages (with the
# build dependencies in debian/control, all in the list below), help2man
# their manual pages, lintian checks them; umoci assembles the OCI image
# and skopeo writes its docker-archive copy.
PACKAGING=(debhelper dpkg-dev help2man lintian umoci skopeo)

PKGS=(
	gcc make pkg-config            # build
	clang libclang-rt-14-dev       # fuzzing (libFuzzer + sanitizers)
	libmicrohttpd-dev libjansson-dev libyajl-dev libpq-dev libcurl4-openssl-dev zlib1g-dev
	nettle-dev openssl             # token hashing (SHA-256); certificates in the TLS test
	postgresql                     # server-side database (own cluster, own port)
	curl python3 util-linux procps jq # scripts and tests (runuser, pkill-free PID handling)
	systemd                        # systemd-analyze verify of the units (tests/e2e/test_install.sh)
)
[ -n "${VMSCOPE_EXTRA_PKGS:-}" ] && read -r -a extra <<<"$VMSCOPE_EXTRA_PKGS" && PKGS+=("${extra[@]}")
only_packaging=
case "${1:-}" in
	"") ;;
	packaging) PKGS=("${PACKAGING[@]}"); only_packaging=1 ;;
	*) echo "deps: unknown package list '$1' (known: packaging)" >&2; exit 2 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
echo "deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# postgresql's postinst would start Debian's own cluster on 5432; we never use it,
# but don't let it fail the install when no init system is running.
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ -z "$only_packaging" ] || exit 0

# the dashboard's uPlot (npm) and the browser test's nodejs/chromium
"$(dirname "$0")/web-deps.sh"

# promtool (tests/e2e/test_metrics.sh runs `promtool check metrics`). Debian
# ships it only inside the prometheus server package, whose postinst adds a
# user and starts a Prometheus on :9090: scripts/deb-tool.sh extracts only
# usr/bin/promtool into .tools/bin (no service, no user, nothing outside this
# checkout). A promtool on PATH wins.
TOOLS="$(cd "$(dirname "$0")/.." && pwd)/.tools"
if ! command -v promtool >/dev/null && [ ! -x "$TOOLS/bin/promtool" ]; then
	"$(dirname "$0")/deb-tool.sh" prometheus ./usr/bin/promtool promtool >/dev/null
	"$TOOLS/bin/promtool" --version 2>&1 | head -1 >&2
fi
