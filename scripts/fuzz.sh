#!/usr/bin/env bash
# fuzz.sh SECONDS - run every libFuzzer target in bin/fuzz for SECONDS each.
#
# Each target first replays its regression inputs (tests/fuzz/regress/NAME/,
# inputs that once crashed it: they must pass forever), then fuzzes from its
# seed corpus (tests/fuzz/corpus/NAME/, copied so the repo is not touched).
# A crash leaves its input in tests/out/fuzz/NAME/ and fails the run: fix
# the bug, then move the input into tests/fuzz/regress/NAME/.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
rc=0
for bin in bin/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=${bin##*/fuzz_}
	out=tests/out/fuzz/$name
	rm -rf "$out"; mkdir -p "$out/corpus"
	[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$out/corpus/"
	if [ -d "tests/fuzz/regress/$name" ] && ls "tests/fuzz/regress/$name"/* >/dev/null 2>&1; then
		if ! "$bin" -runs=1 "tests/fuzz/regress/$name"/* >"$out/regress.log" 2>&1; then
			echo "fuzz $name: a regression input crashes again:"; tail -30 "$out/regress.log"; rc=1; continue
		fi
	fi
	if "$bin" "$out/corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -artifact_prefix="$out/" -print_final_stats=1 >"$out/fuzz.log" 2>&1; then
		echo "fuzz $name: ok, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/fuzz.log" | grep -o '[0-9]*$') runs in ${secs}s"
	else
		# the log's end goes to the output too: CI keeps the output of a
		# failed run, not tests/out/ (the input is in the log as hex bytes)
		echo "fuzz $name: FAILED (input kept in $out/)"; tail -40 "$out/fuzz.log"; rc=1
	fi
done
exit $rc
