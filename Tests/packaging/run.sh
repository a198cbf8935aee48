#!/bin/bash
# Tests/packaging/run.sh [BIN_DIR]: `make install` and `make uninstall` into
# a throwaway DESTDIR, with the binaries `make build` made (no new build).
# Checks: every file in place with its paths filled in; one version in the
# binaries, man pages, CHANGELOG.md and docs/LIBRARY.md; every flag the
# binaries accept is in --help and every flag of --help in the rendered man
# page; the units pass systemd-analyze verify; bash completion offers the
# flags and commands; uninstall leaves no file behind.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.build/release}
bin=$(cd "$bin" && pwd)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/NavSyncCore/Version.swift)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: no version in Sources/NavSyncCore/Version.swift"; exit 1; }

# --- one version everywhere ---------------------------------------------
for program in navsyncd navsync navsync-abc; do
    out=$("$bin/$program" --version)
    [[ $out == "$program $version"* ]] && pass "$program --version: $out" || fail "$program --version says '$out', not $version"
done
grep -q "^## $version ([0-9-]*)" CHANGELOG.md && pass "CHANGELOG.md has $version" || fail "CHANGELOG.md has no '## $version (DATE)' heading"
newest=$(grep -m1 '^## ' CHANGELOG.md)
[[ $newest == "## $version ("* ]] && pass "CHANGELOG.md's newest heading is $version" ||
    fail "CHANGELOG.md's newest heading is '$newest', not $version: the work above it would ship as $version"
