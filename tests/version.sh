#!/usr/bin/env bash
# version.sh - the version comes from one place, the file VERSION: every
# program's --version prints it (release build and the build under test), the
# agent stamps it into its samples (agent_version), and the DaemonSet names
# the image tag `make image` writes (vmscope-agent:VERSION).
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0 failed=0
V=$(cat VERSION)

check_eq() {	# got, want, name
	if [ "$1" = "$2" ]; then passed=$((passed + 1)); echo "ok   $3"
	else failed=$((failed + 1)); echo "FAIL $3: got '$1', want '$2'"; fi
}

dirs=(bin)
[ "${BIN:-bin}" != bin ] && dirs+=("$BIN")
for d in "${dirs[@]}"; do
	for p in vmscope-agent vmscope-server vmscope-replay; do
		check_eq "$("$d/$p" --version 2>&1)" "$p $V" "$d/$p --version"
	done
	got=$("$d/vmscope-agent" --once --stdout --root tests/fixtures/k5.4 --host version-test 2>/dev/null |
		jq -r .agent_version)
	check_eq "$got" "$V" "$d/vmscope-agent stamps agent_version"
done

img=$(sed -n 's/^ *image: *\([^ ]*\).*/\1/p' deploy/k8s/vmscope-agent-daemonset.yaml)
check_eq "$img" "vmscope-agent:$V" "the DaemonSet names the image make image tags"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
