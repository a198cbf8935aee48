#!/usr/bin/env bash
# Present one screen in a room: ./select.sh green   |   ./select.sh blue "a note"
# Prints the daemon's reply, e.g. "OK 4".
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -ge 1 ] || { echo "usage: $0 SCREEN [DATA...]" >&2; exit 64; }
navsync_send "JOIN ${NAVSYNC_ROOM:-main}" "SELECT $*" | tail -n 1
