#!/usr/bin/env bash
# fuzz_short.sh - the short fuzzing budget `make test` runs: every libFuzzer
# target (built by `make fuzz-build`) for FUZZ_SECONDS (default 20) each,
# after replaying its kept regression inputs. Fails on any crash.
set -uo pipefail
cd "$(dirname "$0")/.."
n=$(ls bin/fuzz/fuzz_* 2>/dev/null | wc -l)
if [ "$n" -eq 0 ]; then echo "no fuzz targets built (make fuzz-build)"; echo "0 passed, 1 failed"; exit 1; fi
if scripts/fuzz.sh "${FUZZ_SECONDS:-20}"; then echo "$n passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
