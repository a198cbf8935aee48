#!/usr/bin/env bash
# Walks the A -> B -> C -> A flow of abc-screens.json, handing data from
# viewA to viewB the way an enum case carries its associated value, and
# prints the room's STATE after each step.
# Start the daemon with:  navsyncd --screens Clients/netcat/abc-screens.json
# Against a daemon with another catalog the first SELECT is refused
# (ERR unknown-screen on stderr, exit status 1) and nothing changes.
set -euo pipefail
. "$(dirname "$0")/common.sh"
data="${1:-some data from A}"
navsync_open
navsync_join "${NAVSYNC_ROOM:-main}"
navsync_ask "SELECT viewA"
for step in "NEXT $data" "NEXT" "NEXT"; do
    navsync_ask "$step"
    navsync_ask "GET"
    echo "$reply"
done
