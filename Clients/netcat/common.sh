# Sourced by the example scripts: where the daemon is.
# NAVSYNC_ADDR=host:port (the client's variable too), default 127.0.0.1:7878.
addr="${NAVSYNC_ADDR:-127.0.0.1:7878}"
host="${addr%:*}"
port="${addr##*:}"

# One request, its reply, done: -N half-closes after stdin ends, so nc
# waits for the reply and the server closes once it has answered.
navsync_send() {
    printf '%s\n' "$@" | nc -N "$host" "$port"
}
