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
# The scripts' wait for one reply; generous, for a machine busy building.
export NAVSYNC_TIMEOUT=10
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
    for _ in $(seq 1 2000); do
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

# wait_for_lines FILE N : until FILE has N lines, at most 20 s (sleeps
# alone; a loaded machine makes it longer, which costs nothing on success).
wait_for_lines() {
    for _ in $(seq 1 2000); do
        [ "$(wc -l < "$1")" -ge "$2" ] && return 0
        sleep 0.01
    done
    return 1
}

# script NAME STATUS STDOUT STDERR_PREFIX -- COMMAND... : runs an example
# script and checks its exit status, its whole stdout, and how stderr begins.
script() {
    local name="$1" status="$2" out="$3" err="$4"; shift 5
    local actual_out actual_status
    actual_out="$(timeout 30 "$@" 2>"$work/stderr")"
    actual_status=$?
    check "$name: exit status" "$status" "$actual_status"
    check "$name: stdout" "$out" "$actual_out"
    check "$name: stderr" "$err" "$(head -c "${#err}" "$work/stderr")"
}

nc_get() { printf '%s\n' "$@" | timeout 20 nc -N "${NAVSYNC_ADDR%:*}" "${NAVSYNC_ADDR##*:}"; }

start_daemon rgb || exit 1
check "GET one-liner" "STATE 0 /red" "$(nc_get GET)"

# Bounded at 60 s, stopped by its PID once read: with 10 s, the changes
# below and their processes had to fit in its life on a loaded machine.
timeout 60 "$examples/watch.sh" > "$work/watch.out" &
watcher=$!
pids+=($watcher)
wait_for_lines "$work/watch.out" 1
script "select.sh" 0 "OK 1" "" -- "$examples/select.sh" green
script "select.sh with data" 0 "OK 2" "" -- "$examples/select.sh" blue a note
script "deep-link.sh" 0 "$(printf 'OK 3\nSTATE 3 /red/green/blue:hello%%20world')" "" \
    -- "$examples/deep-link.sh" '/red/green/blue:hello%20world'
script "conditional.sh applies" 0 "OK 4" "" -- "$examples/conditional.sh" 'POP'
wait_for_lines "$work/watch.out" 5
check "watch.sh streams every change" \
    "$(printf 'STATE 0 /red\nEVENT 1 select /green\nEVENT 2 select /blue:a%%20note\nEVENT 3 open /red/green/blue:hello%%20world\nEVENT 4 pop /red/green')" \
    "$(head -n 5 "$work/watch.out")"
kill "$watcher" 2>/dev/null

# Refusals stop the script at the first ERR: on stderr, exit status 1, and
# nothing after it is sent (so room main, at revision 4, stays as it is).
script "select.sh in a bad room" 1 "" "select.sh: JOIN lobby!: ERR bad-args " \
    -- env NAVSYNC_ROOM='lobby!' "$examples/select.sh" red
script "select.sh unknown screen" 1 "" "select.sh: SELECT nosuch: ERR unknown-screen " \
    -- "$examples/select.sh" nosuch
script "deep-link.sh bad route" 1 "" "deep-link.sh: OPEN /red/blue:%zz: ERR bad-route " \
    -- "$examples/deep-link.sh" '/red/blue:%zz'
script "deep-link.sh in a bad room" 1 "" "deep-link.sh: JOIN no/such: ERR bad-args " \
    -- env NAVSYNC_ROOM='no/such' "$examples/deep-link.sh" '/blue'
script "conditional.sh in a bad room" 1 "" "conditional.sh: JOIN a b: ERR bad-args " \
    -- env NAVSYNC_ROOM='a b' "$examples/conditional.sh" 'ROOT'
script "watch.sh in a bad room" 1 "" "watch.sh: JOIN lobby!: ERR bad-args " \
    -- env NAVSYNC_ROOM='lobby!' "$examples/watch.sh"
script "abc-cycle.sh against the built-in catalog" 1 "" "abc-cycle.sh: SELECT viewA: ERR unknown-screen " \
    -- "$examples/abc-cycle.sh"
check "refused scripts left room main alone" "STATE 4 /red/green" "$(nc_get GET)"
check "refused scripts created no room" "STAT rooms 1" "$(nc_get STATS | grep '^STAT rooms ')"
script "select.sh with no daemon" 1 "" "select.sh: cannot reach navsyncd at 127.0.0.1:1 " \
    -- env NAVSYNC_ADDR="127.0.0.1:1" "$examples/select.sh" red

# Sheets (protocol 1.1): presented over the stack, dismissed from the top.
start_daemon sheets || exit 1
script "sheet.sh presents" 0 "$(printf 'OK 1\nSTATE 1 /red#green')" "" -- "$examples/sheet.sh" green
script "sheet.sh presents with data" 0 "$(printf 'OK 2\nSTATE 2 /red#green#blue:pick%%20one')" "" \
    -- "$examples/sheet.sh" blue pick one
script "sheet.sh -d dismisses the top one" 0 "$(printf 'OK 3\nSTATE 3 /red#green')" "" -- "$examples/sheet.sh" -d
script "sheet.sh -d again" 0 "$(printf 'OK 4\nSTATE 4 /red')" "" -- "$examples/sheet.sh" -d
script "sheet.sh -d with no sheet" 1 "" "sheet.sh: DISMISS: ERR no-sheet " -- "$examples/sheet.sh" -d
script "sheet.sh unknown screen" 1 "" "sheet.sh: PRESENT nosuch: ERR unknown-screen " \
    -- "$examples/sheet.sh" nosuch
script "sheet.sh in a bad room" 1 "" "sheet.sh: JOIN lobby!: ERR bad-args " \
    -- env NAVSYNC_ROOM='lobby!' "$examples/sheet.sh" green

# wait_for_file FILE CONTENT : until FILE holds CONTENT, at most 20 s.
wait_for_file() {
    for _ in $(seq 1 2000); do
        [ "$(cat "$1" 2>/dev/null)" == "$2" ] && return 0
        sleep 0.01
    done
    return 1
}

# resume_run OUT LINES REV : runs resume.sh on $revs into OUT until it has
# printed LINES lines and noted revision REV, then stops it as Ctrl-C would.
resume_run() {
    timeout 60 "$examples/resume.sh" "$revs" > "$1" &
    local resumer=$!
    pids+=($resumer)
    wait_for_lines "$1" "$2"
    wait_for_file "$revs" "$3"
    kill "$resumer" 2>/dev/null; wait "$resumer" 2>/dev/null
}

# Resuming (protocol 1.1): a second run of resume.sh carries on from the
# revision the first one saw last, with the changes made in between.
revs="$work/main.rev"
timeout 60 "$examples/resume.sh" "$revs" > "$work/resume1.out" &
resumer=$!
pids+=($resumer)
wait_for_lines "$work/resume1.out" 1
nc_get 'PUSH green' > /dev/null
wait_for_file "$revs" 5
kill "$resumer" 2>/dev/null; wait "$resumer" 2>/dev/null
check "resume.sh first run" "$(printf 'STATE 4 /red\nEVENT 5 push /red/green')" "$(cat "$work/resume1.out")"
nc_get 'PUSH blue' 'PRESENT green' > /dev/null
resume_run "$work/resume2.out" 3 7
check "resume.sh second run continues with what it missed" \
    "$(printf 'CONTINUE 5\nEVENT 6 push /red/green/blue\nEVENT 7 present /red/green/blue#green')" \
    "$(cat "$work/resume2.out")"
# A revision the daemon never reached (it restarted without its state): a whole STATE.
echo 99 > "$revs"
resume_run "$work/resume3.out" 1 7
check "resume.sh ahead of the daemon gets a resync" "STATE 7 /red/green/blue#green" "$(cat "$work/resume3.out")"
echo 'x1' > "$revs"
script "resume.sh with a broken revision file" 1 "" "resume.sh: WATCH x1: ERR bad-args " \
    -- "$examples/resume.sh" "$revs"

start_daemon abc --screens "$examples/abc-screens.json" || exit 1
script "abc-cycle.sh walks A -> B -> C -> A" 0 \
    "$(printf 'STATE 1 /viewB:some%%20data%%20from%%20A\nSTATE 2 /viewC\nSTATE 3 /viewA')" "" \
    -- "$examples/abc-cycle.sh"
check "viewB refuses to come without data" "ERR bad-args" "$(nc_get 'PUSH viewB' | cut -d' ' -f1-2)"

echo "netcat: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
