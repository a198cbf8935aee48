#!/usr/bin/env bash
# Checks the module graph written in README.md and docs/DEVELOPING.md against
# Package.swift: each doc's table must list every target, with its kind and
# exactly its dependencies (plugins count as dependencies), and no target
# that Package.swift no longer declares. Reads text only. Then runs every
# shell example of the docs that starts a daemon or a client (examples.py),
# with the binaries of $NAVSYNC_BIN_DIR or .build/release.
#
# The table sits between the markers <!-- module-graph --> and
# <!-- /module-graph -->; each row is
#   | `Name` | kind | `Dep`, `Dep` or — | what it is for |
set -euo pipefail
export LC_ALL=C
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
docs=(README.md docs/DEVELOPING.md)

# One line per declared target: "name|kind|dep dep ..." (deps sorted).
# Comments are dropped, the manifest is joined into one line and cut before
# every target declaration, so a declaration spread over lines is one chunk.
from_package() {
    sed 's://.*$::' "$root/Package.swift" | tr '\n' ' ' |
        sed -E 's/\.(systemLibrary|target|executableTarget|testTarget|plugin)\(/\n&/g' |
        awk '
        function quoted(text,   out) {
            out = ""
            while (match(text, /"[^"]*"/)) {
                out = out " " substr(text, RSTART + 1, RLENGTH - 2)
                text = substr(text, RSTART + RLENGTH)
            }
            return out
        }
        function listed(chunk, label,   rest) {
            if (!match(chunk, label ": *\\[[^]]*\\]")) return ""
            return quoted(substr(chunk, RSTART, RLENGTH))
        }
        /^\.(systemLibrary|target|executableTarget|testTarget|plugin)\(/ {
            kind = $0; sub(/\(.*/, "", kind); sub(/^\./, "", kind)
            if (!match($0, /name: *"[^"]*"/)) next
            name = substr($0, RSTART, RLENGTH); sub(/^name: *"/, "", name); sub(/"$/, "", name)
            if (kind == "systemLibrary") kind = "system library"
            else if (kind == "target") kind = "library"
            else if (kind == "executableTarget") kind = "executable"
            else if (kind == "testTarget") kind = "tests"
            print name "|" kind "|" listed($0, "dependencies") listed($0, "plugins")
        }' | sort_deps
}

# The rows of one doc's table in the same form.
from_doc() {
    sed -n '/<!-- module-graph -->/,/<!-- \/module-graph -->/p' "$root/$1" |
        awk -F'|' '
        /^\| *`/ {
            name = $2; gsub(/[` ]/, "", name)
            kind = $3; gsub(/^ +| +$/, "", kind)
            deps = ""; rest = $4
            while (match(rest, /`[^`]*`/)) {
                deps = deps " " substr(rest, RSTART + 1, RLENGTH - 2)
                rest = substr(rest, RSTART + RLENGTH)
            }
            what = $5; gsub(/ /, "", what)
            if (what == "") what = "(no description)"; else what = ""
            print name "|" kind "|" deps what
        }' | sort_deps
}

# Sorts each line's dependency list and then the lines, so order in the
# manifest or the table does not matter.
sort_deps() {
    while IFS='|' read -r name kind deps; do
        sorted=$(printf '%s\n' $deps | sort | tr '\n' ' ')
        printf '%s|%s|%s\n' "$name" "$kind" "${sorted% }"
    done | sort
}

expected=$(from_package)
count=$(printf '%s\n' "$expected" | grep -c . || true)
if [ "$count" -lt 10 ]; then
    echo "Tests/docs: read only $count targets from Package.swift; the parser no longer fits the manifest" >&2
    exit 1
fi

failed=0
for doc in "${docs[@]}"; do
    if ! grep -q '<!-- module-graph -->' "$root/$doc"; then
        echo "FAIL $doc: no <!-- module-graph --> table" >&2
        failed=1
        continue
    fi
    written=$(from_doc "$doc")
    if [ "$written" != "$expected" ]; then
        echo "FAIL $doc: module graph differs from Package.swift (< Package.swift, > $doc):" >&2
        diff <(printf '%s\n' "$expected") <(printf '%s\n' "$written") | grep '^[<>]' >&2 || true
        failed=1
    else
        echo "ok   $doc: $count targets as in Package.swift"
    fi
done

# One version in the text: Version.swift is the one place it is written;
# CHANGELOG.md's newest heading, the README's package name and
# docs/LIBRARY.md's `from:` must say the same (Tests/packaging/run.sh
# checks the binaries, HELLO, /metrics and the man pages).
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' "$root/Sources/NavSyncCore/Version.swift")
newest=$(grep -m1 '^## ' "$root/CHANGELOG.md" || true)
if [[ ! $newest =~ ^"## $version ("[0-9]{4}-[0-9]{2}-[0-9]{2}")"$ ]]; then
    echo "FAIL CHANGELOG.md: the newest heading is '$newest', not '## $version (YYYY-MM-DD)'" >&2
    failed=1
else
    echo "ok   CHANGELOG.md: newest heading is $version"
fi
others=$(grep -o 'navsync_[0-9][0-9.]*_' "$root/README.md" | grep -v "navsync_${version}_" || true)
if [ -n "$others" ]; then
    echo "FAIL README.md: names a package of another version: $others" >&2
    failed=1
fi
if ! grep -q "from: \"$version\"" "$root/docs/LIBRARY.md"; then
    echo "FAIL docs/LIBRARY.md: does not say from: \"$version\"" >&2
    failed=1
fi

# Every shell example of the docs, the man pages and the /etc/default files
# that starts navsyncd or navsync, run as written (Tests/docs/examples.py).
# `make check` sets NAVSYNC_DOCS_TABLES_ONLY=1: the text checks above only,
# no daemon started (the examples run in `make test`).
bin=${NAVSYNC_BIN_DIR:-$root/.build/release}
if [ "${NAVSYNC_DOCS_TABLES_ONLY:-0}" = 1 ]; then
    echo "skip docs examples (NAVSYNC_DOCS_TABLES_ONLY=1)"
elif [ -x "$bin/navsyncd" ] && [ -x "$bin/navsync" ]; then
    python3 "$root/Tests/docs/examples.py" "$bin" "$root" || failed=1
else
    echo "FAIL docs examples: no navsyncd and navsync in $bin (build first, or set NAVSYNC_BIN_DIR)" >&2
    failed=1
fi
exit $failed
