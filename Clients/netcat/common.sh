# Sourced by the example scripts: where the daemon is, and one conversation
# with it in which every command waits for its reply before the next is sent.
# NAVSYNC_ADDR=host:port (the client's variable too), default 127.0.0.1:7878.
#
# Why not pipe all the lines into nc at once? The daemon would run them all,
# whatever the replies say: a JOIN refused for a bad room name would leave the
# connection in room main, and the SELECT behind it would change main. So the
# scripts keep nc running beside them (a bash coprocess), send one line, read
# its answer, and stop at the first ERR: it goes to stderr, the exit status
# is 1, and nothing after it is sent.
addr="${NAVSYNC_ADDR:-127.0.0.1:7878}"
host="${addr%:*}"
port="${addr##*:}"
host="${host#[}"; host="${host%]}"   # [::1]:7878 -> ::1
# Seconds to wait for one reply.
reply_timeout="${NAVSYNC_TIMEOUT:-5}"

# A write to an nc that has already gone must fail with a message, not kill us.
trap '' PIPE

# navsync_open: starts nc. -N closes nc's sending side when we close ours, so
# the daemon knows we are done and ends the connection.
navsync_open() {
    coproc NAVSYNC_NC { exec nc -N "$host" "$port" 2>/dev/null; }
    # Our own copies of the pipes: bash drops NAVSYNC_NC once nc exits.
    exec {navsync_to}>&"${NAVSYNC_NC[1]}" {navsync_from}<&"${NAVSYNC_NC[0]}"
    navsync_pid=$NAVSYNC_NC_PID
    trap navsync_close EXIT
}

# navsync_close: ends our side; nc then ends once the daemon has answered.
navsync_close() {
    [ -n "${navsync_to:-}" ] && exec {navsync_to}>&-
    navsync_to=""
}

# navsync_fail MESSAGE: says why on stderr and exits 1.
navsync_fail() {
    echo "$(basename "$0"): $1" >&2
    exit 1
}

# navsync_ask LINE: sends LINE and reads its one-line answer into $reply.
# An ERR answer, or none at all, ends the script with status 1.
navsync_ask() {
    printf '%s\n' "$1" >&"$navsync_to" 2>/dev/null ||
        navsync_fail "cannot reach navsyncd at $addr"
    local status=0
    IFS= read -r -t "$reply_timeout" reply <&"$navsync_from" || status=$?
    if [ "$status" -gt 128 ]; then
        navsync_fail "no answer within ${reply_timeout}s from navsyncd at $addr to: $1"
    elif [ "$status" -ne 0 ]; then
        navsync_fail "cannot reach navsyncd at $addr (or it closed the connection)"
    fi
    case "$reply" in
        ERR\ *) navsync_fail "$1: $reply" ;;
    esac
}

# navsync_join ROOM: moves the conversation to ROOM (its STATE reply is dropped).
navsync_join() {
    navsync_ask "JOIN $1"
}
