#!/usr/bin/env bash
# make bench-compare BASE=<git revision>: builds navsyncd at BASE in a scratch
# worktree, then runs bench/run.sh with it as the `baseline` rows, so the
# current build and the older one are measured side by side in one run,
# interleaved run by run (machine load hits both alike).
# Other bench knobs (NS, RUNS, SYSTEMS, ...) pass through the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-${BASE:-}}
[ -n "$BASE" ] || { echo "usage: bench/compare.sh REVISION" >&2; exit 64; }
rev=$(git rev-parse --verify "$BASE^{commit}")
dir=".build/baseline-${rev:0:12}"
if [ ! -x "$dir/bin/navsyncd" ]; then
    rm -rf "$dir/src"
    git worktree add --detach -f "$dir/src" "$rev" >/dev/null
    echo "bench: building navsyncd at ${rev:0:12}" >&2
    (cd "$dir/src" && swift build -c release --product navsyncd >&2)
    mkdir -p "$dir/bin"
    cp "$dir/src/.build/release/navsyncd" "$dir/bin/navsyncd"
    git worktree remove --force "$dir/src"
fi
BASE_BIN="$PWD/$dir/bin" bench/run.sh
