#!/usr/bin/env bash
# Builds the libFuzzer targets with swiftc (no SwiftPM) and runs each for a
# bounded time. Usage:
#   Fuzz/run.sh [SECONDS] [TARGET...]      (default: $FUZZ_SECONDS or 60; every target)
# Targets: framer parser route catalog statefile http wsline wsframe redis presence token httpapi httpresponse configfile tlsrecord benchframes.
#
# NavSyncCore is compiled once, instrumented, as a static library; each target
# is its own binary (its file plus FuzzSupport.swift, and for http, wsline,
# wsframe and httpapi the NavSyncWeb files it fuzzes). Work corpora, logs
# and crash inputs live under .build/fuzz/ (override with FUZZ_BUILD_DIR);
# the seed corpus in Fuzz/corpus/ is only read. Exit status is non-zero when a target crashes or
# breaks a property; the input that did it is kept and named in the output.
# FUZZ_JOBS=N runs N targets at a time (each its full SECONDS, results printed
# in target order); make test uses 2, one per core. FUZZ_BUILD_ONLY=1 builds
# the targets and runs none (make test builds them beside its other builds).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-${FUZZ_SECONDS:-60}}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(framer parser route catalog statefile http wsline wsframe redis presence token httpapi httpresponse configfile tlsrecord benchframes)
out="${FUZZ_BUILD_DIR:-$root/.build/fuzz}"
mkdir -p "$out/lib" "$out/bin" "$out/logs" "$out/artifacts"
flags=(-parse-as-library -sanitize=fuzzer,address -O)
# Crash reports are unreadable through swift-backtrace, and it can hold the pipe open.
export SWIFT_BACKTRACE=enable=no

