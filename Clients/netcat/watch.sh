#!/usr/bin/env bash
# Follow a room: the current state first, then one EVENT line per change,
# until you press Ctrl-C.   ./watch.sh   |   NAVSYNC_ROOM=lobby ./watch.sh
# A refused JOIN or WATCH goes to stderr with exit status 1.
set -euo pipefail
. "$(dirname "$0")/common.sh"
navsync_open
navsync_join "${NAVSYNC_ROOM:-main}"
navsync_ask "WATCH"
echo "$reply"
# Our side of the connection stays open while we read: the daemon treats
# the end of a client's input as the client leaving, watching or not.
while IFS= read -r line <&"$navsync_from"; do
    printf '%s\n' "$line"
done
navsync_fail "navsyncd at $addr closed the connection"
