#!/bin/sh
# render.sh TEMPLATE BINARY VERSION DATE
# Prints a man page: TEMPLATE (hand-written sections: NAME, DESCRIPTION,
# signals, files, examples) with @SYNOPSIS@ and @HELP@ replaced by sections
# made from `BINARY --help` (help2roff.awk), @VERSION@ and @DATE@ filled in.
# The flags are therefore only ever written in the binaries' usage text.
set -eu
template=$1 binary=$2 version=$3 date=$4
if [ -z "$version" ] || [ -z "$date" ]; then
    echo "render.sh: no version or date (is there a CHANGELOG.md heading for the version?)" >&2
    exit 1
fi
here=$(dirname "$0")
help=$("$binary" --help)
first=$(sed -n 's/^\.\\" first-section: //p' "$template")
synopsis=$(printf '%s\n' "$help" | awk -v part=synopsis -f "$here/help2roff.awk")
sections=$(printf '%s\n' "$help" | awk -v part=sections -v first="${first:-OPTIONS}" -f "$here/help2roff.awk")
while IFS= read -r line; do
    case $line in
        '@SYNOPSIS@') printf '%s\n' "$synopsis" ;;
        '@HELP@') printf '%s\n' "$sections" ;;
        '.\" first-section: '*) ;;
        *) printf '%s\n' "$line" | sed -e "s/@VERSION@/$version/g" -e "s/@DATE@/$date/g" ;;
    esac
done < "$template"
