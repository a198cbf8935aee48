#!/usr/bin/env bash
# Runs one step of `make test` and says how long it took, so a CI log shows
# where the minutes go. Each step's time is also appended to a table that
# `--summary` prints (and that a failing step prints, so far).
# Usage: Tests/ci/step.sh --start
#        Tests/ci/step.sh NAME COMMAND...
#        Tests/ci/step.sh --summary
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
table="$root/.build/test-steps.txt"
mkdir -p "$root/.build"

summary() {
    echo "== make test: seconds per step (load now: $(cut -d' ' -f1-3 /proc/loadavg))"
    column -t -s $'\t' "$table" | sed 's/^/   /'
    local first; first=$(head -n 1 "$table.start" 2>/dev/null || date +%s)
    echo "== make test: $(( $(date +%s) - first )) s in all"
}

case "${1:-}" in
    --start) : >"$table"; date +%s >"$table.start"; exit 0 ;;
    --summary) summary; exit 0 ;;
esac
name="$1"; shift
t0=$(date +%s)
echo "== step: $name"
"$@"
rc=$?
seconds=$(( $(date +%s) - t0 ))
if [ "$rc" -eq 0 ]; then
    printf '%s\t%s s\n' "$name" "$seconds" >>"$table"
    echo "== step: $name took $seconds s"
else
    printf '%s\t%s s\tFAILED (exit %s)\n' "$name" "$seconds" "$rc" >>"$table"
    echo "== step: $name FAILED (exit $rc) after $seconds s"
    summary
fi
exit "$rc"
