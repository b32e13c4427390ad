#!/usr/bin/env bash
# Installs (or uninstalls) the securestore tool, the git and docker credential helpers, their man pages, the
# bash, zsh and fish completions and the docs under a prefix: the files and layout of the Debian package
# (scripts/package-deb.sh stages the package with this script, --prefix /usr).
#
#   scripts/install.sh [--prefix DIR] [--destdir DIR] [--bindir DIR]     # default prefix /usr/local
#   scripts/install.sh [--prefix DIR] --uninstall
#
#   PREFIX/bin/securestore, git-credential-securestore, docker-credential-securestore   (stripped)
#   PREFIX/share/man/man1/securestore.1.gz, git-credential-securestore.1.gz, docker-credential-securestore.1.gz
#   PREFIX/share/bash-completion/completions/securestore
#   PREFIX/share/zsh/vendor-completions/_securestore     (/usr: Debian's folder for packages)
#   PREFIX/share/zsh/site-functions/_securestore         (any other prefix: in zsh's default $fpath)
#   PREFIX/share/fish/vendor_completions.d/securestore.fish
#   PREFIX/share/doc/securestore/…                       (README, the tool's and the helpers' docs, LICENSE)
#
# --bindir DIR takes the three programs already built there; without it they are built once, release, with the
# static Swift standard library, into .build/static (apart from the shared-runtime builds of scripts/run.sh and
# scripts/test.sh, so neither rebuilds the other): about 6 min the first time on two shared cores, 1.5 min when
# nothing changed (each product's build recompiles a few modules the previous product's build compiled its own way).
# --destdir stages the tree under DIR (as `make install DESTDIR=`). --uninstall removes exactly these files and
# the folders left empty (under /usr and /usr/local not bin, share/man, share/doc or share); it never
# touches a user's store (~/.local/share/securestore, ~/.config/securestore).
# Needs no network.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/usr/local destdir="" bindir="" uninstall=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    --prefix=*) prefix="${1#*=}"; shift ;;
    --destdir) destdir="${2:?--destdir needs a folder}"; shift 2 ;;
    --destdir=*) destdir="${1#*=}"; shift ;;
    --bindir) bindir="${2:?--bindir needs a folder}"; shift 2 ;;
    --bindir=*) bindir="${1#*=}"; shift ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be an absolute path" >&2; exit 2 ;; esac
prefix="${prefix%/}"
[ -n "$prefix" ] || prefix=/usr   # "/" alone would put bin/ at the root
programs=(securestore git-credential-securestore docker-credential-securestore)
docs=(README.md LICENSE Sources/SecureStoreCore/SecureStoreCore.docc/CommandLineTool.md
      Sources/SecureStoreCore/SecureStoreCore.docc/CredentialHelpers.md Sources/SecureStoreCore/SecureStoreCore.docc/ChoosingABackend.md
      Sources/SecureStoreCore/SecureStoreCore.docc/SecurityModel.md Sources/SecureStoreCore/SecureStoreCore.docc/Limits.md)
if [ "$prefix" = /usr ]; then zshdir=share/zsh/vendor-completions; else zshdir=share/zsh/site-functions; fi

# Every file this script installs, relative to the prefix (the uninstall list and the package's contents).
files=()
for p in "${programs[@]}"; do files+=("bin/$p" "share/man/man1/$p.1.gz"); done
files+=(share/bash-completion/completions/securestore "$zshdir/_securestore" share/fish/vendor_completions.d/securestore.fish)
for d in "${docs[@]}"; do files+=("share/doc/securestore/$(basename "$d")"); done

root="$destdir$prefix"
if [ $uninstall = 1 ]; then
  removed=0
  for f in "${files[@]}"; do
    if [ -e "$root/$f" ] || [ -L "$root/$f" ]; then rm -f "$root/$f"; removed=$((removed + 1)); fi
  done
  # Its own folder and the completion folders; under a prefix of its own (not /usr or /usr/local, whose bin,
  # share/man, ... belong to the system) also the rest of the layout; deepest first, each only when empty.
  dirs=(share/doc/securestore share/fish/vendor_completions.d share/fish "$zshdir" share/zsh
        share/bash-completion/completions share/bash-completion)
  case "$prefix" in
    /usr|/usr/local) ;;
    *) dirs+=(share/man/man1 share/man share/doc share bin) ;;
  esac
  for d in "${dirs[@]}"; do rmdir "$root/$d" 2>/dev/null || true; done
  echo "install.sh: removed $removed file(s) from $root"
  exit 0
fi

if [ -z "$bindir" ]; then
  for p in "${programs[@]}"; do
    swift build -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now \
      --scratch-path .build/static --product "$p" >&2
  done
  bindir=.build/static/release
fi
for p in "${programs[@]}"; do
  [ -x "$bindir/$p" ] || { echo "install.sh: $bindir/$p is missing (build it, or leave out --bindir)" >&2; exit 1; }
done

umask 022
stage=$(mktemp -d "${TMPDIR:-/tmp}/securestore-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# Generated from the tool's command table with the tool being installed: they describe exactly that binary.
tool="$bindir/securestore"
"$tool" manpage > "$stage/securestore.1"
cp packaging/man/git-credential-securestore.1 packaging/man/docker-credential-securestore.1 "$stage/"
for p in "${programs[@]}"; do gzip -9n < "$stage/$p.1" > "$stage/$p.1.gz"; done
"$tool" completions bash > "$stage/securestore.bash"
"$tool" completions zsh > "$stage/_securestore"
"$tool" completions fish > "$stage/securestore.fish"

install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" "$root/$zshdir" \
           "$root/share/fish/vendor_completions.d" "$root/share/doc/securestore"
for p in "${programs[@]}"; do
  # Stripped: the symbol tables are most of the size and nothing at run time reads them.
  install -m 0755 "$bindir/$p" "$root/bin/$p"
  if command -v strip >/dev/null; then strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/bin/$p"; fi
  install -m 0644 "$stage/$p.1.gz" "$root/share/man/man1/$p.1.gz"
done
install -m 0644 "$stage/securestore.bash" "$root/share/bash-completion/completions/securestore"
install -m 0644 "$stage/_securestore" "$root/$zshdir/_securestore"
install -m 0644 "$stage/securestore.fish" "$root/share/fish/vendor_completions.d/securestore.fish"
for d in "${docs[@]}"; do install -m 0644 "$d" "$root/share/doc/securestore/$(basename "$d")"; done
for f in "${files[@]}"; do [ -e "$root/$f" ] || { echo "install.sh: $root/$f was not installed" >&2; exit 1; }; done
echo "install.sh: installed ${#files[@]} files under $root ($("$root/bin/securestore" --version))"
if [ -z "$destdir" ]; then
  case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "install.sh: add $prefix/bin to PATH" ;; esac
  if [ "$prefix" != /usr ] && [ "$prefix" != /usr/local ]; then
    echo "install.sh: man and completions: MANPATH=$prefix/share/man, XDG_DATA_DIRS=$prefix/share:\$XDG_DATA_DIRS (bash, fish), fpath+=($prefix/$zshdir) (zsh)"
  fi
fi
