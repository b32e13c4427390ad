#!/usr/bin/env bash
# Installs the built Debian package on a brand-new Debian 12 root the way a user would, and checks what they
# expect: `apt-get install ./securestore_*.deb` resolves its Depends (and Recommends) from the mirror;
# `securestore --version` says the package's version; `securestore add/get` round-trips a secret; `man
# securestore` and the helpers' man pages open; bash completes `securestore ad<TAB>` to `add` from the installed
# completion (bash-completion's loader, as an interactive shell does); `git credential approve/fill` goes
# through the installed git-credential-securestore; docker's helper answers `list`; then `apt-get remove
# securestore` leaves none of the package's files and nothing else but the user's store (its SQLite file and
# key file) and the ~/.gitconfig the check wrote; the package is not left half-installed ("rc").
#
# Needs root, debootstrap and the network (Debian mirrors); ~3-5 min, ~400 MB in the work folder (removed at
# the end unless it fails). Builds nothing: give it the .deb (scripts/package-deb.sh prints its path).
# --python: also, before the removal, keyrings-securestore (python/keyrings-securestore) pip-installed into a
# virtual environment (with keyring, pytest, keyrings.cryptfile, pypiserver: wheels fetched from PyPI and built on this
# machine, installed in the root with --no-index) and its tests against the installed tool: keyring's
# own BackendBasicTests and pip installing from a password-protected pypiserver with the password only in the store.
# Usage: scripts/fresh-install-check.sh [--python] DEB [WORK_FOLDER]
set -euo pipefail
python=0
if [ "${1:-}" = --python ]; then python=1; shift; fi
repo="$(cd "$(dirname "$0")/.." && pwd)"
deb="$(readlink -f "${1:?usage: scripts/fresh-install-check.sh [--python] DEB [WORK_FOLDER]}")"
[ -f "$deb" ] || { echo "fresh-install-check: no such file: $deb" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "fresh-install-check: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-install-check: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
work="${2:-$(mktemp -d /var/tmp/securestore-fresh-install.XXXXXX)}"
root="$work/root"
passed=0
cleanup() {
  for m in dev/pts dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
  if [ $passed = 1 ]; then rm -rf "$work"; else echo "fresh-install-check: kept $work (logs: *.log)" >&2; fi
}
trap cleanup EXIT
mkdir -p "$work"
t0=$(date +%s)
if [ -x "$root/usr/bin/apt-get" ]; then
  echo "fresh-install-check: reusing the root in $root (a kept work folder)"
else
  echo "fresh-install-check: debootstrap bookworm (minbase) into $root"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"; mount --rbind /sys "$root/sys"; mount --rbind /dev "$root/dev"
rm -f "$root"/tmp/securestore_*.deb
cp "$deb" "$root/tmp/$(dpkg-deb -f "$deb" Package)_$(dpkg-deb -f "$deb" Version)_$(dpkg-deb -f "$deb" Architecture).deb"
rm -rf "$root/tmp/keyrings-securestore"
rm -rf "$root/tmp/wheelhouse"
if [ $python = 1 ]; then
  # The root has no route to PyPI of its own (nor this machine's certificates): the wheels are fetched here, with
  # this machine's Debian 12 Python (the same 3.11), and installed in the root with --no-index.
  cp -r "$repo/python/keyrings-securestore" "$root/tmp/"
  rm -rf "$root/tmp/keyrings-securestore/build" "$root/tmp/keyrings-securestore/"*.egg-info
  /usr/bin/python3 -m venv "$work/download-venv"
  "$work/download-venv/bin/python" -m pip -q install --upgrade pip
  # Wheels of everything, built here for the sdists (keyrings.cryptfile, keyrings-securestore).
  "$work/download-venv/bin/python" -m pip -q wheel -w "$root/tmp/wheelhouse" pip keyring pytest keyrings.cryptfile \
    "pypiserver[passlib]" "$root/tmp/keyrings-securestore"
  rm -rf "$root/tmp/keyrings-securestore/build" "$root/tmp/keyrings-securestore/"*.egg-info
  echo "fresh-install-check: $(ls "$root/tmp/wheelhouse" | wc -l) wheels for the root"
fi
cat > "$root/tmp/check.sh" <<'INSIDE'
set -euo pipefail
python=0; [ -d /tmp/keyrings-securestore ] && python=1
export DEBIAN_FRONTEND=noninteractive
say() { echo "check: $*"; }
snapshot() {   # every path outside the volatile folders (apt's and dpkg's own state, caches, logs)
  find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /var/cache \
       -o -path /var/log -o -path /var/lib/apt -o -path /var/lib/dpkg \) -prune -o -print | LC_ALL=C sort
}
# A kept root (an earlier failed run): start from no package and no store again.
if dpkg-query -W securestore >/dev/null 2>&1; then apt-get purge -y -q securestore >/dev/null; fi
rm -rf /root/.local /root/.config /root/.gitconfig
apt-get update -q >/dev/null
# What a user typically has already: man, bash's completion, git.
apt-get install -y -q --no-install-recommends man-db bash-completion git ca-certificates >/dev/null
[ $python = 0 ] || apt-get install -y -q --no-install-recommends python3-venv >/dev/null
deb=$(ls /tmp/securestore_*.deb)
say "apt-get install $deb"
apt-get install -y -q "$deb" > /tmp/install.log
grep -E "^The following NEW packages|^  " /tmp/install.log | head -8 || true
version=$(dpkg-query -W -f='${Version}' securestore)
[ "$(securestore --version)" = "securestore $version" ] || { say "FAIL: --version says '$(securestore --version)', the package $version"; exit 1; }
[ "$(docker-credential-securestore version)" = "docker-credential-securestore (SecureStore) $version" ] ||
  { say "FAIL: docker-credential-securestore version says '$(docker-credential-securestore version)'"; exit 1; }
