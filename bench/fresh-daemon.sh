# Sourced by bench/smoke.sh and bench/kit.sh: a fresh memory-only navsyncd on
# a free loopback port for one script. Sets $work (a temp directory), $daemon
# (its PID) and $port; an EXIT trap stops the daemon by its PID and removes
# $work. Needs $BIN; $1 names the caller in the error message.
# With FRESH_DAEMON_TLS=1 the daemon also gets a TLS listener with a
# certificate made here for 127.0.0.1: $tls_port and $tls_ca (the CA to trust).
work=$(mktemp -d)
daemon=""
cleanup() {
    if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then kill "$daemon"; wait "$daemon" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

tls_flags=()
if [ "${FRESH_DAEMON_TLS:-}" = 1 ]; then
    (
        cd "$work"
        for key in ca.key server.key; do openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$key" 2>/dev/null; done
        openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=navsync-smoke-ca
        openssl req -new -key server.key -subj /CN=127.0.0.1 -out server.csr
        printf 'subjectAltName=IP:127.0.0.1\n' > san.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext \
            -out server.pem 2>/dev/null
    )
    tls_ca=$work/ca.pem
    tls_flags=(--tls-listen 127.0.0.1:0 --tls-cert "$work/server.pem" --tls-key "$work/server.key")
fi
"$BIN/navsyncd" --listen 127.0.0.1:0 "${tls_flags[@]}" --state none --log-level info 2>"$work/daemon.log" &
daemon=$!
port=""
tls_port=""
# Until every listener asked for has its line (the TLS one may come a moment
# after the plain one), at most 20 s of sleeps: a loaded machine is slow.
for _ in $(seq 1 400); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/daemon.log" | head -1)
    tls_port=$(sed -n 's/.*listening on tls:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/daemon.log" | head -1)
    [ -n "$port" ] && { [ "${FRESH_DAEMON_TLS:-}" != 1 ] || [ -n "$tls_port" ]; } && break
    sleep 0.05
done
[ -n "$port" ] || { echo "$1: navsyncd did not start"; cat "$work/daemon.log"; exit 1; }
if [ "${FRESH_DAEMON_TLS:-}" = 1 ]; then
    [ -n "$tls_port" ] || { echo "$1: navsyncd has no TLS listener"; cat "$work/daemon.log"; exit 1; }
fi
