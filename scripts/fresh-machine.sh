#!/usr/bin/env bash
# Runs the README's quickstart on a brand-new Debian 12 root: debootstrap (minbase), the packages swift.org
# lists for the Swift toolchain on Debian 12, the toolchain that runs this script copied in, and a clone of
# this repository's HEAD; then `scripts/run.sh` and `scripts/test.sh` inside it, as root. What CI cannot
# show (its machine keeps what earlier runs installed): that the two commands work from nothing.
# Needs root, debootstrap and the network (Debian mirrors); takes ~10 min and ~5 GB in the work folder.
# Usage: scripts/fresh-machine.sh [WORK_FOLDER]   (default: a new folder under /var/tmp, removed at the end)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
[ "$(id -u)" = 0 ] || { echo "fresh-machine: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-machine: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
swift_bin=$(dirname "$(readlink -f "$(command -v swift)")")
toolchain=$(dirname "$(dirname "$swift_bin")")   # …/usr/bin/swift → the toolchain's root
work="${1:-$(mktemp -d /var/tmp/securestore-fresh.XXXXXX)}"
root="$work/root"
passed=0
cleanup() {
  for m in dev/pts dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
  if [ $passed = 1 ]; then rm -rf "$work"; else echo "fresh-machine: kept $work (logs: *.log)" >&2; fi
}
trap cleanup EXIT
mkdir -p "$work"
echo "fresh-machine: debootstrap bookworm into $root"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"; mount --rbind /sys "$root/sys"; mount --rbind /dev "$root/dev"
inside() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH="/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" bash -c "$1"
}
echo "fresh-machine: the Swift toolchain's Debian 12 packages"
inside 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q binutils git gnupg2 libc6-dev \
  libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev libsqlite3-0 libstdc++-12-dev libxml2-dev libncurses-dev \
  libz3-dev pkg-config tzdata unzip zlib1g-dev ca-certificates' >"$work/toolchain-deps.log" 2>&1
mkdir -p "$root/opt/swift"
cp -a "$toolchain/." "$root/opt/swift/"
git clone -q "$repo" "$root/root/SecureStore"
status=0
echo "fresh-machine: scripts/run.sh"
inside 'cd /root/SecureStore && scripts/run.sh' >"$work/run.log" 2>&1 || status=$?
tail -5 "$work/run.log" || true
[ $status -eq 0 ] || { echo "fresh-machine: scripts/run.sh failed ($status); log: $work/run.log" >&2; exit 1; }
echo "fresh-machine: scripts/test.sh"
inside 'cd /root/SecureStore && scripts/test.sh' >"$work/test.log" 2>&1 || status=$?
grep -E "Test run with|skipped:|✘" "$work/test.log" | tail -8 || true
[ $status -eq 0 ] || { echo "fresh-machine: scripts/test.sh failed ($status); log: $work/test.log" >&2; exit 1; }
passed=1
echo "fresh-machine: both quickstart commands passed on a new Debian 12 root"
