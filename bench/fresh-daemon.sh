# Sourced by bench/smoke.sh and bench/kit.sh: a fresh memory-only navsyncd on
# a free loopback port for one script. Sets $work (a temp directory), $daemon
# (its PID) and $port; an EXIT trap stops the daemon by its PID and removes
# $work. Needs $BIN; $1 names the caller in the error message.
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
[ -n "$port" ] || { echo "$1: navsyncd did not start"; cat "$work/daemon.log"; exit 1; }
