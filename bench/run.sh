#!/usr/bin/env bash
# make bench: navsyncd (watchers over TCP, over WebSocket as navsync-ws, on
# server-sent events as navsync-sse, inside TLS as navsync-tls, and on
# WebSocket inside TLS as navsync-wss) beside
# Redis pub/sub (plain, and with its subscribers inside TLS as redis-tls), NATS and the floor broadcaster,
# for N = 100, 1,000, 5,000 and 10,000 watchers, each configuration RUNS
# times with a fresh server; medians in a table, bench/results/*.json and
# bench/results/fanout.png. Only loopback traffic; every server it starts is
# stopped again by its PID.
#
# SYSTEMS may add navsync-grants: navsyncd with --tokens, watchers holding
# view grants (the cost of the access check beside the plain navsync rows).
# Knobs (environment): NS, RUNS, SYSTEMS, M (closed-loop changes),
# K (changes per burst), BIN (where navsyncd and navsync-bench are),
# OUT (results directory), PORT_BASE, BASE_BIN (a directory holding an older
# navsyncd: measured as the `baseline` rows beside `navsync`, interleaved in the
# same run, so a change is shown side by side with the figures before it;
# add `baseline-ws` to SYSTEMS for its WebSocket watchers beside navsync-ws,
# `baseline-tls` for its TLS watchers beside navsync-tls, `baseline-wss` for
# its WebSocket watchers inside TLS beside navsync-wss).
set -euo pipefail
cd "$(dirname "$0")/.."
# nats-server lives in /usr/sbin.
PATH="$PATH:/usr/sbin"

BIN=${BIN:-.build/release}
NS=${NS:-"100 1000 5000 10000"}
RUNS=${RUNS:-3}
SYSTEMS=${SYSTEMS:-"navsync navsync-ws navsync-sse navsync-tls navsync-wss redis redis-tls nats floor"}
BASE_BIN=${BASE_BIN:-}
if [ -n "$BASE_BIN" ]; then
    [ -x "$BASE_BIN/navsyncd" ] || { echo "bench: BASE_BIN=$BASE_BIN has no navsyncd" >&2; exit 64; }
    # The word navsync only: navsync-ws, -tls, -wss and the rest stay where they are.
    case " $SYSTEMS " in *" baseline "*) ;; *) SYSTEMS="navsync baseline $(echo " $SYSTEMS " | sed 's/ navsync / /')" ;; esac
fi
M=${M:-300}
K=${K:-100}
OUT=${OUT:-bench/results}
# Below the usual ephemeral range (32768-60999), where client sockets could hold a port.
PORT_BASE=${PORT_BASE:-21000}
LOGS="$OUT/tmp"

say() { echo "bench: $*" >&2; }

# Peers come from Debian; installed only when missing. NATS is optional.
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
if ! command -v redis-server >/dev/null || ! command -v gnuplot >/dev/null || ! command -v nats-server >/dev/null; then
    $SUDO apt-get update -qq || true
fi
need=""
command -v redis-server >/dev/null || need="$need redis-server"
command -v gnuplot >/dev/null || need="$need gnuplot-nox"
if ! command -v nats-server >/dev/null && apt-cache show nats-server >/dev/null 2>&1; then
    need="$need nats-server"
fi
if [ -n "$need" ]; then
    say "installing:$need"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
fi
if ! command -v nats-server >/dev/null; then
    NATS_SERVER=""
    SYSTEMS=$(echo "$SYSTEMS" | sed 's/\bnats\b//')
    say "nats-server not available; NATS left out"
else
    NATS_SERVER=$(command -v nats-server)
fi

# 10,000 watchers need 10,000 descriptors on each side.
ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt 10100 ]; then
    say "open-file limit is $(ulimit -n); N above $(( $(ulimit -n) - 100 )) will fail"
fi

mkdir -p "$OUT" "$LOGS"
# (1.2) navsync-grants: the same daemon with --tokens; every watcher AUTHs with
# a view grant and the actor with a control grant, both for the room `main`
# only, so each line's check looks the room up in the grant's list.
GRANTS="$LOGS/grants"
VIEW_TOKEN=bench-view-token-0000000001
CONTROL_TOKEN=bench-control-token-00000001
printf 'control main %s\nview main %s\n' "$CONTROL_TOKEN" "$VIEW_TOKEN" > "$GRANTS"
chmod 600 "$GRANTS"
rm -f "$OUT"/run-*.json "$OUT"/plot-*.dat

# navsync-tls, navsync-wss, redis-tls: a throwaway CA and an ECDSA P-256 certificate for
# 127.0.0.1, made for this run; the server's TLS port is its plain port + TLS_OFFSET.
TLS_DIR="$LOGS/tls"
TLS_OFFSET=2000
case " $SYSTEMS " in *" navsync-tls "*|*" navsync-wss "*|*" redis-tls "*|*" baseline-tls "*|*" baseline-wss "*)
    mkdir -p "$TLS_DIR"
    (
        cd "$TLS_DIR"
        for key in ca.key server.key; do openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$key" 2>/dev/null; done
        openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=navsync-bench-ca
        openssl req -new -key server.key -subj /CN=127.0.0.1 -out server.csr
        printf 'subjectAltName=IP:127.0.0.1\n' > san.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext \
            -out server.pem 2>/dev/null
    ) ;;
