#!/usr/bin/env bash
# Smoke test for `make test`: navsync-bench once, tiny (N=20, M=20), against
# a fresh navsyncd on a free loopback port, with its watchers on TCP, then
# inside TLS, then on server-sent events. Checks only that the runs complete with every event
# delivered; no timing is asserted.
# Usage: bench/smoke.sh BIN_DIR
set -euo pipefail
BIN=${1:-.build/release}
FRESH_DAEMON_TLS=1 . "$(dirname "$0")/fresh-daemon.sh" "bench smoke"

"$BIN/navsync-bench" --system navsync --port "$port" --pid "$daemon" -n 20 -m 20 -k 10 \
    --warmup 2 --burst-deliveries 200 --min-bursts 2 --timeout 60 --quiet --json "$work/run-smoke.json"
"$BIN/navsync-bench" --system navsync-tls --port "$port" --tls-port "$tls_port" --tls-ca "$tls_ca" --pid "$daemon" \
    -n 20 -m 20 -k 10 --warmup 2 --burst-deliveries 200 --min-bursts 2 --timeout 60 --quiet --json "$work/run-smoke-tls.json"
"$BIN/navsync-bench" --system navsync-sse --port "$port" --pid "$daemon" -n 20 -m 20 -k 10 \
    --warmup 2 --burst-deliveries 200 --min-bursts 2 --timeout 60 --quiet --json "$work/run-smoke-sse.json"
"$BIN/navsync-bench" report "$work" >/dev/null
echo "bench smoke: navsync-bench ran against navsyncd (N=20, M=20; watchers on TCP, then inside TLS, then on SSE); every event delivered"
