#!/usr/bin/env bash
# make bench (last step): what NavSyncKit costs, against a fresh navsyncd
# (memory only, a free port): netcat-style SELECT → SharedNavigation's
# observable stack, p50/p99 over CHANGES changes, beside the same path into
# the terminal client (`navsync watch`'s output line); then memory and
# threads per SharedNavigation with OBJECTS objects in one process.
# Writes bench/results/kit.json. Nothing is asserted: these are figures.
#   bench/kit.sh [BIN_DIR]      knobs: CHANGES (1000), OBJECTS (100), OUT
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
BIN=${1:-${BIN:-.build/release}}
CHANGES=${CHANGES:-1000}
OBJECTS=${OBJECTS:-100}
OUT=${OUT:-bench/results}
. "$here/fresh-daemon.sh" "bench kit"

mkdir -p "$OUT"
"$BIN/navsync-kit-bench" --port "$port" --changes "$CHANGES" --objects "$OBJECTS" --client "$BIN/navsync" >"$OUT/kit.json"
echo "bench kit: NavSyncKit figures ($CHANGES changes, $OBJECTS objects) in $OUT/kit.json:"
cat "$OUT/kit.json"
