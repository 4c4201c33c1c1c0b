#!/usr/bin/env bash
# web_units_compare.sh - the compare page's pure JavaScript (web/js/comparefmt.js:
# change colours by direction and significance, number, change and p-value
# formatting, histogram bars, picker choices) under node, without a browser
# or server: tests/browser/compare_units.test.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node tests/browser/compare_units.test.mjs
