#!/bin/bash
# make deb: a Debian package built with Debian's own tools (dpkg-shlibdeps,
# dpkg-deb). The binaries are built with the Swift runtime linked in, in a
# scratch path of their own (.build/deb), so the package needs no Swift
# toolchain and the ordinary release build is not touched.
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-swift}
scratch=.build/deb
programs=(navsyncd navsync navsync-abc)
missing=""
for tool in dpkg-deb:dpkg dpkg-shlibdeps:dpkg-dev strip:binutils; do
    command -v "${tool%%:*}" >/dev/null || missing+=" ${tool#*:}"
done
[ -z "$missing" ] || { echo "make deb needs Debian's packaging tools: apt-get install$missing" >&2; exit 1; }

# -z now: every symbol resolved at start, so the GOT can be read-only (RELRO).
for program in "${programs[@]}"; do
    "$SWIFT" build -c release --static-swift-stdlib -Xlinker -z -Xlinker now \
        --scratch-path "$scratch" --product "$program"
done
bin=$scratch/release
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/NavSyncCore/Version.swift)
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || echo "navsync maintainers <root@localhost>")}
root=$PWD/$scratch/root
rm -rf "$root"
mkdir -p "$root"
umask 022

# Debian keeps packaged units in /lib/systemd/system (bookworm).
make --no-print-directory install DESTDIR="$root" PREFIX=/usr UNITDIR=/lib/systemd/system BIN="$bin" >/dev/null
for program in "${programs[@]}"; do
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/$program"
done
gzip -9n "$root"/usr/share/man/man*/*
install -d "$root/etc/default" "$root/usr/share/doc/navsync"
install -m 644 packaging/deb/default-navsyncd "$root/etc/default/navsyncd"
install -m 644 packaging/deb/default-navsyncd-fleet "$root/etc/default/navsyncd-fleet"
install -m 644 packaging/deb/copyright "$root/usr/share/doc/navsync/copyright"
# The man pages point here for the protocol, the clients and the fleet.
install -m 644 README.md docs/PROTOCOL.md docs/CLIENT.md docs/BACKPLANE.md "$root/usr/share/doc/navsync/"

# A native package's changelog in Debian's format, from CHANGELOG.md: one
# entry per version heading, its bullet points' first lines as items.
changelog=$root/usr/share/doc/navsync/changelog
awk -v maintainer="$maintainer" '
    function close_entry() {
        if (entry_version != "") {
            printf "\n -- %s  %s\n\n", maintainer, entry_date
        }
    }
    /^## [0-9]/ {
        close_entry()
        entry_version = $2
        date = $3; gsub(/[()]/, "", date)
        cmd = "date -u -R -d " date " 2>/dev/null"
        cmd | getline entry_date; close(cmd)
        printf "navsync (%s) unstable; urgency=medium\n\n", entry_version
        next
    }
    entry_version != "" && /^- / {
        line = substr($0, 3); gsub(/\*\*|`/, "", line)
        printf "  * %s\n", line
        next
    }
    entry_version != "" && /^  [^ ]/ {
        line = $0; sub(/^ +/, "", line); gsub(/\*\*|`/, "", line)
        printf "    %s\n", line
    }
    END { close_entry() }
' CHANGELOG.md > "$changelog"
gzip -9n "$changelog"

# Dependencies: what the binaries link, as Debian's own tool works it out.
shlibs=$scratch/shlibs
rm -rf "$shlibs"
mkdir -p "$shlibs/debian"
printf 'Source: navsync\n\nPackage: navsync\nArchitecture: any\n' > "$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O $(printf -- "-e$root/usr/bin/%s " "${programs[@]}") 2>/dev/null |
          sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "dpkg-shlibdeps found no dependencies" >&2; exit 1; }

mkdir -p "$root/DEBIAN"
install -m 755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$root/DEBIAN/"
printf '/etc/default/navsyncd\n/etc/default/navsyncd-fleet\n' > "$root/DEBIAN/conffiles"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    > "$root/DEBIAN/md5sums"
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s|@MAINTAINER@|$maintainer|" \
    -e "s/@INSTALLED_SIZE@/$installed_size/" -e "s/@DEPENDS@/$depends/" \
    packaging/deb/control.in > "$root/DEBIAN/control"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

package=$scratch/navsync_${version}_${arch}.deb
# xz for the package people install; `make test` asks for zstd
# (DEB_COMPRESSION=zstd), which dpkg since 1.21.18 (bookworm) reads too: 1 s
# instead of 37 s on an idle machine, up to 132 s beside another build.
compression=${DEB_COMPRESSION:-xz}
dpkg-deb --root-owner-group -Z"$compression" --build "$root" "$package"
echo "$package: $(du -k "$package" | cut -f1) KiB, installed $installed_size KiB; Depends: adduser, $depends"
