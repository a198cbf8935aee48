#!/usr/bin/env bash
# Memory per grant: navsyncd's resident size with a --tokens file of N grants
# (default 10,000) beside the same daemon with one grant, for grants on every
# room (`view *`) and on a list of rooms (`view roomI,hall`). Each daemon is
# started on port 0, read once its `listening on` line is out, and stopped by
# its PID. Usage: bench/grants-memory.sh [BIN] (default .build/release).
set -euo pipefail
BIN=${1:-.build/release}
N=${N:-10000}
RUNS=${RUNS:-3}
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

# grants FILE COUNT KIND: COUNT lines of 32-character tokens.
grants() {
    local file=$1 count=$2 kind=$3
    awk -v n="$count" -v kind="$kind" 'BEGIN {
        for (i = 1; i <= n; i++) {
            rooms = kind == "every" ? "*" : sprintf("room%d,hall", i)
            printf "view %s tok%029d viewer%d\n", rooms, i, i
        }
    }' > "$file"
    chmod 600 "$file"
}

# rss FILE: sets RSS to the daemon's VmRSS in KiB once it listens. Not run
# in a command substitution: the daemon would hold that pipe open.
rss() {
    local log="$work/log"
    "$BIN/navsyncd" --listen 127.0.0.1:0 --state none --tokens "$1" --log-level warn 2>"$log" >/dev/null &
    pid=$!
    for _ in $(seq 1 500); do
        grep -q "listening on" "$log" && break
        sleep 0.01
    done
    grep -q "listening on" "$log" || { echo "navsyncd did not start: $(cat "$log")" >&2; exit 1; }
    sleep 0.2
    RSS=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
    kill "$pid"
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
}

grants "$work/one" 1 every
for kind in every list; do
    grants "$work/many" "$N" "$kind"
    for run in $(seq 1 "$RUNS"); do
        rss "$work/one"; one=$RSS
        rss "$work/many"; many=$RSS
        echo "$kind run $run: 1 grant $one KiB, $N grants $many KiB: $(( (many - one) * 1024 / (N - 1) )) B per grant"
    done
done
