#!/usr/bin/env bash
# Change a room only if nobody else changed it since we looked:
# read the revision, then send the change guarded by IF <rev>.
#   ./conditional.sh 'PUSH blue checked'
# Prints OK <rev> when it applied, or "ERR conflict current=N" when another
# client got there first (then read again and decide).
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -eq 1 ] || { echo "usage: $0 'MUTATION'" >&2; exit 64; }
room="${NAVSYNC_ROOM:-main}"
rev=$(navsync_send "JOIN $room" "GET" | tail -n 1 | cut -d' ' -f2)
navsync_send "JOIN $room" "IF $rev $1" | tail -n 1