core_sources=("$root"/Sources/NavSyncCore/*.swift)
lib="$out/lib/libNavSyncCore.a"
newer_than() {  # newer_than FILE SOURCES... : true when FILE is missing or older than a source
    [ -e "$1" ] || return 0
    local f="$1"; shift
    for s in "$@"; do [ "$s" -nt "$f" ] && return 0; done
    return 1
}
# build LOG ARGS... : swiftc with the fuzz flags; its chatter (ld.gold warns about
# ASan's local symbols) goes to LOG and is shown only when the build fails.
build() {
    local log="$1"; shift
    if ! swiftc "${flags[@]}" "$@" >"$log" 2>&1; then
        grep -v 'ld.gold: warning' "$log" | tail -n 40
        echo "fuzz: build failed; full log in $log" >&2
        exit 1
    fi
}
if newer_than "$lib" "${core_sources[@]}" "$0"; then
    echo "fuzz: building NavSyncCore with -sanitize=fuzzer,address"
    build "$out/logs/build-core.log" -emit-library -static -emit-module -module-name NavSyncCore \
        -emit-module-path "$out/lib/NavSyncCore.swiftmodule" -o "$lib" "${core_sources[@]}"
fi

sources_for() {
    local t="$1" file
    case "$t" in
        framer) file=FramerFuzz ;; parser) file=ParserFuzz ;; route) file=RouteFuzz ;;
        catalog) file=CatalogFuzz ;; statefile) file=StateFileFuzz ;;
        http) file=HTTPFuzz ;; wsline) file=WSLineFuzz ;; wsframe) file=WSFrameFuzz ;;
        redis) file=RedisReplyFuzz ;; presence) file=PresenceFuzz ;; token) file=SignedTokenFuzz ;;
        httpapi) file=HTTPAPIFuzz ;; httpresponse) file=HTTPResponseFuzz ;; configfile) file=ConfigFileFuzz ;;
        tlsrecord) file=TLSRecordFuzz ;;
        benchframes) file=BenchFramesFuzz ;;
        *) echo "fuzz: unknown target $t" >&2; exit 64 ;;
    esac
    echo "$root/Fuzz/Targets/$file.swift $root/Fuzz/Targets/FuzzSupport.swift"
    # The Redis reply reader and its replies, compiled into the target (hiredis is linked).
    [ "$t" = redis ] && echo "$root/Sources/RedisClient/RedisReply.swift $root/Sources/RedisClient/RedisReplyReader.swift"
    # (1.3) The presence lines read from Redis: the backplane's parser and its bounds.
    [ "$t" = presence ] && echo "$root/Sources/NavSyncBackplane/PresenceMessage.swift $root/Sources/NavSyncBackplane/PresenceBounds.swift"
    # The web front door's parts live in NavSyncWeb (which needs wslay and
    # nettle as a whole); each target compiles the files it fuzzes into itself.
    local web="$root/Sources/NavSyncWeb"
    [ "$t" = http ] && echo "$web/ProtocolSniffer.swift $web/HTTPHeadParser.swift $web/HTTPRequestHead.swift"
    [ "$t" = wsline ] && echo "$web/WebSocketLines.swift"
    # (1.3) The HTTP API's change bodies and server-sent events.
    [ "$t" = httpapi ] && echo "$web/JSONChangeBody.swift $web/ServerSentEvents.swift $web/RoomDocument.swift $web/JSONText.swift $web/HTTPRequestHead.swift"
    # (1.3) navsync-bench's HTTP response reader (what its HTTP writers count).
    [ "$t" = httpresponse ] && echo "$root/Sources/navsync-bench/HTTPResponseReader.swift"
    # (1.3) navsync-bench's WebSocket reader (what navsync-ws and navsync-wss watchers count).
    [ "$t" = benchframes ] && echo "$root/Sources/navsync-bench/FrameScanner.swift"
    # (1.3) A TLS 1.3 server connection's own record layer (OpenSSL's AEAD is linked).
    [ "$t" = tlsrecord ] && echo "$root/Sources/NavSyncTLS/TLS13RecordCipher.swift $root/Sources/NavSyncTLS/TLS13Records.swift"
    # The daemon's WebSocket framing (wslay is linked).
    [ "$t" = wsframe ] && echo "$web/WebSocketFramer.swift $web/WebSocketTextWriter.swift"
    return 0
}

# (1.3) The token target links OpenSSL's HMAC and Ed25519: NavSyncTLS's
# TokenCrypto is built alone as a module of its own (the rest of NavSyncTLS
# needs libuv), instrumented like the core.
build_token_crypto() {
    local src="$root/Sources/NavSyncTLS/TokenCrypto.swift"
    local mod="$out/lib/libNavSyncTLS_TokenCrypto.a"
    if newer_than "$mod" "$src" "$lib"; then
        echo "fuzz: building TokenCrypto with -sanitize=fuzzer,address"
        build "$out/logs/build-tokencrypto.log" -emit-library -static -emit-module -module-name NavSyncTLS_TokenCrypto \
            -I "$out/lib" -I "$out/lib/COpenSSL" -emit-module-path "$out/lib/NavSyncTLS_TokenCrypto.swiftmodule" \
            -o "$mod" "$src"
    fi
    return 0
}

# CHiredis as swiftc sees it: the header SwiftPM wraps, and the library.
mkdir -p "$out/lib/CHiredis"
cat >"$out/lib/CHiredis/module.modulemap" <<MAP
module CHiredis {
    header "$root/Sources/CHiredis/include/navsync_hiredis.h"
    link "hiredis"
    export *
}
MAP
mkdir -p "$out/lib/COpenSSL"
cat >"$out/lib/COpenSSL/module.modulemap" <<MAP
module COpenSSL {
    header "$root/Sources/COpenSSL/shim.h"
    link "ssl"
    link "crypto"
    export *
}
MAP
mkdir -p "$out/lib/CWslay"
cat >"$out/lib/CWslay/module.modulemap" <<MAP
module CWslay {
    header "$root/Sources/CWslay/shim.h"
    link "wslay"
    export *
}
MAP

for t in "${targets[@]}"; do
    read -r -a srcs <<<"$(sources_for "$t" | tr '\n' ' ')"
    bin="$out/bin/fuzz-$t"
    # The token target also links TokenCrypto, built apart from its sources.
    [ "$t" = token ] && newer_than "$bin" "$root/Sources/NavSyncTLS/TokenCrypto.swift" && rm -f "$bin"
    if newer_than "$bin" "${srcs[@]}" "$lib"; then
        echo "fuzz: building $t"
        extra=()
        [ "$t" = redis ] && extra=(-I "$out/lib/CHiredis" -lhiredis)
        [ "$t" = wsframe ] && extra=(-I "$out/lib/CWslay" -lwslay)
        [ "$t" = tlsrecord ] && extra=(-I "$out/lib/COpenSSL" -lssl -lcrypto)
        if [ "$t" = token ]; then
            build_token_crypto
            extra=(-I "$out/lib/COpenSSL" -lNavSyncTLS_TokenCrypto -lssl -lcrypto)
        fi
        build "$out/logs/build-$t.log" -module-name "Fuzz_$t" -I "$out/lib" -L "$out/lib" -lNavSyncCore "${extra[@]}" \
            -o "$bin" "${srcs[@]}"
    fi
done

[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && { echo "fuzz: ${#targets[@]} targets built"; exit 0; }

# fuzz_one TARGET: runs it; its report line(s) go to $out/logs/TARGET.result
# and its executions (or FAIL) to $out/logs/TARGET.outcome.
fuzz_one() {
    local t="$1" work="$out/corpus/$1" log="$out/logs/$1.log" result="$out/logs/$1.result"
    mkdir -p "$work"
    local dict=()
    [ -f "$root/Fuzz/dict/$t.dict" ] && dict=(-dict="$root/Fuzz/dict/$t.dict")
    # Room for a line over the framer's largest fuzzed limit (512), for lines
    # past the default --max-line, and for deeply nested JSON.
    local max_len
    case "$t" in framer) max_len=1200 ;; catalog) max_len=8192 ;; http) max_len=20000 ;; *) max_len=4400 ;; esac
    set +e
    "$out/bin/fuzz-$t" "$work" "$root/Fuzz/corpus/$t" "${dict[@]}" \
        -max_total_time="$seconds" -timeout=10 -max_len="$max_len" -use_value_profile=1 \
        -print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" >"$log" 2>&1
    local rc=$?
    set -e
    local execs rate corpus
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    corpus=$(ls "$work" | wc -l)
    if [ "$rc" -eq 0 ]; then
        printf 'fuzz %-9s ok    %10s executions in %ss (%s/s), work corpus %s inputs\n' \
            "$t" "${execs:-?}" "$seconds" "${rate:-?}" "$corpus" >"$result"
        echo "${execs:-0}" >"$out/logs/$t.outcome"
    else
        { printf 'fuzz %-9s FAIL  (exit %s) after %s executions; log %s\n' "$t" "$rc" "${execs:-?}" "$log"
          grep -E 'PROPERTY VIOLATED|Fatal error|ERROR: |SUMMARY|Test unit written|^  ' "$log" | head -n 20 | sed 's/^/    /'
        } >"$result"
        echo FAIL >"$out/logs/$t.outcome"
    fi
}

jobs_at_once="${FUZZ_JOBS:-1}"
for t in "${targets[@]}"; do
    rm -f "$out/logs/$t.result" "$out/logs/$t.outcome"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
    fuzz_one "$t" &
done
wait
status=0
total=0
for t in "${targets[@]}"; do
    cat "$out/logs/$t.result" 2>/dev/null || echo "fuzz $t: no result (see $out/logs/$t.log)"
    outcome=$(cat "$out/logs/$t.outcome" 2>/dev/null || echo FAIL)
    if [ "$outcome" = FAIL ]; then status=1; else total=$((total + outcome)); fi
done
echo "fuzz: $total executions in total"
exit $status
