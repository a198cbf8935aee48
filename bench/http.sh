#!/usr/bin/env bash
# Changes per second over HTTP keep-alive (`POST /rooms/ROOM` with a JSON
# change, one request in flight per connection) beside the same over the
# line protocol (one SELECT in flight, and a window of 64 pipelined), from
# 1 and from 50 clients, each client in a room of its own, against one
# fresh release navsyncd (`--state none`, a free loopback port, ready by its
# `listening on` line, stopped by its PID). The rows are interleaved RUNS
# times so a loaded machine hits them alike; one table at the end, with
# every run's figure and the daemon's CPU per change.
# Usage: bench/http.sh [BIN] (default .build/release).
# Knobs (environment): RUNS (default 3), CHANGES (timed per row, default 20000),
# CLIENTS (default "1 50").
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release}
RUNS=${RUNS:-3}
CHANGES=${CHANGES:-20000}
CLIENTS=${CLIENTS:-"1 50"}

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
for _ in $(seq 1 200); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/daemon.log" | head -1)
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { echo "http bench: navsyncd did not start" >&2; cat "$work/daemon.log" >&2; exit 1; }
echo "http bench: navsyncd pid $daemon on 127.0.0.1:$port; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# Rows: name, writers flags. The HTTP row always has one request in flight.
rows=("line-1 --protocol line --window 1" "line-64 --protocol line --window 64" "http-1 --protocol http --window 1")
for run in $(seq 1 "$RUNS"); do
    for clients in $CLIENTS; do
        for row in "${rows[@]}"; do
            read -r name flags <<<"$row"
            # shellcheck disable=SC2086
            "$BIN/navsync-bench" writers --ports "$port" --pids "$daemon" -w "$clients" $flags \
                --changes "$CHANGES" --warmup 100 --timeout 120 --label "$name" \
                --json "$work/$name-$clients-$run.json" >&2
        done
    done
done

python3 - "$work" "$RUNS" "$CLIENTS" <<'PY'
import json, statistics, sys
work, runs, clients = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
what = {"line-1": ("line protocol", "1 (SELECT, wait for OK)"),
        "line-64": ("line protocol", "64 (pipelined)"),
        "http-1": ("HTTP keep-alive", "1 (POST, wait for 200)")}
print("| transport | clients | in flight per client | changes/s, each run | median changes/s | daemon CPU µs/change (median) |")
print("|---|---:|---|---|---:|---:|")
for n in clients:
    for name, (transport, flight) in what.items():
        results = [json.load(open(f"{work}/{name}-{n}-{r}.json")) for r in range(1, runs + 1)]
        rates = [r["changesPerSecond"] for r in results]
        cpu = [r["serverCPUMicrosPerChange"] for r in results if r.get("serverCPUMicrosPerChange") is not None]
        each = ", ".join(f"{x:,.0f}" for x in rates)
        cpu_text = f"{statistics.median(cpu):.1f}" if cpu else "-"
        print(f"| {transport} | {n} | {flight} | {each} | {statistics.median(rates):,.0f} | {cpu_text} |")
PY
