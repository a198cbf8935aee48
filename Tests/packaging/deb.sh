#!/bin/bash
# Tests/packaging/deb.sh PACKAGE.deb (make test-deb, as root, after make deb)
#
# Installs the package on this machine, checks no binary needs a Swift
# library, starts the installed daemon as the package's user with the
# installed unit's command line (plus --listen 127.0.0.1:0 through the
# defaults file's NAVSYNCD_OPTS, as an operator would add flags) while the
# Swift toolchain is hidden from it, talks to it with the installed client,
# stops it, then removes and purges the package and checks what is left.
# Prints the package's sizes, the daemon's start-up time and idle RSS.
set -uo pipefail
cd "$(dirname "$0")/../.."
deb=$(realpath "$1")
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
[ "$(id -u)" = 0 ] || { echo "deb.sh installs a package: run it as root"; exit 1; }
if dpkg-query -W -f='${Status}' navsync 2>/dev/null | grep -q installed; then
    echo "navsync is installed already; this test would replace and purge it"; exit 1
fi
version=$(dpkg-deb -f "$deb" Version)
tmp=$(mktemp -d)
daemon_pid=""
cleanup() {
    [ -n "$daemon_pid" ] && kill -KILL "$daemon_pid" 2>/dev/null
    dpkg-query -W -f='${Status}' navsync 2>/dev/null | grep -q "ok installed\|config-files" &&
        dpkg --purge navsync >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

# Waits (at most 20 s of sleeps; 10 s was short on a loaded machine) until
# FILE has a line matching PATTERN.
wait_for_line() {
    local file=$1 pattern=$2 tries=0
    until grep -q "$pattern" "$file" 2>/dev/null; do
        tries=$((tries + 1)); [ $tries -gt 400 ] && return 1; sleep 0.05
    done
}

echo "package: $(du -k "$deb" | cut -f1) KiB, Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB"
echo "Depends: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Depends | grep -qi swift && fail "the package depends on something Swift"

# --- install ------------------------------------------------------------
dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; echo "FAIL: dpkg -i"; exit 1; }
pass "dpkg -i $version"
for program in navsyncd navsync navsync-abc; do
    libraries=$(ldd "/usr/bin/$program")
    grep -qi "swift\|not found" <<<"$libraries" && fail "/usr/bin/$program needs: $libraries"
    out=$(env -i PATH=/usr/bin:/bin "/usr/bin/$program" --version)
    [[ $out == "$program $version"* ]] || fail "$program --version: '$out'"
done
pass "ldd: no libswift*, nothing missing; --version says $version with PATH=/usr/bin:/bin"
getent passwd navsync | grep -q ':/var/lib/navsync:/usr/sbin/nologin$' && pass "user navsync (home /var/lib/navsync, nologin)" ||
    fail "no navsync user: $(getent passwd navsync)"
[ "$(stat -c '%U:%G %a' /var/lib/navsync)" = "navsync:navsync 750" ] && pass "/var/lib/navsync navsync:navsync 750" ||
    fail "/var/lib/navsync is $(stat -c '%U:%G %a' /var/lib/navsync)"
