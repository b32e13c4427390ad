#!/usr/bin/env bash
# Checks the Debian package without a new machine (CI; seconds once the static build is warm):
#  - builds it (scripts/package-deb.sh --fast: gzip, not xz; the same files) and reads it with dpkg-deb: its
#    fields (one version everywhere: CLITable.version, `securestore --version`, `docker-credential-securestore
#    version`, the package, python/keyrings-securestore; Depends on libsodium23 and libsqlite3-0 and on no libsecret or libpq;
#    Recommends libsecret-1-0; Suggests libpq5) and its contents (the files scripts/install.sh lists, root-owned,
#    programs 0755, everything else 0644; no RUNPATH, PIE, BIND_NOW);
#  - installs it with `dpkg --root` into a throwaway root and, with the installed files: add/get on a scratch
#    store, git credential approve/fill through the installed helper, docker's helper `list`, the man pages
#    rendered with warnings on (none allowed), `securestore ad<TAB>` completed to `add` by bash-completion's
#    loader and by fish with the installed file, and zsh's file parsed; then `dpkg --root --remove` leaves none of its files;
#  - lintian, when installed: no error or warning (info tags only with their override's reason).
# The fresh-root check (apt-get install on a new Debian 12 root) is scripts/fresh-install-check.sh.
# Usage: scripts/package-check.sh [--bindir DIR] [--deb FILE]   (--deb: check that package, build nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
bindir="" deb=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bindir) bindir="${2:?}"; shift 2 ;;
    --deb) deb="${2:?}"; shift 2 ;;
    *) echo "package-check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
