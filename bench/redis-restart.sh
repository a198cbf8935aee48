#!/usr/bin/env bash
# The Redis restart phase of make bench-fleet (bench/fleet.sh runs it last;
# it also runs alone): for each N, navsync-bench redis-restart starts Redis
# (AOF, appendfsync always) and three navsyncd --backplane on it, puts N
# watchers and a busy writer per room on them, kills Redis with SIGKILL,
# restarts it on the same port and directory and times how long the
# watchers wait to be live again. The bench stops every process it started
# by its PID. Afterwards each daemon's log is checked for the backplane's
# one line at the start of the outage and one at its end (docs/BACKPLANE.md).
#
# Results: $OUT/redis-restart-N.json, summary lines in $OUT/redis-restart.txt.
# Knobs (environment): RESTART_NS, RESTART_ROOMS, RESTART_FSYNC, BIN, OUT, PORT_BASE.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-.build/release}
OUT=${OUT:-bench/results/fleet}
RESTART_NS=${RESTART_NS:-"1000 10000"}
RESTART_ROOMS=${RESTART_ROOMS:-100}
RESTART_FSYNC=${RESTART_FSYNC:-always}
port=${PORT_BASE:-26900}
mkdir -p "$OUT/tmp"
ulimit -n "$(ulimit -Hn)"
rm -f "$OUT"/redis-restart*
say() { echo "bench-redis-restart: $*" >&2; }

status=0
for n in $RESTART_NS; do
    dir=$(mktemp -d "$OUT/tmp/redis-restart.XXXXXX")
    redis_port=$((port + 1)); ports="$((port + 2)),$((port + 3)),$((port + 4))"; port=$((port + 4))
    if ! "$BIN/navsync-bench" redis-restart --daemon "$BIN/navsyncd" --redis-server "$(command -v redis-server)" \
            --dir "$dir" --redis-port "$redis_port" --ports "$ports" -n "$n" --rooms "$RESTART_ROOMS" \
            --fsync "$RESTART_FSYNC" --quiet --json "$OUT/redis-restart-$n.json" >"$dir/summary.txt"; then
        say "n=$n failed (logs in $dir)"
        status=1
    fi
    # One outage: per daemon exactly one "backplane down" and one "is back after" line, nothing else from the backplane.
    logs="" back_ms=""
    for log in "$dir"/daemon-*.log; do
        down=$(grep -c 'backplane down' "$log" || true)
        back=$(grep -c 'backplane: redis at .* is back after' "$log" || true)
        other=$(grep 'backplane' "$log" | grep -vc 'backplane down\|is back after' || true)
        logs+=" $down+$back+$other"
        back_ms+="$(grep -o 'is back after [0-9]* ms' "$log" | tr -dc '0-9\n' | paste -sd, -)/"
        if [ "$down" != 1 ] || [ "$back" != 1 ] || [ "$other" != 0 ]; then
            say "n=$n: $log has $down outage-start, $back outage-end and $other other backplane lines (expected 1, 1, 0)"
            grep 'backplane' "$log" | head -5 >&2
        fi
    done
    echo "$(cat "$dir/summary.txt"); backplane log lines per daemon (down+back+other):$logs, each logged the outage over after ${back_ms%/} ms" | tee -a "$OUT/redis-restart.txt"
done
exit $status