ls /etc/systemd/system/*.wants/navsyncd*.service >/dev/null 2>&1 && fail "the unit was enabled by the package"
for page in navsyncd navsync navsync-abc; do
    path=$(man -w "$page" 2>/dev/null)
    [ -n "$path" ] && LC_ALL=C man -l "$path" 2>/dev/null | grep -q "navsync $version" || fail "man $page"
done
pass "man navsyncd, navsync, navsync-abc found and rendered"
if out=$(systemd-analyze verify /lib/systemd/system/navsyncd.service 2>&1) && [ -z "$out" ]; then
    pass "systemd-analyze verify navsyncd.service"
else fail "systemd-analyze verify navsyncd.service: $out"; fi
cp /lib/systemd/system/navsyncd@.service "$tmp/navsyncd@7001.service"
if out=$(systemd-analyze verify "$tmp/navsyncd@7001.service" 2>&1) && [ -z "$out" ]; then
    pass "systemd-analyze verify navsyncd@7001.service"
else fail "systemd-analyze verify navsyncd@7001.service: $out"; fi

# --- run it as the unit would --------------------------------------------
unit=/lib/systemd/system/navsyncd.service
user=$(sed -n 's/^User=//p' "$unit")
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
sed -i 's/^NAVSYNCD_OPTS=.*/NAVSYNCD_OPTS="--listen 127.0.0.1:0"/' /etc/default/navsyncd
# shellcheck disable=SC1091
NAVSYNCD_OPTS=$(. /etc/default/navsyncd; echo "$NAVSYNCD_OPTS")
command_line=${exec_start//\$NAVSYNCD_OPTS/$NAVSYNCD_OPTS}
echo "command line: $command_line (as $user)"
# The toolchain's directory is covered by an empty tmpfs in a mount
# namespace of the daemon's own, so it could not load a Swift library even
# by an absolute path.
hide_swift=""
swift_root=$(command -v swift >/dev/null && dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
if [ -n "$swift_root" ] && [ "$swift_root" != / ] && unshare --mount true 2>/dev/null; then
    hide_swift="mount -t tmpfs none $swift_root &&"
fi
start=$(date +%s%N)
# shellcheck disable=SC2086
unshare --mount sh -c "$hide_swift exec setpriv --reuid=$user --regid=$user --init-groups --no-new-privs \
    env -i PATH=/usr/bin:/bin $command_line" 2>"$tmp/daemon.log" &
daemon_pid=$!
if wait_for_line "$tmp/daemon.log" "listening on"; then
    ready=$((($(date +%s%N) - start) / 1000000))
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$tmp/daemon.log" | head -1 | sed 's/.*://')
    pass "started as $user${hide_swift:+ with $swift_root hidden}; first 'listening on' after $ready ms (port $port)"
else
    fail "the installed daemon did not start: $(cat "$tmp/daemon.log")"; exit 1
fi
daemon=$(pgrep -x -u "$user" navsyncd | head -1)
client() { env -i PATH=/usr/bin:/bin /usr/bin/navsync --connect "127.0.0.1:$port" "$@"; }
[ "$(client push blue)" = 1 ] && [ "$(client state)" = "1 /red/blue" ] && pass "installed client: push, state" ||
    fail "client push/state: $(client state 2>&1)"
curl -s "http://127.0.0.1:$port/metrics" | grep -q "navsync_build_info{version=\"$version\"} 1" &&
    pass "/metrics build info $version" || fail "/metrics has no build info $version"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" = 200 ] && pass "web page 200" || fail "web page"
printf 'HELLO 1\nQUIT\n' | timeout 20 nc 127.0.0.1 "$port" | grep -q "^HELLO navsync 1 $version" && pass "HELLO says $version" ||
    fail "HELLO does not say $version"
[ "$(stat -c %U /var/lib/navsync/state.json 2>/dev/null)" = "$user" ] && pass "state file written by $user" ||
    fail "no state file of $user in /var/lib/navsync"
sleep 1
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$daemon/status")
echo "idle RSS of the installed daemon: $rss KiB"
kill -HUP "$daemon"
wait_for_line "$tmp/daemon.log" "SIGHUP" && pass "SIGHUP (ExecReload) handled" || fail "no SIGHUP line"
kill -TERM "$daemon"
wait "$daemon_pid"; status=$?
daemon_pid=""
[ $status = 0 ] && grep -q "stopped" "$tmp/daemon.log" && pass "SIGTERM: stopped, exit 0" || fail "SIGTERM: exit $status"

# The source build beside it, for the RSS comparison.
if [ -x .build/release/navsyncd ]; then
    start=$(date +%s%N)
    .build/release/navsyncd --listen 127.0.0.1:0 --state "$tmp/state.json" 2>"$tmp/source.log" &
    source_pid=$!
    if wait_for_line "$tmp/source.log" "listening on"; then
        echo "source build: first 'listening on' after $((($(date +%s%N) - start) / 1000000)) ms"
        sleep 1
        echo "idle RSS of .build/release/navsyncd: $(awk '/^VmRSS/ { print $2 }' "/proc/$source_pid/status") KiB"
    fi
    kill -TERM "$source_pid"; wait "$source_pid"
fi

# --- remove, purge -------------------------------------------------------
mkdir -p /etc/systemd/system/multi-user.target.wants
ln -sf /lib/systemd/system/navsyncd.service /etc/systemd/system/multi-user.target.wants/navsyncd.service  # as enable would
dpkg -r navsync >"$tmp/dpkg.log" 2>&1 || fail "dpkg -r: $(cat "$tmp/dpkg.log")"
[ ! -e /usr/bin/navsyncd ] && [ ! -e /lib/systemd/system/navsyncd.service ] && [ -e /var/lib/navsync/state.json ] &&
    getent passwd navsync >/dev/null && [ -e /etc/default/navsyncd ] &&
    pass "dpkg -r: binaries and units gone; state, user and /etc/default kept" || fail "dpkg -r left the wrong things"
dpkg --purge navsync >"$tmp/dpkg.log" 2>&1 || fail "dpkg --purge: $(cat "$tmp/dpkg.log")"
left=""
for path in /var/lib/navsync /etc/default/navsyncd /etc/default/navsyncd-fleet \
            /etc/systemd/system/multi-user.target.wants/navsyncd.service /usr/share/doc/navsync /usr/share/navsync; do
    [ -e "$path" ] || [ -L "$path" ] && left+=" $path"
done
getent passwd navsync >/dev/null && left+=" user:navsync"
getent group navsync >/dev/null && left+=" group:navsync"
dpkg-query -W navsync >/dev/null 2>&1 && left+=" dpkg-record"
[ -z "$left" ] && pass "dpkg --purge: nothing left" || fail "dpkg --purge left:$left"

if [ "$failures" -gt 0 ]; then echo "deb: $failures failed"; exit 1; fi
echo "deb: all passed"
