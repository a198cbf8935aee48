#!/usr/bin/env bash
# The web client in a real headless Chromium. Usage: Tests/browser/run.sh BIN_DIR [SCREENSHOT_DIR]
# Installs Debian's chromium, chromium-driver and python3-venv when missing,
# makes a virtual environment with selenium (and pillow, for the terminal
# screenshots) from PyPI under .build/, and runs web_client_test.py, then
# wss_test.py (the page over HTTPS and WSS), link_test.py (a `navsync link`
# with its signed token) and event_source_test.py (EventSource across a
# restart), each under a two-minute bound,
# then scenario_test.py (a team's day: TLS, grants, display mode, sign-in,
# terminal clients in tmux), whose screenshots go to SCREENSHOT_DIR or
# .build/scenario-artifacts.
set -euo pipefail
bin="${1:-.build/release}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
suite=browser
. "$root/Tests/support/python_venv.sh"
needs_debian chromium chromium-driver python3-venv
python_venv browser-venv "selenium, PIL" selenium pillow
timeout -k 5 120 "$venv/bin/python" "$here/web_client_test.py" "$bin" "${2:-}"
timeout -k 5 120 "$venv/bin/python" "$here/wss_test.py" "$bin"
# (1.3) A link from `navsync link`: live as its member, the token out of the address bar; an expired one says so.
timeout -k 5 120 "$venv/bin/python" "$here/link_test.py" "$bin"
# (1.3) Chromium's own EventSource on a room's events, across a daemon restart.
timeout -k 5 120 "$venv/bin/python" "$here/event_source_test.py" "$bin"
# A team's day with the 1.3 features together; its screenshots are kept as artifacts.
artifacts="${2:-$root/.build/scenario-artifacts}"
mkdir -p "$artifacts"
timeout -k 5 240 "$venv/bin/python" "$here/scenario_test.py" "$bin" "$artifacts"
echo "browser: the scenario's screenshots are in $artifacts"
