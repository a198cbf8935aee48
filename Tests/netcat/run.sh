#!/usr/bin/env bash
# Runs the Clients/netcat examples against live daemons, the way a user
# would: real nc, real sockets. Usage: Tests/netcat/run.sh BIN_DIR
# Every wait is bounded; every daemon started here is stopped by its PID.
set -uo pipefail
bin="${1:-.build/release}"
here="$(cd "$(dirname "$0")" && pwd)"
examples="$here/../../Clients/netcat"
work="$(mktemp -d)"
pids=()
passed=0
failed=0

cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

# start_daemon NAME ARGS... : starts navsyncd on port 0, sets NAVSYNC_ADDR.
start_daemon() {
    local name="$1"; shift
    "$bin/navsyncd" --listen 127.0.0.1:0 --state none "$@" 2>"$work/$name.log" &
    pids+=($!)
    for _ in $(seq 1 500); do
        local line
        line=$(grep -o 'listening on 127\.0\.0\.1:[0-9]*' "$work/$name.log" | head -n 1)
        if [ -n "$line" ]; then
            export NAVSYNC_ADDR="${line#listening on }"
            return 0
        fi
        sleep 0.01
    done
    echo "daemon $name did not start:"; cat "$work/$name.log"; return 1
}

# check NAME EXPECTED ACTUAL
check() {
    if [ "$2" == "$3" ]; then
        passed=$((passed + 1)); echo "ok   $1"
    else
        failed=$((failed + 1)); echo "FAIL $1"; echo "  expected: $(printf '%q' "$2")"; echo "  actual:   $(printf '%q' "$3")"
    fi
}

# wait_for_lines FILE N : until FILE has N lines, at most 5 s.
wait_for_lines() {
    for _ in $(seq 1 500); do
        [ "$(wc -l < "$1")" -ge "$2" ] && return 0
        sleep 0.01
    done
    return 1
}

start_daemon rgb || exit 1
check "GET one-liner" "STATE 0 /red" "$(printf 'GET\n' | timeout 5 nc -N "${NAVSYNC_ADDR%:*}" "${NAVSYNC_ADDR##*:}")"

timeout 10 "$examples/watch.sh" > "$work/watch.out" &
watcher=$!
pids+=($watcher)
wait_for_lines "$work/watch.out" 1
check "select.sh" "OK 1" "$(timeout 5 "$examples/select.sh" green)"
check "select.sh with data" "OK 2" "$(timeout 5 "$examples/select.sh" blue a note)"
check "deep-link.sh" "$(printf 'OK 3\nSTATE 3 /red/green/blue:hello%%20world')" \
    "$(timeout 5 "$examples/deep-link.sh" '/red/green/blue:hello%20world')"
check "conditional.sh applies" "OK 4" "$(timeout 5 "$examples/conditional.sh" 'POP')"
check "deep-link.sh bad route" "ERR bad-route" \
    "$(timeout 5 "$examples/deep-link.sh" '/red/blue:%zz' | head -n 1 | cut -d' ' -f1-2)"
wait_for_lines "$work/watch.out" 5
check "watch.sh streams every change" \
    "$(printf 'STATE 0 /red\nEVENT 1 select /green\nEVENT 2 select /blue:a%%20note\nEVENT 3 open /red/green/blue:hello%%20world\nEVENT 4 pop /red/green')" \
    "$(head -n 5 "$work/watch.out")"
kill "$watcher" 2>/dev/null

start_daemon abc --screens "$examples/abc-screens.json" || exit 1
check "abc-cycle.sh walks A -> B -> C -> A" \
    "$(printf 'STATE 1 /viewB:some%%20data%%20from%%20A\nSTATE 2 /viewC\nSTATE 3 /viewA')" \
    "$(timeout 5 "$examples/abc-cycle.sh")"
check "viewB refuses to come without data" "ERR bad-args" \
    "$(printf 'PUSH viewB\n' | timeout 5 nc -N "${NAVSYNC_ADDR%:*}" "${NAVSYNC_ADDR##*:}" | cut -d' ' -f1-2)"

echo "netcat: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
