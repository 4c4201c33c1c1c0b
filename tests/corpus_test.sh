#!/usr/bin/env bash
# corpus_test.sh - the detectors against the trace corpus: real recordings
# from this project's machines (tests/corpus/real-*, see tools/scenarios.sh)
# and synthetic traces in other kernels' dialects (tests/corpus/synth-*,
# from tools/gen_synth.py). Each trace NAME.jsonl[.gz] has NAME.expected with
# "must KIND SCOPE" / "never KIND SCOPE" lines. Every trace is replayed
#   asis     as recorded; also with --persist (state saved and reloaded after
#            every sample, as the server does) which must print the same
#   retime   subsampled to >= 10 s spacing (what a 10 s agent would see)
#   drop     with every 5th sample lost
# and each variant must meet the expectations.
set -uo pipefail
cd "$(dirname "$0")/.."
REPLAY=${REPLAY:-bin/vmscope-replay}
OUT=$(mktemp -d /tmp/vmscope-corpus.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
fail=0
pass=0

# tests/corpus/derived: real recordings rewritten into other kernels'
# dialects and the long healthy trace: checked here and by
# bin/tests/test_detect_corpus; the e2e tests that post every trace to a
# server (export, replay = server) take tests/corpus/ only
exps=(tests/corpus/*.expected tests/corpus/derived/*.expected)
traces=()
for exp in "${exps[@]}"; do
	name=${exp%.expected}
	t=
	for c in "$name.jsonl" "$name.jsonl.gz"; do [ -f "$c" ] && t=$c; done
	if [ -z "$t" ]; then
		echo "FAIL $exp: no trace"; exit 1
	fi
	traces+=("$t")
done
python3 tests/corpus/tools/check.py prepare "$OUT" "${traces[@]}" || exit 2
for exp in "${exps[@]}"; do
	base=$(basename "${exp%.expected}")
	for v in asis retime drop; do
		if ! "$REPLAY" "$OUT/$base.$v.jsonl" >"$OUT/$base.$v.json" 2>"$OUT/$base.$v.err"; then
			echo "FAIL $base [$v]: replay failed"; cat "$OUT/$base.$v.err"; fail=$((fail + 1))
			rm -f "$OUT/$base.$v.json"
		fi
	done
	"$REPLAY" --persist "$OUT/$base.asis.jsonl" >"$OUT/$base.persist.json" 2>&1
	if cmp -s "$OUT/$base.asis.json" "$OUT/$base.persist.json"; then
		pass=$((pass + 1))
	else
		echo "FAIL $base [persist]: output differs from the in-memory run"
		diff "$OUT/$base.asis.json" "$OUT/$base.persist.json" | head -10
		fail=$((fail + 1))
	fi
done
python3 tests/corpus/tools/check.py verify "$OUT" "${exps[@]}" | tee "$OUT/verify.txt"
checks=$(sed -n 's/^corpus checks: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$OUT/verify.txt")
pass=$((pass + ${checks% *}))
fail=$((fail + ${checks#* }))
echo "corpus_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