say "securestore --version: $(securestore --version) = the package's version = docker-credential-securestore version"
for lib in libsodium23 libsqlite3-0 libsecret-1-0; do
  dpkg-query -W -f='${Status}\n' "$lib" | grep -q "install ok installed" || { say "FAIL: $lib was not installed"; exit 1; }
done
say "Depends (libsodium23, libsqlite3-0) and Recommends (libsecret-1-0) installed by apt"
dpkg-query -L securestore | LC_ALL=C sort > /tmp/package-files
snapshot > /tmp/before

printf 's3cret-%s' "$$" | securestore add --service com.example.fresh --account alice
[ "$(securestore get --service com.example.fresh --account alice)" = "s3cret-$$" ] || { say "FAIL: get"; exit 1; }
say "securestore add/get round trip on $(securestore backends | grep -i selected | head -1)"

man -P cat securestore 2>/tmp/man.err | grep -q "securestore" || { say "FAIL: man securestore"; cat /tmp/man.err; exit 1; }
[ ! -s /tmp/man.err ] || { say "FAIL: man securestore warned:"; cat /tmp/man.err; exit 1; }
man -P cat git-credential-securestore | grep -q "git-credential-securestore" || { say "FAIL: man git-credential-securestore"; exit 1; }
man -P cat docker-credential-securestore | grep -q "docker-credential-securestore" || { say "FAIL: man docker-credential-securestore"; exit 1; }
say "man securestore, git-credential-securestore, docker-credential-securestore: $(man -w securestore)"

