#!/usr/bin/env bash
# Every build `make test` needs, made up front, two at a time: a Swift release
# build spends long stretches in one compiler process (whole-module
# optimisation of one module), leaving the other core idle, so two builds side
# by side finish well before the same builds one after the other.
#   - the release build with its tests (.build/release: the binaries every
#     step starts, and the XCTest bundle). `swift test --list-tests` builds
#     exactly what `swift test` runs (release code compiled for testing,
#     which `swift build` cannot ask for), so no later `swift test` rebuilds;
#   - the .deb's static build (.build/deb, packaging/deb/build.sh);
#   - the libFuzzer targets (.build/fuzz, Fuzz/run.sh);
#   - the unit tests under ASan and TSan (.build/asan, .build/tsan), as
#     Tests/sanitizers/run.sh then runs them.
# Each build's output goes to .build/logs/build-NAME.log; it is printed after
# the build ends (whole when it failed, else its last lines), one at a time.
# Usage: Tests/ci/build-all.sh   (make test's first step; BUILD_JOBS=1 for one at a time)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
swift="${SWIFT:-swift}"
logs="$root/.build/logs"
mkdir -p "$logs"

# Longest first, so the others fill in beside it.
names=(release deb fuzz asan tsan)
command_for() {
    case "$1" in
        release) echo "$swift test -c release --list-tests" ;;
        # zstd: the same package but for its compression, tested as it installs (xz took 37-132 s).
        deb) echo "env SWIFT=$swift DEB_COMPRESSION=zstd packaging/deb/build.sh" ;;
        fuzz) echo "env FUZZ_BUILD_ONLY=1 Fuzz/run.sh" ;;
        # Listing runs the bundle once; LeakSanitizer would report libXCTest's own leaks at its exit.
        asan) echo "env ASAN_OPTIONS=detect_leaks=0 $swift test --sanitize=address --scratch-path .build/asan --list-tests" ;;
        tsan) echo "$swift test --sanitize=thread --scratch-path .build/tsan --list-tests" ;;
    esac
}

# build NAME: runs its command, logs it, records its exit status and seconds.
# A failed build runs once more: SwiftPM has failed here with a bare
# `error: fatalError` and no diagnostic (the ASan build, beside the release
# one, on a fresh clone), then built cleanly when run again. A real error
# fails the second time too, at once, as the build is incremental; both
# attempts stay in the log.
build() {
    local name="$1" t0 rc; t0=$(date +%s)
    local cmd; cmd=$(command_for "$name")
    echo "$cmd" >"$logs/build-$name.log"
    $cmd >>"$logs/build-$name.log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "== build-all: exit $rc; building $name once more" >>"$logs/build-$name.log"
        $cmd >>"$logs/build-$name.log" 2>&1
        rc=$?
    fi
    echo "$rc $(( $(date +%s) - t0 ))" >"$logs/build-$name.status"
}

started=$(date +%s)
at_once="${BUILD_JOBS:-2}"
for name in "${names[@]}"; do
    rm -f "$logs/build-$name.status"
    while [ "$(jobs -rp | wc -l)" -ge "$at_once" ]; do wait -n; done
    echo "build: $name started: $(command_for "$name")"
    build "$name" &
done
wait

status=0
for name in "${names[@]}"; do
    read -r rc seconds <"$logs/build-$name.status" || { rc=1; seconds=?; }
    if [ "$rc" -eq 0 ]; then
        echo "build: $name ok in $seconds s (log .build/logs/build-$name.log)"
        tail -n 3 "$logs/build-$name.log" | sed 's/^/    /'
    else
        status=1
        echo "build: $name FAILED (exit $rc) after $seconds s; its log:"
        grep -v 'ld.gold: warning' "$logs/build-$name.log" | sed 's/^/    /'
    fi
done
echo "build: all in $(( $(date +%s) - started )) s"
exit $status
