#!/usr/bin/env bash
# make test's XCTest step: every test target of Package.swift, from the
# release bundle Tests/ci/build-all.sh built (no build here: --skip-build).
# Most of the run's time is end-to-end tests waiting on daemons, clients and
# bounded timeouts, so SwiftPM runs the tests XCTEST_WORKERS at a time (each
# test in a process of its own; a failing test's whole output is printed,
# a passing test's is not). Every end-to-end test starts its own processes on
# port 0 in a temporary directory of its own, so no two share a port or a file.
#
# Run one at a time afterwards, in a second invocation (output in full):
#   - the terminal-client tests (TUI*Tests): they poll a tmux pane (a tmux
#     process per poll) within a bounded wait, and with three other tests
#     and a loaded machine beside them a pane once missed its bound;
#   - SharedNavigationLifeTests, which watches the process's NavSyncKit
#     threads come and go (it follows its own thread's id since an earlier
#     test's thread ending during its wait failed a CI run under TSan);
#   - BackplanePresenceTests, three daemons and a redis-server per test;
#   - TLSHandshakeCapTests, GuessingThrottleTests and
#     SharedNavigationThrottleTests, whose steps must fit inside the
#     daemon's own 10 s windows (the TLS handshake bound, the guessing
#     window), which a busy neighbour could eat into.
# XCTEST_WORKERS=1 runs everything in one plain `swift test`, as before.
# Every test's name, result and seconds are kept in .build/logs/xctest*.xml.
set -uo pipefail
cd "$(dirname "$0")/../.."
swift="${SWIFT:-swift}"
workers="${XCTEST_WORKERS:-4}"
: "${NAVSYNC_BIN_DIR:?the end-to-end tests start the binaries in NAVSYNC_BIN_DIR}"
serial='EndToEndTests\.(TUI[A-Za-z]*Tests|SharedNavigationLifeTests|BackplanePresenceTests|TLSHandshakeCapTests|GuessingThrottleTests|SharedNavigationThrottleTests)/'
mkdir -p .build/logs
if [ "$workers" -le 1 ]; then
    exec "$swift" test -c release --skip-build --xunit-output .build/logs/xctest.xml
fi
status=0
t0=$(date +%s)
"$swift" test -c release --skip-build --parallel --num-workers "$workers" --skip "$serial" \
    --xunit-output .build/logs/xctest.xml || status=1
echo "xctest: $workers at a time took $(( $(date +%s) - t0 )) s; now the ones that run alone"
t0=$(date +%s)
"$swift" test -c release --skip-build --filter "$serial" --xunit-output .build/logs/xctest-serial.xml || status=1
echo "xctest: one at a time took $(( $(date +%s) - t0 )) s"
exit $status
