#!/usr/bin/env bash
# make bench (protocol 1.1 figures): watchers coming back after a navsyncd
# restart on its state file, resuming with `WATCH <rev>` beside plain
# `WATCH`, and the memory of the WATCH <rev> history at its default bounds.
# navsync-bench starts and restarts the daemon itself (it times the restart);
# every daemon is stopped by its PID. Nothing is asserted: these are figures.
#   bench/restart.sh [BIN_DIR]
# Knobs (environment): WATCHERS (1000), ROOMS (100), RUNS (3),
# HISTORY_ROOMS (1000), OUT (bench/results), PORT (21900).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-${BIN:-.build/release}}
WATCHERS=${WATCHERS:-1000}
ROOMS=${ROOMS:-100}
RUNS=${RUNS:-3}
HISTORY_ROOMS=${HISTORY_ROOMS:-1000}
OUT=${OUT:-bench/results}
PORT=${PORT:-21900}
ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"
rm -f "$OUT"/restart-*.json "$OUT/history.json"

# behind missed: changes per room the watchers missed before the restart
# (the journal has them, the new daemon's history does not) and after it
# (the new daemon's history has them); 1100 is past --history's 1024.
SCENARIOS=("0 0" "0 10" "10 0" "0 1100")
for run in $(seq 1 "$RUNS"); do
    for scenario in "${SCENARIOS[@]}"; do
        read -r behind missed <<<"$scenario"
        # Modes interleaved, so machine load hits both alike.
        for mode in resume plain; do
            PORT=$((PORT + 1))
            "$BIN/navsync-bench" restart --daemon "$BIN/navsyncd" --port "$PORT" --state "$work/state" \
                --log "$work/daemon.log" -n "$WATCHERS" --rooms "$ROOMS" --mode "$mode" \
                --behind "$behind" --missed "$missed" --quiet --timeout 300 \
                --json "$OUT/restart-$mode-$behind-$missed-$run.json"
        done
    done
done
PORT=$((PORT + 1))
"$BIN/navsync-bench" history --daemon "$BIN/navsyncd" --port "$PORT" --rooms "$HISTORY_ROOMS" --quiet \
    --json "$OUT/history.json"
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$BIN/navsync-bench" restart-report "$OUT"
} | tee "$OUT/restart.txt"
