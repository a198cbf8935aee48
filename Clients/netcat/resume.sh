#!/usr/bin/env bash
# Follow a room and, when run again later, carry on where the last run
# stopped: no change missed, none printed twice (protocol 1.1).
#   ./resume.sh ~/.navsync-main.rev      (Ctrl-C, later the same again)
# The file keeps the last revision printed. Without it the watch starts
# afresh (STATE first). With it the script sends WATCH <rev>, and the daemon
# answers CONTINUE <rev> followed by every change made since, as EVENT lines
# — or, when it no longer holds them all (restarted, or more changed than
# its --history), a whole new STATE. Both are printed as they come.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -eq 1 ] || { echo "usage: $0 REV_FILE" >&2; exit 64; }
rev_file="$1"
rev=""
[ -s "$rev_file" ] && rev="$(cat "$rev_file")"
navsync_open
navsync_join "${NAVSYNC_ROOM:-main}"
navsync_ask "WATCH${rev:+ $rev}"   # a revision the daemon cannot read is its ERR bad-args

# remember LINE: prints it, then notes its revision (after printing, so a
# run stopped in between prints that line again rather than losing it).
remember() {
    printf '%s\n' "$1"
    local words
    read -r -a words <<< "$1"
    case "${words[0]}" in
        STATE|EVENT|CONTINUE) printf '%s\n' "${words[1]}" > "$rev_file.tmp" && mv "$rev_file.tmp" "$rev_file" ;;
    esac
}
remember "$reply"
while IFS= read -r line <&"$navsync_from"; do
    remember "$line"
done
navsync_fail "navsyncd at $addr closed the connection"
