#!/usr/bin/env bash
# make bench (last step): what NavSyncKit costs, against a fresh navsyncd
# (memory only, a free port): netcat-style SELECT → SharedNavigation's
# observable stack, p50/p99 over CHANGES changes, beside the same path into
# the terminal client (`navsync watch`'s output line); then memory and
# threads per SharedNavigation with OBJECTS objects in one process.
# Writes bench/results/kit.json. Nothing is asserted: these are figures.
#   bench/kit.sh [BIN_DIR]      knobs: CHANGES (1000), OBJECTS (100), OUT
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-${BIN:-.build/release}}
CHANGES=${CHANGES:-1000}
OBJECTS=${OBJECTS:-100}
OUT=${OUT:-bench/results}
work=$(mktemp -d)
daemon=""
cleanup() {
    if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then kill "$daemon"; wait "$daemon" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$BIN/navsyncd" --listen 127.0.0.1:0 --state none 2>"$work/daemon.log" &
daemon=$!
port=""
for _ in $(seq 1 200); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/daemon.log" | head -1)
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { echo "bench kit: navsyncd did not start"; cat "$work/daemon.log"; exit 1; }

mkdir -p "$OUT"
"$BIN/navsync-kit-bench" --port "$port" --changes "$CHANGES" --objects "$OBJECTS" --client "$BIN/navsync" >"$OUT/kit.json"
echo "bench kit: NavSyncKit figures ($CHANGES changes, $OBJECTS objects) in $OUT/kit.json:"
cat "$OUT/kit.json"