completed=$(bash -c '
  source /usr/share/bash-completion/bash_completion
  _completion_loader securestore        # what bash-completion does on the first TAB after "securestore"
  fn=$(complete -p securestore | sed -n "s/.*-F \([^ ]*\).*/\1/p")
  COMP_WORDS=(securestore ad); COMP_CWORD=1; COMP_LINE="securestore ad"; COMP_POINT=${#COMP_LINE}
  "$fn" securestore ad securestore
  echo "${COMPREPLY[*]}"')
[ "$completed" = "add" ] || { say "FAIL: securestore ad<TAB> completed to '$completed'"; exit 1; }
say "bash: securestore ad<TAB> -> $completed (loaded on demand from /usr/share/bash-completion/completions/securestore)"

git config --global credential.helper securestore
printf 'protocol=https\nhost=git.example.com\nusername=bob\npassword=git-pw-%s\n\n' "$$" | git credential approve
filled=$(printf 'protocol=https\nhost=git.example.com\n\n' | GIT_TERMINAL_PROMPT=0 git credential fill)
echo "$filled" | grep -qx "password=git-pw-$$" || { say "FAIL: git credential fill gave: $(echo "$filled" | sed 's/password=.*/password=…/')"; exit 1; }
echo "$filled" | grep -qx "username=bob" || { say "FAIL: git credential fill: no username"; exit 1; }
say "git credential fill through $(command -v git-credential-securestore): username=bob, the password stored by approve"
docker-credential-securestore list >/dev/null
say "docker-credential-securestore list: $(docker-credential-securestore list)"

if [ $python = 1 ]; then
  say "Python: pip install ./keyrings-securestore in a virtual environment, then its tests against the installed tool"
  export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
  python3 -m venv /tmp/venv
  wheels=(--no-index --find-links /tmp/wheelhouse)
  /tmp/venv/bin/python -m pip install -q "${wheels[@]}" --upgrade pip   # Debian's 23.0 has no --keyring-provider
  /tmp/venv/bin/python -m pip install -q "${wheels[@]}" keyring pytest keyrings.cryptfile "pypiserver[passlib]" keyrings-securestore
  say "$(/tmp/venv/bin/python -m pip list --format=freeze | grep -iE '^(keyring|keyrings|pip|pypiserver)' | tr '\n' ' ')"
  if ! (cd /tmp && PYTHONDONTWRITEBYTECODE=1 /tmp/venv/bin/pytest -q -p no:cacheprovider -rs /tmp/keyrings-securestore/tests | tail -3); then
    say "FAIL: the Python backend's tests"; exit 1
  fi
  say "keyring backend: $(cd /tmp && /tmp/venv/bin/keyring --list-backends | grep -i securestore)"
fi
nfiles=$(while IFS= read -r f; do [ -d "$f" ] || echo "$f"; done < /tmp/package-files | wc -l)
say "apt-get remove securestore"
apt-get remove -y -q securestore >/dev/null
status=$(dpkg-query -W -f='${db:Status-Abbrev}' securestore 2>/dev/null || true)
case "$status" in ""|"un "*|"pn "*) ;; *) say "FAIL: after remove the package is '$status'"; exit 1 ;; esac
left=0
while IFS= read -r f; do
  if [ -e "$f" ] && [ ! -d "$f" ]; then say "FAIL: $f is still there"; left=1; fi
done < /tmp/package-files
[ $left = 0 ] || exit 1
snapshot > /tmp/after
new=$(LC_ALL=C comm -13 /tmp/before /tmp/after | grep -vE '^/root/\.local(/share(/securestore(/.*)?)?)?$|^/root/\.config(/securestore(/.*)?)?$|^/root/\.gitconfig$' || true)
[ -z "$new" ] || { say "FAIL: left behind:"; echo "$new"; exit 1; }
store=$(ls /root/.local/share/securestore/ /root/.config/securestore/ | tr '\n' ' ')
say "removed: none of its $nfiles files remains; left: the user's store ($store) and ~/.gitconfig"
INSIDE
status=0
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash /tmp/check.sh 2>&1 | tee "$work/check.log" || status=$?
[ $status = 0 ] || { echo "fresh-install-check: FAILED (log: $work/check.log)" >&2; exit 1; }
passed=1
echo "fresh-install-check: passed on a new Debian 12 root in $(( $(date +%s) - t0 )) s"
