#!/usr/bin/env bash
# make bench-fleet: three navsyncd on one Redis (the backplane) beside one
# navsyncd, in one run. For each Redis durability setting (appendfsync
# always and everysec) and N watchers spread over the three daemons:
# closed-loop latency to the last watcher, burst deliveries/s and CPU per
# delivery (daemons + Redis summed); then acknowledged changes/s from W
# pipelining writers, on one daemon and on the fleet (a room each, and all
# in one room). N past what one process may open (20,000 descriptors here)
# is split over helper bench processes (navsync-bench --leader).
#
# Last, the Redis restart phase (bench/redis-restart.sh): Redis killed and
# restarted under load, the watchers' wait to catch up.
#
# Results: bench/results/fleet/*.json, table in bench/results/fleet/table.txt.
# Knobs (environment): NS, FSYNCS, RUNS, M, K, W, WINDOW, CHANGES, BIN, OUT,
# PORT_BASE, PER_PROCESS (watchers per bench process), BASE_BIN (a directory
# holding an older navsyncd: its fleet rows are measured in the same run,
# labelled base-fleet-FSYNC, beside this build's).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-.build/release}
NS=${NS:-"1000 10000 30000"}
FSYNCS=${FSYNCS:-"always everysec"}
RUNS=${RUNS:-1}
M=${M:-300}
K=${K:-100}
W=${W:-10}
WINDOW=${WINDOW:-64}
CHANGES=${CHANGES:-30000}
OUT=${OUT:-bench/results/fleet}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PORT_BASE=${PORT_BASE:-26000}
PER_PROCESS=${PER_PROCESS:-15000}
LOGS="$OUT/tmp"
say() { echo "bench-fleet: $*" >&2; }

SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
if ! command -v redis-server >/dev/null; then
    $SUDO apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
