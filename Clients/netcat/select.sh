#!/usr/bin/env bash
# Present one screen in a room: ./select.sh green   |   ./select.sh blue "a note"
# Prints the daemon's reply, e.g. "OK 4". A refusal (a bad room name, an
# unknown screen) goes to stderr with exit status 1, and nothing changes.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -ge 1 ] || { echo "usage: $0 SCREEN [DATA...]" >&2; exit 64; }
navsync_open
navsync_join "${NAVSYNC_ROOM:-main}"
navsync_ask "SELECT $*"
echo "$reply"
