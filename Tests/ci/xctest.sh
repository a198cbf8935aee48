#!/usr/bin/env bash
# make test's XCTest step: every test target of Package.swift, from the
# release bundle Tests/ci/build-all.sh built (no build here: --skip-build).
# Most of the run's time is end-to-end tests waiting on daemons, clients and
# bounded timeouts, so SwiftPM runs the tests XCTEST_WORKERS at a time (each
# test in a process of its own; a failing test's whole output is printed).
# Every end-to-end test starts its own processes on port 0 in a temporary
# directory of its own, so no two share a port or a file.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift="${SWIFT:-swift}"
workers="${XCTEST_WORKERS:-4}"
: "${NAVSYNC_BIN_DIR:?the end-to-end tests start the binaries in NAVSYNC_BIN_DIR}"
exec "$swift" test -c release --skip-build --parallel --num-workers "$workers"
