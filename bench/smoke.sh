#!/usr/bin/env bash
# Smoke test for `make test`: navsync-bench once, tiny (N=20, M=20), against
# a fresh navsyncd on a free loopback port, with its watchers on TCP, then
# inside TLS, then on WebSocket inside TLS, then on server-sent events, and
# HTTP writers. Checks only that the runs complete with every event
# delivered; no timing is asserted.
# Usage: bench/smoke.sh BIN_DIR
set -euo pipefail
BIN=${1:-.build/release}
FRESH_DAEMON_TLS=1 . "$(dirname "$0")/fresh-daemon.sh" "bench smoke"

"$BIN/navsync-bench" --system navsync --port "$port" --pid "$daemon" -n 20 -m 20 -k 10 \
    --warmup 2 --burst-deliveries 200 --min-bursts 2 --timeout 60 --quiet --json "$work/run-smoke.json"
"$BIN/navsync-bench" --system navsync-tls --port "$port" --tls-port "$tls_port" --tls-ca "$tls_ca" --pid "$daemon" \
    -n 20 -m 20 -k 10 --warmup 2 --burst-deliveries 200 --min-bursts 2 --timeout 60 --quiet --json "$work/run-smoke-tls.json"
"$BIN/navsync-bench" --system navsync-wss --port "$port" --tls-port "$tls_port" --tls-ca "$tls_ca" --pid "$daemon" \
    -n 20 -m 20 -k 10 --warmup 2 --burst-deliveries 200 --min-bursts 2 --timeout 60 --quiet --json "$work/run-smoke-wss.json"
"$BIN/navsync-bench" --system navsync-sse --port "$port" --pid "$daemon" -n 20 -m 20 -k 10 \
    --warmup 2 --burst-deliveries 200 --min-bursts 2 --timeout 60 --quiet --json "$work/run-smoke-sse.json"
"$BIN/navsync-bench" report "$work" >/dev/null
# (1.3) The writers over HTTP: keep-alive POSTs, every answer a whole 200.
"$BIN/navsync-bench" writers --ports "$port" --protocol http -w 2 --changes 100 --warmup 5 --timeout 60 >/dev/null
echo "bench smoke: navsync-bench ran against navsyncd (N=20, M=20; watchers on TCP, then inside TLS, then on WebSocket inside TLS, then on SSE); every event delivered; HTTP writers answered 200"