esac

STARTED=()
stop_all() {
    for pid in "${STARTED[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    done
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# start_server SYSTEM PORT: starts a fresh server on 127.0.0.1:PORT, sets SERVER_PID.
start_server() {
    local system=$1 port=$2 log="$LOGS/$1-$2.log"
    case $system in
        navsync|navsync-ws|navsync-sse) "$BIN/navsyncd" --listen "127.0.0.1:$port" --state none --max-clients 20000 \
                     --log-level warn 2>"$log" & ;;
        navsync-grants) "$BIN/navsyncd" --listen "127.0.0.1:$port" --state none --max-clients 20000 \
                     --tokens "$GRANTS" --log-level warn 2>"$log" & ;;
        navsync-tls|navsync-wss) "$BIN/navsyncd" --listen "127.0.0.1:$port" --tls-listen "127.0.0.1:$((port + TLS_OFFSET))" \
                     --tls-cert "$TLS_DIR/server.pem" --tls-key "$TLS_DIR/server.key" --max-handshakes 80000 --state none \
                     --max-clients 20000 --log-level warn 2>"$log" & ;;
        baseline-tls|baseline-wss) "$BASE_BIN/navsyncd" --listen "127.0.0.1:$port" --tls-listen "127.0.0.1:$((port + TLS_OFFSET))" \
                     --tls-cert "$TLS_DIR/server.pem" --tls-key "$TLS_DIR/server.key" --max-handshakes 80000 --state none \
                     --max-clients 20000 --log-level warn 2>"$log" & ;;
        baseline|baseline-ws) "$BASE_BIN/navsyncd" --listen "127.0.0.1:$port" --state none --max-clients 20000 \
                     --log-level warn 2>"$log" & ;;
        redis)   redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
                     --client-output-buffer-limit 'pubsub 0 0 0' --maxclients 11000 \
                     --protected-mode no --daemonize no --logfile "$log" & ;;
        redis-tls) redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
                     --client-output-buffer-limit 'pubsub 0 0 0' --maxclients 11000 \
                     --tls-port "$((port + TLS_OFFSET))" --tls-cert-file "$TLS_DIR/server.pem" \
                     --tls-key-file "$TLS_DIR/server.key" --tls-ca-cert-file "$TLS_DIR/ca.pem" --tls-auth-clients no \
                     --protected-mode no --daemonize no --logfile "$log" & ;;
        nats)    "$NATS_SERVER" -a 127.0.0.1 -p "$port" -l "$log" & ;;
        floor)   "$BIN/navsync-bench" floor-server --port "$port" >"$log" 2>&1 & ;;
    esac
    SERVER_PID=$!
    STARTED+=("$SERVER_PID")
}

stop_server() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
    echo "memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "kernel: $(uname -r)"
    echo "os: $(. /etc/os-release; echo "$PRETTY_NAME")"
    echo "swift: $(swift --version 2>/dev/null | head -1)"
    echo "redis: $(redis-server --version | head -1)"
    [ -n "$NATS_SERVER" ] && echo "nats: $("$NATS_SERVER" --version | head -1)"
    echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "settings: NS='$NS' RUNS=$RUNS M=$M K=$K"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

port=$PORT_BASE
failed=0
for n in $NS; do
    for run in $(seq 1 "$RUNS"); do
        # Systems interleaved, so that a change in machine load hits all of them alike.
        for system in $SYSTEMS; do
            # A second try on a new port: another program may hold the first one.
            ok=false
            for attempt in 1 2; do
                port=$((port + 1))
                start_server "$system" "$port"
                speak=$system; [ "$system" = baseline ] && speak=navsync; [ "$system" = baseline-ws ] && speak=navsync-ws
                [ "$system" = baseline-tls ] && speak=navsync-tls; [ "$system" = baseline-wss ] && speak=navsync-wss
                tokens=()
                if [ "$system" = navsync-grants ]; then
                    speak=navsync
                    tokens=(--watcher-token "$VIEW_TOKEN" --actor-token "$CONTROL_TOKEN")
                fi
                tls=()
                case $system in navsync-tls|navsync-wss|redis-tls|baseline-tls|baseline-wss)
                    tls=(--tls-port "$((port + TLS_OFFSET))" --tls-ca "$TLS_DIR/ca.pem") ;;
                esac
                if "$BIN/navsync-bench" --system "$speak" --label "$system" --port "$port" --pid "$SERVER_PID" \
                        "${tokens[@]}" "${tls[@]}" \
                        -n "$n" -m "$M" -k "$K" --run "$run" --timeout 300 --quiet \
                        --json "$OUT/run-$system-$n-$run.json"; then
                    ok=true
                fi
                stop_server "$SERVER_PID"
                $ok && break
                say "$system n=$n run $run failed (attempt $attempt, port $port)"
            done
            $ok || failed=$((failed + 1))
        done
    done
done

echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
"$BIN/navsync-bench" report "$OUT" | tee "$OUT/table.txt"
gnuplot -e "dir='$OUT'" bench/plot.gp && say "plot: $OUT/fanout.png"
[ "$failed" = 0 ] || { say "$failed runs failed"; exit 1; }
