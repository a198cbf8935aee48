#!/usr/bin/env bash
# Follow a room: the current state first, then one EVENT line per change,
# until you press Ctrl-C.   ./watch.sh   |   NAVSYNC_ROOM=lobby ./watch.sh
set -euo pipefail
. "$(dirname "$0")/common.sh"
# JOIN answers with the room's STATE and WATCH with it again; the first is
# dropped so the output starts with exactly one snapshot.
printf 'JOIN %s\nWATCH\n' "${NAVSYNC_ROOM:-main}" | nc -N "$host" "$port" | sed -u 1d
