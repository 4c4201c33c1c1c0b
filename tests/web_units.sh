#!/usr/bin/env bash
# web_units.sh - the dashboard's pure JavaScript modules (formatting, figure
# resolution per kernel, series assembly, evidence units, alert links) under
# node, without a browser or server: tests/browser/units.test.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node tests/browser/units.test.mjs
