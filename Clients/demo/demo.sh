#!/usr/bin/env bash
# make demo: the mission in one command. A fresh navsyncd (memory only, a
# free port), and a tmux session with three navsync clients side by side
# above a netcat loop that walks through select, push, a sheet presented
# and dismissed, pop, next, a deep link and root. Change the screen in any
# client and watch the others.
# A second window ("abc", Ctrl-b n) shows the NavSyncKit example: a second
# daemon with the A → B → C catalog, a navsync client, and two navsync-abc
# programs (seed 002's enum router as a Swift library user writes it), one
# driving the cycle and one following it.
#
#   Clients/demo/demo.sh [BIN_DIR]     (default .build/release)
#
# On a terminal it attaches; Ctrl-b d (detach) ends the demo and stops the
# daemon. Without a terminal (CI) it runs DEMO_SECONDS (default 6), prints
# what each pane shows, and stops.
set -euo pipefail

bin="${1:-.build/release}"
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
for tool in tmux nc; do
  command -v "$tool" >/dev/null || { echo "demo: $tool is needed (make deps installs it)" >&2; exit 1; }
done
[ -x "$bin/navsyncd" ] && [ -x "$bin/navsync" ] && [ -x "$bin/navsync-abc" ] \
  || { echo "demo: build first (make build)" >&2; exit 1; }
here="$(cd "$(dirname "$0")" && pwd)"

socket="navsync-demo-$$"
log="$(mktemp)"
abc_log="$(mktemp)"
driver="$(mktemp)"
"$bin/navsyncd" --listen 127.0.0.1:0 --state none 2>"$log" &
daemon=$!
"$bin/navsyncd" --listen 127.0.0.1:0 --state none --screens "$here/../netcat/abc-screens.json" 2>"$abc_log" &
abc_daemon=$!
cleanup() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  kill "$daemon" "$abc_daemon" 2>/dev/null || true
  wait "$daemon" "$abc_daemon" 2>/dev/null || true
  rm -f "$log" "$abc_log" "$driver"
}
trap cleanup EXIT

# wait_port LOG PID: the port a daemon logged as listening, or nothing if it died.
wait_port() {
  local found=""
  for _ in $(seq 200); do
    found="$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$1" | head -n 1)"
    [ -n "$found" ] && break
    kill -0 "$2" 2>/dev/null || break
    sleep 0.05
  done
  echo "$found"
}
port="$(wait_port "$log" "$daemon")"
[ -n "$port" ] || { echo "demo: navsyncd did not start:" >&2; cat "$log" >&2; exit 1; }
abc_port="$(wait_port "$abc_log" "$abc_daemon")"
[ -n "$abc_port" ] || { echo "demo: navsyncd (A → B → C) did not start:" >&2; cat "$abc_log" >&2; exit 1; }

# UTF-8 for the breadcrumb arrows; colour even if the caller's shell set NO_COLOR.
lang="${LANG:-}"
case "$lang" in *UTF-8*|*utf-8*|*UTF8*|*utf8*) ;; *) lang=C.UTF-8 ;; esac
client="env -u NO_COLOR LANG=$lang $bin/navsync --connect 127.0.0.1:$port"

# The driver: one protocol line at a time through netcat, with the reply.
cat >"$driver" <<EOF_DRIVER
while true; do
  for line in 'SELECT green' 'PUSH blue hello from netcat' 'PRESENT red' 'DISMISS' 'POP' 'NEXT' \\
              'OPEN /red/green/blue:a%20deep%20link' 'ROOT' 'NEXT'; do
    printf 'nc> %-40s %s\\n' "\$line" "\$(printf '%s\\n' "\$line" | nc -N 127.0.0.1 $port)"
    sleep 2.5
  done
done
EOF_DRIVER

width=242
height=32
tmux -L "$socket" -f /dev/null -u new-session -d -s demo -x "$width" -y "$height" "$client"
tmux -L "$socket" split-window -h -t demo "$client"
tmux -L "$socket" split-window -h -t demo "$client"
tmux -L "$socket" select-layout -t demo even-horizontal
tmux -L "$socket" split-window -v -f -l 7 -t demo "bash $driver"
# Window "abc": the library's example beside a terminal client on the A → B → C daemon.
tmux -L "$socket" new-window -d -t demo:1 -n abc "env -u NO_COLOR LANG=$lang $bin/navsync --connect 127.0.0.1:$abc_port"
tmux -L "$socket" split-window -h -t demo:1 \
  "$bin/navsync-abc --connect 127.0.0.1:$abc_port --drive 0 --interval 2500; sleep 600"
tmux -L "$socket" split-window -v -t demo:1.1 "$bin/navsync-abc --connect 127.0.0.1:$abc_port; sleep 600"
tmux -L "$socket" select-pane -t demo:0.0
tmux -L "$socket" set-option -g mouse on >/dev/null
tmux -L "$socket" set-option -g status-left " navsync demo  daemon 127.0.0.1:$port " >/dev/null
tmux -L "$socket" set-option -g status-left-length 60 >/dev/null
tmux -L "$socket" set-option -g status-right " Ctrl-b n: the Swift library (abc)   m or ? for keys   Ctrl-b d ends " >/dev/null
tmux -L "$socket" set-option -g status-right-length 80 >/dev/null

if [ -t 0 ] && [ -t 1 ]; then
  tmux -L "$socket" attach -t demo
else
  sleep "${DEMO_SECONDS:-6}"
  for pane in 0.0 0.1 0.2 0.3 1.0 1.1 1.2; do
    echo "---- pane $pane ----"
    tmux -L "$socket" capture-pane -p -t "demo:$pane" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
  done
fi
