#!/usr/bin/env bash
# Walks the A -> B -> C -> A flow of abc-screens.json, handing data from
# viewA to viewB the way an enum case carries its associated value.
# Start the daemon with:  navsyncd --screens Clients/netcat/abc-screens.json
set -euo pipefail
. "$(dirname "$0")/common.sh"
data="${1:-some data from A}"
navsync_send \
    "JOIN ${NAVSYNC_ROOM:-main}" \
    "SELECT viewA" \
    "NEXT $data" \
    "GET" \
    "NEXT" \
    "GET" \
    "NEXT" \
    "GET" | grep '^STATE\|^ERR' | tail -n 3