fi
ulimit -n "$(ulimit -Hn)"
mkdir -p "$OUT" "$LOGS"
rm -f "$OUT"/*.json "$OUT/writers.txt"

STARTED=()
stop_pids() {
    for pid in "$@"; do
        if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    done
}
trap 'stop_pids "${STARTED[@]}"' EXIT
trap 'exit 130' INT TERM

port=$PORT_BASE
next_port() { port=$((port + 1)); }

# start_fleet FSYNC [DAEMON_DIR]: a fresh Redis (AOF, FSYNC) in a temporary
# directory and three daemons (from DAEMON_DIR, default BIN) on it; sets
# REDIS_PID, DAEMON_PIDS, DAEMON_PORTS.
start_fleet() {
    local fsync=$1 daemon_dir=${2:-$BIN} dir
    dir=$(mktemp -d "$LOGS/redis.XXXXXX")
    next_port; local redis_port=$port
    redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --appendfsync "$fsync" \
        --save '' --protected-mode no --daemonize no --logfile "$dir/redis.log" &
    REDIS_PID=$!; STARTED+=("$REDIS_PID")
    for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    DAEMON_PIDS=(); DAEMON_PORTS=()
    for i in 1 2 3; do
        next_port
        "$daemon_dir/navsyncd" --listen "127.0.0.1:$port" --backplane "redis://127.0.0.1:$redis_port" \
            --max-clients 20000 --log-level warn 2>"$LOGS/daemon-$port.log" &
        DAEMON_PIDS+=($!); DAEMON_PORTS+=("$port"); STARTED+=($!)
    done
    sleep 0.5
}

stop_fleet() { stop_pids "${DAEMON_PIDS[@]}" "$REDIS_PID"; }

join() { local IFS=,; echo "$*"; }

# fanout LABEL N: the fan-out workload over the running fleet, N watchers
# spread over its daemons, split over bench processes of PER_PROCESS each.
fanout() {
    local label=$1 n=$2 run=$3
    local processes=$(( (n + PER_PROCESS - 1) / PER_PROCESS ))
    local own=$(( n / processes ))
    local pid_args=()
    for pid in "${DAEMON_PIDS[@]}" "$REDIS_PID"; do pid_args+=(--pid "$pid"); done
    next_port; local control=$port
    local helpers=()
    for h in $(seq 2 "$processes"); do
        "$BIN/navsync-bench" --leader "$control" --ports "$(join "${DAEMON_PORTS[@]}")" -n "$own" --timeout 600 --quiet \
            >"$LOGS/helper-$label-$n-$h.log" 2>&1 &
        helpers+=($!)
    done
    local ok=true
    "$BIN/navsync-bench" --system navsync --label "$label" --port "${DAEMON_PORTS[0]}" \
        --ports "$(join "${DAEMON_PORTS[@]}")" "${pid_args[@]}" --helpers $((processes - 1)) --control-port "$control" \
        -n $((n - own * (processes - 1))) -m "$M" -k "$K" --run "$run" --timeout 600 --quiet \
        --json "$OUT/run-$label-$n-$run.json" || ok=false
    for h in "${helpers[@]}"; do wait "$h" || ok=false; done
    $ok || say "$label n=$n run $run failed"
}

writers() {
    local label=$1 rooms=$2; shift 2
    local pids=$1; shift
    "$BIN/navsync-bench" writers --ports "$(join "$@")" -w "$W" --window "$WINDOW" --changes "$CHANGES" \
        --rooms "$rooms" --pids "$pids" --label "$label" --json "$OUT/writers-$label-$rooms.json" \
        | tee -a "$OUT/writers.txt"
}

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
    echo "redis: $(redis-server --version | head -1)"
    echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "settings: NS='$NS' FSYNCS='$FSYNCS' RUNS=$RUNS M=$M K=$K W=$W WINDOW=$WINDOW CHANGES=$CHANGES"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

for run in $(seq 1 "$RUNS"); do
    for n in $NS; do
        # One daemon beside the fleets, same run (above 20,000 one process cannot go).
        if [ "$n" -le 19000 ]; then
            next_port
            "$BIN/navsyncd" --listen "127.0.0.1:$port" --state none --max-clients 20000 --log-level warn \
                2>"$LOGS/single-$port.log" &
            single=$!; STARTED+=("$single")
            "$BIN/navsync-bench" --system navsync --label single --port "$port" --pid "$single" -n "$n" \
                -m "$M" -k "$K" --run "$run" --timeout 600 --quiet --json "$OUT/run-single-$n-$run.json" \
                || say "single n=$n run $run failed"
            stop_pids "$single"
        fi
        for fsync in $FSYNCS; do
            start_fleet "$fsync"
            fanout "fleet-$fsync" "$n" "$run"
            stop_fleet
            if [ -n "${BASE_BIN:-}" ]; then
                start_fleet "$fsync" "$BASE_BIN"
                fanout "base-fleet-$fsync" "$n" "$run"
                stop_fleet
            fi
        done
    done
done

# Writers: one daemon (journal, fsync batched per loop turn), then the fleets.
dir=$(mktemp -d "$LOGS/single.XXXXXX")
next_port
"$BIN/navsyncd" --listen "127.0.0.1:$port" --state "$dir/state" --log-level warn 2>"$LOGS/single-writers.log" &
single=$!; STARTED+=("$single")
sleep 0.3
writers single own "$single" "$port"
writers single one "$single" "$port"
stop_pids "$single"
for fsync in $FSYNCS; do
    for build in "$BIN" ${BASE_BIN:+"$BASE_BIN"}; do
        label="fleet-$fsync"; [ "$build" = "$BIN" ] || label="base-fleet-$fsync"
        for rooms in own one; do
            start_fleet "$fsync" "$build"
            writers "$label" "$rooms" "$(join "${DAEMON_PIDS[@]}" "$REDIS_PID")" "${DAEMON_PORTS[@]}"
            stop_fleet
        done
    done
done

# Redis killed (-9) and restarted under load: how long the watchers wait (bench/redis-restart.sh).
BIN="$BIN" OUT="$OUT" PORT_BASE=$((port + 1)) bench/redis-restart.sh || say "redis restart phase failed"

echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
{
    "$BIN/navsync-bench" report "$OUT"
    echo
    echo "acknowledged changes/s, $W writers x $WINDOW in flight each:"
    cat "$OUT/writers.txt"
    echo
    echo "Redis kill -9 and restart (AOF) under load, catch-up timed from Redis answering PING again:"
    cat "$OUT/redis-restart.txt" 2>/dev/null || echo "(no result)"
} | tee "$OUT/table.txt"
