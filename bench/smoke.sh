#!/usr/bin/env bash
# Smoke test for `make test`: navsync-bench once, tiny (N=20, M=20), against
# a fresh navsyncd on a free loopback port. Checks only that the run
# completes with every event delivered; no timing is asserted.
# Usage: bench/smoke.sh BIN_DIR
set -euo pipefail
BIN=${1:-.build/release}
work=$(mktemp -d)
daemon=""
cleanup() {
    if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then kill "$daemon"; wait "$daemon" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$BIN/navsyncd" --listen 127.0.0.1:0 --state none --log-level info 2>"$work/daemon.log" &
daemon=$!
port=""
for _ in $(seq 1 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/daemon.log" | head -1)
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { echo "bench smoke: navsyncd did not start"; cat "$work/daemon.log"; exit 1; }

"$BIN/navsync-bench" --system navsync --port "$port" --pid "$daemon" -n 20 -m 20 -k 10 \
    --warmup 2 --burst-deliveries 200 --min-bursts 2 --timeout 60 --quiet --json "$work/run-smoke.json"
"$BIN/navsync-bench" report "$work" >/dev/null
echo "bench smoke: navsync-bench ran against navsyncd (N=20, M=20); every event delivered"
