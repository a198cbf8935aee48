#!/usr/bin/env bash
# Put a sheet over a room's screen, or take the top one away (protocol 1.1).
#   ./sheet.sh green                 present screen green as a sheet
#   ./sheet.sh blue pick a colour    ... with data
#   ./sheet.sh -d                    dismiss the sheet on top
# Prints the OK and the room's new STATE: sheets follow the stack after `#`,
# as in /red/green#blue:pick%20a%20colour. A refusal (no sheet to dismiss,
# a screen the catalog does not have, the depth limit) goes to stderr with
# exit status 1.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -ge 1 ] || { echo "usage: $0 SCREEN [DATA...]  |  $0 -d" >&2; exit 64; }
if [ "$1" = "-d" ]; then
    [ $# -eq 1 ] || { echo "usage: $0 -d" >&2; exit 64; }
    command="DISMISS"
else
    command="PRESENT $*"
fi
navsync_open
navsync_join "${NAVSYNC_ROOM:-main}"
navsync_ask "$command"
echo "$reply"
navsync_ask "GET"
echo "$reply"
