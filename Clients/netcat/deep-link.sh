#!/usr/bin/env bash
# Replace a room's whole stack in one step, like following a deep link.
#   ./deep-link.sh '/red/green/blue:hello%20world'
# Data in a route is percent-encoded; see docs/PROTOCOL.md.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -eq 1 ] || { echo "usage: $0 ROUTE" >&2; exit 64; }
navsync_send "JOIN ${NAVSYNC_ROOM:-main}" "OPEN $1" "GET" | tail -n 2