t0=$(date +%s)
fail() { echo "package-check: FAIL: $*" >&2; exit 1; }
ok() { echo "package-check: $*"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/securestore-package-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$deb" ]; then
  deb=$(bash scripts/package-deb.sh --fast --out "$work" ${bindir:+--bindir "$bindir"} 2>"$work/build.log" | tail -1) || {
    tail -30 "$work/build.log" >&2; fail "scripts/package-deb.sh"; }
fi
ok "built $(basename "$deb") ($(du -h "$deb" | cut -f1), $(( $(date +%s) - t0 )) s)"

# Fields and the one version.
field() { dpkg-deb --field "$deb" "$1"; }
version=$(sed -n 's/^ *public static let version = "\([^"]*\)".*/\1/p' Sources/SecureStoreCLI/CommandTable.swift)
[ "$(field Version)" = "$version" ] || fail "package Version $(field Version), CLITable.version $version"
pyversion=$(sed -n 's/^version = "\(.*\)"/\1/p' python/keyrings-securestore/pyproject.toml)
[ "$pyversion" = "$version" ] || fail "python/keyrings-securestore is $pyversion, the tool $version"
depends=$(field Depends)
for lib in libsodium23 libsqlite3-0; do [[ "$depends" == *"$lib "* ]] || fail "Depends lacks $lib: $depends"; done
[[ "$depends" != *libsecret* && "$depends" != *libpq* ]] || fail "Depends names an optional library: $depends"
[ "$(field Recommends)" = "libsecret-1-0" ] || fail "Recommends: $(field Recommends)"
[ "$(field Suggests)" = "libpq5" ] || fail "Suggests: $(field Suggests)"
ok "Version $version (= CLITable.version = keyrings-securestore); Depends: $depends; Recommends: libsecret-1-0; Suggests: libpq5"

# Contents: exactly install.sh's files (+ Debian's copyright, changelog, lintian overrides), owners and modes.
dpkg-deb --contents "$deb" > "$work/contents"
awk '$1 !~ /^d/ {print $6}' "$work/contents" | sed 's|^\./||' | LC_ALL=C sort > "$work/files"
expected=(usr/bin/securestore usr/bin/git-credential-securestore usr/bin/docker-credential-securestore
  usr/share/man/man1/securestore.1.gz usr/share/man/man1/git-credential-securestore.1.gz
  usr/share/man/man1/docker-credential-securestore.1.gz usr/share/bash-completion/completions/securestore
  usr/share/zsh/vendor-completions/_securestore usr/share/fish/vendor_completions.d/securestore.fish
  usr/share/doc/securestore/README.md usr/share/doc/securestore/CommandLineTool.md
  usr/share/doc/securestore/CredentialHelpers.md usr/share/doc/securestore/ChoosingABackend.md
  usr/share/doc/securestore/SecurityModel.md usr/share/doc/securestore/Limits.md
  usr/share/doc/securestore/copyright usr/share/doc/securestore/changelog.gz usr/share/lintian/overrides/securestore)
printf '%s\n' "${expected[@]}" | LC_ALL=C sort > "$work/expected"
diff "$work/expected" "$work/files" >&2 || fail "the package's files differ from the list above (< expected, > found)"
awk '$2 != "root/root" {print}' "$work/contents" | grep . >&2 && fail "files not owned by root"
awk '$1 !~ /^d/ && $6 ~ /usr\/bin\// && $1 != "-rwxr-xr-x" {print}; $1 !~ /^d/ && $6 !~ /usr\/bin\// && $1 != "-rw-r--r--" {print}' \
  "$work/contents" | grep . >&2 && fail "modes"
ok "contents: ${#expected[@]} files, root-owned, programs 0755, the rest 0644"

# A throwaway root: dpkg --root installs, the installed files are used, dpkg --root removes.
r="$work/root"
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers"
: > "$r/var/lib/dpkg/status"
dpkg --root="$r" --force-depends --force-script-chrootless -i "$deb" > "$work/dpkg.log" 2>&1 || {
  cat "$work/dpkg.log" >&2; fail "dpkg --root -i"; }
bin="$r/usr/bin"
for p in securestore git-credential-securestore docker-credential-securestore; do
  elf=$(readelf -dW "$bin/$p")
  [[ "$elf" != *RUNPATH* && "$elf" != *RPATH* ]] || fail "$p has a RUNPATH"
  [[ "$elf" == *"FLAGS_1"*"PIE"* && "$elf" == *BIND_NOW* ]] || fail "$p is not PIE with BIND_NOW"
  readelf -lW "$bin/$p" | grep -q GNU_RELRO || fail "$p has no RELRO"
done
[ "$("$bin/securestore" --version)" = "securestore $version" ] || fail "installed --version: $("$bin/securestore" --version)"
[ "$("$bin/docker-credential-securestore" version)" = "docker-credential-securestore (SecureStore) $version" ] ||
  fail "docker-credential-securestore version: $("$bin/docker-credential-securestore" version)"
export XDG_DATA_HOME="$work/home/data" XDG_CONFIG_HOME="$work/home/config" HOME="$work/home"
unset SECURESTORE_CONFIG SECURESTORE_BACKEND
export SECURESTORE_BACKEND=sqlite   # the headless default, even where a session bus runs
printf 'pkg-check-%s' "$$" | "$bin/securestore" add --service com.example.pkg --account alice
[ "$("$bin/securestore" get --service com.example.pkg --account alice)" = "pkg-check-$$" ] || fail "add/get"
export GIT_CONFIG_GLOBAL="$work/home/gitconfig" GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
git config --global credential.helper securestore
printf 'protocol=https\nhost=git.example.com\nusername=bob\npassword=git-%s\n\n' "$$" | PATH="$bin:$PATH" git credential approve
PATH="$bin:$PATH" git credential fill <<< $'protocol=https\nhost=git.example.com\n' | grep -qx "password=git-$$" || fail "git credential fill"
PATH="$bin:$PATH" docker-credential-securestore list | grep -q '{' || fail "docker-credential-securestore list"
ok "installed programs: --version and docker's version = $version, add/get, git credential approve/fill, docker list"
for page in securestore git-credential-securestore docker-credential-securestore; do
  LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -P cat "$r/usr/share/man/man1/$page.1.gz" > "$work/man.txt" 2> "$work/man.err" || fail "man $page"
  [ ! -s "$work/man.err" ] || { cat "$work/man.err" >&2; fail "man $page: warnings"; }
  grep -q "$page" "$work/man.txt" || fail "man $page: empty"
done
ok "man pages: 3 render without a warning"
if [ -f /usr/share/bash-completion/bash_completion ]; then
  # The loader searches $XDG_DATA_DIRS/bash-completion/completions (default /usr/local/share:/usr/share).
  completed=$(PATH="$bin:$PATH" XDG_DATA_DIRS="$r/usr/share" bash -c '
    source /usr/share/bash-completion/bash_completion
    _completion_loader securestore   # what the first TAB after "securestore" does
    fn=$(complete -p securestore | sed -n "s/.*-F \([^ ]*\).*/\1/p")
    COMP_WORDS=(securestore ad); COMP_CWORD=1; COMP_LINE="securestore ad"; COMP_POINT=${#COMP_LINE}
    "$fn" securestore ad securestore; echo "${COMPREPLY[*]}"')
  [ "$completed" = "add" ] || fail "bash: securestore ad<TAB> gave '$completed'"
  ok "bash: securestore ad<TAB> -> add (bash-completion's loader, from the installed folder)"
else ok "bash-completion not installed: bash completion not tried"; fi
if command -v fish >/dev/null; then
  completed=$(cd "$work" && fish --no-config -c "source $r/usr/share/fish/vendor_completions.d/securestore.fish; complete -C 'securestore ad'" | cut -f1)
  [ "$completed" = "add" ] || fail "fish: securestore ad<TAB> gave '$completed'"
  ok "fish: securestore ad<TAB> -> add (the installed vendor_completions.d/securestore.fish)"
fi
if command -v zsh >/dev/null; then
  zsh -n "$r/usr/share/zsh/vendor-completions/_securestore" || fail "zsh: the completion does not parse"
  ok "zsh: _securestore parses"
fi
dpkg --root="$r" --force-script-chrootless --remove securestore > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg --root --remove"; }
left=$( (find "$r/usr" -type f 2>/dev/null || true) | sed "s|^$r||")
[ -z "$left" ] || fail "left after remove: $left"
ok "dpkg --root --remove: no file left"

if command -v lintian >/dev/null; then
  lintian -I --pedantic --tag-display-limit 0 "$deb" 2>/dev/null | grep -v '^N:' > "$work/lintian" || true
  grep -E '^[EW]:' "$work/lintian" >&2 && fail "lintian"
  ok "lintian $(lintian --version | cut -d' ' -f2): no error or warning$(grep -c . "$work/lintian" | sed 's/^0$//; s/^\(.\+\)$/, \1 info tag(s)/'); overridden: $(lintian -I --pedantic --show-overrides "$deb" 2>/dev/null | grep -c '^O:')"
else ok "lintian not installed: not run (apt-get install lintian)"; fi
ok "passed in $(( $(date +%s) - t0 )) s"
