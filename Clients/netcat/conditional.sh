#!/usr/bin/env bash
# Change a room only if nobody else changed it since we looked:
# read the revision, then send the change guarded by IF <rev>.
#   ./conditional.sh 'PUSH blue checked'
# Prints OK <rev> when it applied. When another client got there first the
# daemon's "ERR conflict current=N" goes to stderr and the exit status is 1
# (then read again and decide).
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -eq 1 ] || { echo "usage: $0 'MUTATION'" >&2; exit 64; }
navsync_open
navsync_join "${NAVSYNC_ROOM:-main}"
navsync_ask "GET"
rev=$(echo "$reply" | cut -d' ' -f2)
navsync_ask "IF $rev $1"
echo "$reply"