# What a running daemon says: HELLO and /metrics.
"$bin/navsyncd" --listen 127.0.0.1:0 --state none 2>"$tmp/version-daemon.log" &
version_daemon=$!
# Up to 20 s of sleeps for the listening line (10 s was short on a loaded machine).
for ((tries = 0; tries < 400; tries++)); do grep -q "listening on" "$tmp/version-daemon.log" 2>/dev/null && break; sleep 0.05; done
port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$tmp/version-daemon.log" | sed 's/.*://')
if [ -n "$port" ]; then
    hello=$(printf 'HELLO 1\n' | timeout 20 nc -N 127.0.0.1 "$port")
    [[ $hello == "HELLO navsync 1 $version" ]] && pass "HELLO says $version" || fail "HELLO says '$hello', not $version"
    metrics=$(printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' | timeout 20 nc -N 127.0.0.1 "$port")
    grep -q "^navsync_build_info{version=\"$version\"} 1" <<<"$metrics" && pass "/metrics says $version" ||
        fail "/metrics has no navsync_build_info for $version"
else
    fail "daemon for the version check did not start: $(cat "$tmp/version-daemon.log")"
fi
kill -TERM "$version_daemon"; wait "$version_daemon"
minor=${version%.*}
grep -q "from: \"$minor\.[0-9]*\"" docs/LIBRARY.md && pass "docs/LIBRARY.md depends on $minor" ||
    fail "docs/LIBRARY.md does not say from: \"$minor.x\""

# --- every accepted flag is in --help -----------------------------------
# The flags each binary's CommandLineSpec accepts, read from its source.
spec_flags() {
    perl -0777 -ne 'while (/(?:valued|switches):\s*\[(.*?)\]/sg) { my $l = $1; print "$1\n" while $l =~ /"([a-z-]+)"/g }' "$1"
}
for pair in navsyncd:Sources/navsyncd/DaemonOptions.swift navsync:Clients/navsync/ClientOptions.swift; do
    program=${pair%%:*} source=${pair#*:}
    help=$("$bin/$program" --help)
    flags=$(spec_flags "$source")
    [ -n "$flags" ] || fail "no flags read from $source"
    missing=""
    for flag in $flags; do grep -q -- "--$flag\b" <<<"$help" || missing+=" --$flag"; done
    [ -z "$missing" ] && pass "$program --help lists all $(wc -w <<<"$flags") flags" || fail "$program --help lacks$missing"
done

# --- make install -------------------------------------------------------
root=$tmp/root
make --no-print-directory install DESTDIR="$root" PREFIX=/usr BIN="$bin" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "FAIL: make install"; exit 1; }
expected=(
    usr/bin/navsyncd usr/bin/navsync usr/bin/navsync-abc
    usr/share/man/man8/navsyncd.8 usr/share/man/man1/navsync.1 usr/share/man/man1/navsync-abc.1
    usr/lib/systemd/system/navsyncd.service usr/lib/systemd/system/navsyncd@.service
    usr/share/navsync/abc-screens.json
    usr/share/bash-completion/completions/navsync usr/share/bash-completion/completions/navsyncd
    usr/share/bash-completion/completions/navsync-abc
)
for file in "${expected[@]}"; do
    [ -e "$root/$file" ] || fail "make install did not make /$file"
done
installed=$(cd "$root" && find . -type f -o -type l | sed 's|^\./||' | sort)
[ "$(wc -l <<<"$installed")" -eq "${#expected[@]}" ] && pass "make install: ${#expected[@]} files" ||
    fail "make install made other files than expected: $installed"
for program in navsyncd navsync navsync-abc; do
    [ -x "$root/usr/bin/$program" ] || fail "/usr/bin/$program is not executable"
done
if grep -rl '@[A-Z]*@' "$root/usr/share/man" "$root/usr/lib/systemd"; then fail "a placeholder was left unfilled"; fi
grep -q '^ExecStart=/usr/bin/navsyncd ' "$root/usr/lib/systemd/system/navsyncd.service" &&
    grep -q '^ExecStart=/usr/bin/navsyncd ' "$root/usr/lib/systemd/system/navsyncd@.service" &&
    pass "units start /usr/bin/navsyncd" || fail "units do not start /usr/bin/navsyncd"
cmp -s Clients/netcat/abc-screens.json "$root/usr/share/navsync/abc-screens.json" || fail "sample catalog differs"
grep -q '/usr/share/navsync/abc-screens.json' "$root/usr/share/man/man8/navsyncd.8" || fail "navsyncd.8 does not name the installed sample catalog"

# --- man pages agree with --help ----------------------------------------
for page in man8/navsyncd.8 man1/navsync.1 man1/navsync-abc.1; do
    program=$(basename "${page%.*}")
    grep -q "^\.TH .* \"navsync $version\"" "$root/usr/share/man/$page" || fail "$page is not marked navsync $version"
    rendered=$(LC_ALL=C MANWIDTH=1000 man --warnings -l "$root/usr/share/man/$page" 2>"$tmp/man.err" | col -b)
    [ -s "$tmp/man.err" ] && fail "man -l $page warned: $(cat "$tmp/man.err")"
    [ -n "$rendered" ] || fail "man -l $page rendered nothing"
    # Every line of --help, words in the same order, must be in the page
    # (which reflows them, drops "usage:" and turns "commands:" into COMMANDS).
    page_words=$(tr -s ' \t\n' ' ' <<<"$rendered" | tr 'A-Z' 'a-z')
    missing=""
    while IFS= read -r line; do
        words=$(sed -e 's/^usage: //' -e 's/→/->/g' -e 's/^\([a-z][a-z ]*\):/\1/' <<<"$line" | tr -s ' \t' ' ' | sed 's/^ //; s/ $//' | tr 'A-Z' 'a-z')
        [ -z "$words" ] || [[ $page_words == *"$words"* ]] || missing+=$'\n  '"$line"
    done < <("$bin/$program" --help)
    [ -z "$missing" ] && pass "man -l $page renders, with every line of $program --help" || fail "$page lacks:$missing"
done
grep -q '^SIGNALS' <<<"$(LC_ALL=C man -l "$root/usr/share/man/man8/navsyncd.8" 2>/dev/null | col -b)" || fail "navsyncd.8 has no SIGNALS"
for command in $("$bin/navsync" --help | awk '/^commands:/{c=1;next} /^[^ ]/{c=0} c && /^  [a-z]/{print $1}'); do
    grep -q "^ *$command\b" <<<"$(LC_ALL=C MANWIDTH=1000 man -l "$root/usr/share/man/man1/navsync.1" 2>/dev/null | col -b)" ||
        fail "navsync.1 lacks the command $command"
done

# --- the units ------------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
    # verify resolves ExecStart= on the real root, so check a copy whose
    # binary path points into the staging root; the man page named in
    # Documentation= is not installed here (Tests/packaging/deb.sh checks it).
    mkdir -p "$tmp/units"
    for unit in navsyncd.service navsyncd@.service; do
        sed "s|/usr/bin/navsyncd|$root/usr/bin/navsyncd|" "$root/usr/lib/systemd/system/$unit" > "$tmp/units/$unit"
    done
    cp "$tmp/units/navsyncd@.service" "$tmp/units/navsyncd@7001.service"
    if out=$(systemd-analyze verify --man=no "$tmp/units/navsyncd.service" "$tmp/units/navsyncd@7001.service" 2>&1) && [ -z "$out" ]; then
        pass "systemd-analyze verify: both units clean"
    else
        fail "systemd-analyze verify: $out"
    fi
fi

# --- bash completion ------------------------------------------------------
completion=$root/usr/share/bash-completion/completions/navsync
flags=$(PATH="$root/usr/bin:$PATH" bash -c "source '$completion'; _navsync_flags navsyncd" | tr '\n' ' ')
[[ $flags == *--max-clients* && $flags == *--backplane* ]] && pass "completion: navsyncd flags" || fail "completion flags: $flags"
commands=$(PATH="$root/usr/bin:$PATH" bash -c "source '$completion'; _navsync_commands navsync" | tr '\n' ' ')
[[ $commands == "ui get state select push pop root next open present dismiss if watch screens stats rooms who ping raw keygen token link " ]] &&
    pass "completion: navsync commands" || fail "completion commands: $commands"
if [ -r /usr/share/bash-completion/bash_completion ]; then
    complete_line() {  # words... ; the last word is the one being completed
        PATH="$root/usr/bin:$PATH" bash -c '
            source /usr/share/bash-completion/bash_completion; source "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            function_name=$(complete -p "$1" | sed "s/.*-F \([^ ]*\) .*/\1/")
            "$function_name" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf "%s " "${COMPREPLY[@]}"' _ "$completion" "$@"
    }
    [[ $(complete_line navsync pr) == "present " ]] && pass "completion: navsync pr -> present" || fail "navsync pr -> '$(complete_line navsync pr)'"
    [[ $(complete_line navsyncd --log-level "") == "debug info warn error " ]] && pass "completion: --log-level values" ||
        fail "navsyncd --log-level -> '$(complete_line navsyncd --log-level "")'"
    [[ $(complete_line navsync --room x if 4 "") == "select push pop root next open present dismiss " ]] &&
        pass "completion: if REV -> a change" || fail "navsync if 4 -> '$(complete_line navsync --room x if 4 "")'"
    # Screen names come from the daemon the command line names.
    "$root/usr/bin/navsyncd" --listen 127.0.0.1:0 --state none \
        --screens "$root/usr/share/navsync/abc-screens.json" 2>"$tmp/daemon.log" &
    daemon=$!
    for ((tries = 0; tries < 400; tries++)); do grep -q "listening on" "$tmp/daemon.log" 2>/dev/null && break; sleep 0.05; done
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$tmp/daemon.log" | sed 's/.*://')
    if [ -n "$port" ]; then
        screens=$(complete_line navsync --connect "127.0.0.1:$port" push "")
        [[ $screens == "viewA viewB viewC " ]] && pass "completion: push -> the daemon's screens" || fail "push -> '$screens'"
    else
        fail "daemon for the completion test did not start: $(cat "$tmp/daemon.log")"
    fi
    kill -TERM "$daemon"; wait "$daemon"
fi

# --- make uninstall ------------------------------------------------------
make --no-print-directory uninstall DESTDIR="$root" PREFIX=/usr >"$tmp/uninstall.log" 2>&1 ||
    { cat "$tmp/uninstall.log"; fail "make uninstall"; }
left=$(cd "$root" && find . -type f -o -type l)
[ -z "$left" ] && pass "make uninstall removed every file" || fail "make uninstall left: $left"

# --- the default PREFIX ----------------------------------------------------
root=$tmp/local
make --no-print-directory install DESTDIR="$root" BIN="$bin" >"$tmp/install.log" 2>&1 || fail "make install (default PREFIX)"
[ -x "$root/usr/local/bin/navsyncd" ] &&
    grep -q '^ExecStart=/usr/local/bin/navsyncd ' "$root/usr/local/lib/systemd/system/navsyncd.service" &&
    [ -e "$root/usr/local/share/man/man1/navsync.1" ] && pass "default PREFIX is /usr/local" || fail "default PREFIX install"
make --no-print-directory uninstall DESTDIR="$root" >/dev/null 2>&1
[ -z "$(cd "$root" && find . -type f -o -type l)" ] || fail "uninstall (default PREFIX) left files"

if [ "$failures" -gt 0 ]; then echo "packaging: $failures failed"; exit 1; fi
echo "packaging: all passed"
