#!/usr/bin/env bash
# The unit tests under AddressSanitizer and ThreadSanitizer, then the daemon
# built with AddressSanitizer against the end-to-end stress tests.
# Usage: Tests/sanitizers/run.sh        (from make test / make test-sanitizers)
#
#   1. swift test --sanitize=address  (scratch .build/asan), with the
#      libXCTest leak suppression next to this script;
#   2. swift test --sanitize=thread   (scratch .build/tsan), with NavSyncKit's
#      end-to-end tests against the release daemon;
#   3. .build/asan/debug/navsyncd, the ASan daemon step 1 built, faces the
#      kill -9, soak, hostile-client, churn, signal and TLS tests, run by the
#      release test bundle (`swift test -c release` builds it if `make test`
#      has not; only swift test enables the testable imports the hub's unit
#      tests use). Each test ends its daemon with SIGTERM (DaemonProcess.stop),
#      so LeakSanitizer checks the heap as the daemon exits; a daemon that
#      will not exit on SIGTERM fails its test. ASan/LSan reports from the
#      daemon go to .build/asan/reports/ and fail the run: a connection
#      object left behind by the churn shows up there. NAVSYNC_SANITIZED=1 tells the
#      tests to report, not assert, RSS and latency bounds (ASan's quarantine
#      and a debug build say nothing about ours); the 10,000-event slow-watcher
#      test is skipped, as it takes minutes under ASan.
# Each step prints how long it took.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
swift="${SWIFT:-swift}"
unit='NavSyncCoreTests|NavSyncServerTests|UVLoopTests|NavSyncClientTests|GNUFlagsTests|NavSyncKitTests|NavSyncWebTests|NavSyncTLSTests'
# NavSyncKit's end-to-end tests run under TSan too: the library is where threads meet (its loop thread,
# the main actor, the callers' tasks). They start the release daemon `make build` made.
library='EndToEndTests.SharedNavigation'
stress='DurabilityTests|HostileClientTests|SoakTests|SignalsAndFilesTests|ChurnTests|WebFrontDoorTests|TLSDaemonTests|TLSHostilePeerTests'
started=$(date +%s)

step() {  # step NAME COMMAND... : runs it, prints its time, stops on failure
    local name="$1"; shift
    local t0; t0=$(date +%s)
    echo "== sanitizers: $name"
    "$@"
    echo "== sanitizers: $name took $(( $(date +%s) - t0 )) s"
}

step "address, unit tests" env LSAN_OPTIONS="suppressions=$root/Tests/sanitizers/lsan-suppressions.txt" \
    "$swift" test --sanitize=address --scratch-path .build/asan --filter "$unit"
step "thread, unit tests and the library against the daemon" env NAVSYNC_BIN_DIR="$root/.build/release" \
    "$swift" test --sanitize=thread --scratch-path .build/tsan --filter "$unit|$library"

reports="$root/.build/asan/reports"
rm -rf "$reports" && mkdir -p "$reports"
step "address, navsyncd under the stress tests" env NAVSYNC_BIN_DIR="$root/.build/asan/debug" NAVSYNC_SANITIZED=1 \
    ASAN_OPTIONS="log_path=$reports/navsyncd:detect_leaks=1" \
    "$swift" test -c release --filter "$stress" --skip 'test_watcherThatNeverReads' --skip 'test_stalledRequestHead'
if compgen -G "$reports/navsyncd*" >/dev/null; then
    echo "== sanitizers: the ASan daemon reported problems:"
    head -n 60 "$reports"/navsyncd*
    exit 1
fi
echo "== sanitizers: clean, $(( $(date +%s) - started )) s in all"
