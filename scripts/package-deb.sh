#!/usr/bin/env bash
# Builds the Debian package securestore_VERSION_ARCH.deb with dpkg-deb, no network: the securestore tool and the
# git and docker credential helpers (release, static Swift standard library, stripped), their man pages, the
# bash, zsh and fish completions in Debian's folders and the docs, staged by scripts/install.sh --prefix /usr (so
# the package and the install script hold the same files in the same layout).
#
#   scripts/package-deb.sh [--bindir DIR] [--out DIR] [--fast]     # prints the .deb's path on its last line
#
# --bindir DIR packages the three programs already built there (see scripts/install.sh); --fast compresses with
# gzip -1 (seconds) instead of xz (about a minute on two shared cores, the smallest package).
#
# The version has one source, CLITable.version in Sources/SecureStoreCLI/CommandTable.swift: `securestore
# --version`, the package's Version and its changelog all come from it (checked here against the built tool).
# Depends is what dpkg-shlibdeps finds the three programs link (libc6, libgcc-s1, libstdc++6, libsodium23,
# libsqlite3-0); libsecret-1-0 (Recommends) and libpq5 (Suggests) are opened only when their backend is
# chosen, never linked. Maintainer: $DEBFULLNAME <$DEBEMAIL> when both are set. Needs dpkg-dev (dpkg-shlibdeps).
set -euo pipefail
cd "$(dirname "$0")/.."
bindir="" out=.build/deb compress=(-Zxz --threads-max=2)
while [ $# -gt 0 ]; do
  case "$1" in
    --bindir) bindir="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --fast) compress=(-Zgzip -z1); shift ;;   # seconds instead of a minute, larger (checks, trials)
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-deb.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
command -v dpkg-shlibdeps >/dev/null || { echo "package-deb.sh: needs dpkg-shlibdeps (apt-get install dpkg-dev)" >&2; exit 2; }
version=$(sed -n 's/^ *public static let version = "\([^"]*\)".*/\1/p' Sources/SecureStoreCLI/CommandTable.swift)
[ -n "$version" ] || { echo "package-deb.sh: no CLITable.version in Sources/SecureStoreCLI/CommandTable.swift" >&2; exit 1; }
arch=$(dpkg --print-architecture)
maintainer="SecureStore maintainers <securestore@example.org>"
if [ -n "${DEBFULLNAME:-}" ] && [ -n "${DEBEMAIL:-}" ]; then maintainer="$DEBFULLNAME <$DEBEMAIL>"; fi
# Reproducible: every date in the package is the commit's (or SOURCE_DATE_EPOCH's).
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"

umask 022
work=$(mktemp -d "${TMPDIR:-/tmp}/securestore-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/securestore_${version}_$arch"
bash scripts/install.sh --prefix /usr --destdir "$root" ${bindir:+--bindir "$bindir"} >&2
tool_version=$("$root/usr/bin/securestore" --version)
[ "$tool_version" = "securestore $version" ] || {
  echo "package-deb.sh: the built tool says '$tool_version', the source says $version: rebuild" >&2; exit 1; }

doc="$root/usr/share/doc/securestore"
rm -f "$doc/LICENSE"   # Debian's copyright file says it, pointing at /usr/share/common-licenses/Apache-2.0
install -m 0644 packaging/debian/copyright "$doc/copyright"
# The info-level tags lintian leaves, each explained (only --show-overrides shows them).
install -D -m 0644 packaging/debian/lintian-overrides "$root/usr/share/lintian/overrides/securestore"
# A native package's changelog (changelog.gz), in Debian's format, from the one version.
{
  echo "securestore ($version) unstable; urgency=medium"
  echo
  echo "  * Built by scripts/package-deb.sh from SecureStore $(git rev-parse --short HEAD 2>/dev/null || echo sources)."
  echo
  echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

# Depends: the shared libraries the three programs really link, as dpkg-shlibdeps maps them to packages.
mkdir -p "$work/src/debian"
printf 'Source: securestore\n\nPackage: securestore\nArchitecture: any\n' > "$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O -e"$root/usr/bin/securestore" -e"$root/usr/bin/git-credential-securestore" \
            -e"$root/usr/bin/docker-credential-securestore" 2>"$work/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p') || {
  cat "$work/shlibdeps.log" >&2; exit 1; }
for lib in libsodium23 libsqlite3-0; do
  case "$depends" in *"$lib "*|*"$lib,"*|*"$lib") ;; *) echo "package-deb.sh: Depends lacks $lib: $depends" >&2; exit 1 ;; esac
done
case "$depends" in *libsecret*|*libpq*) echo "package-deb.sh: a program links libsecret or libpq: $depends" >&2; exit 1 ;; esac

mkdir -p "$root/DEBIAN"
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s|@MAINTAINER@|$maintainer|" \
    -e "s/@INSTALLED_SIZE@/$installed_size/" -e "s/@DEPENDS@/$depends/" packaging/debian/control.in > "$root/DEBIAN/control"
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
deb="$out/securestore_${version}_$arch.deb"
dpkg-deb --root-owner-group "${compress[@]}" --build "$root" "$deb" >&2
echo "package-deb.sh: $(du -h "$deb" | cut -f1) $(basename "$deb"); Depends: $depends" >&2
echo "$deb"
