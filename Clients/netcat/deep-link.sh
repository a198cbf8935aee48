#!/usr/bin/env bash
# Replace a room's whole stack in one step, like following a deep link.
#   ./deep-link.sh '/red/green/blue:hello%20world'
# Prints the OK and the room's new STATE. Data in a route is
# percent-encoded; see docs/PROTOCOL.md. A refused route goes to stderr
# with exit status 1.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -eq 1 ] || { echo "usage: $0 ROUTE" >&2; exit 64; }
navsync_open
navsync_join "${NAVSYNC_ROOM:-main}"
navsync_ask "OPEN $1"
echo "$reply"
navsync_ask "GET"
echo "$reply"
