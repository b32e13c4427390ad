#!/usr/bin/env bash
# The Python keyring backend (python/keyrings-securestore), installed as a user installs it, against the installed
# tool:
#  1. the tool installed with scripts/install.sh into a scratch prefix put first on PATH (--bindir DIR: the
#     programs built there, default .build/static/release, built when missing), or with --system the
#     securestore already on PATH (the Debian package);
#  2. a scratch virtual environment with keyring, pytest, keyrings.cryptfile and pypiserver[passlib] from PyPI,
#     then `pip install ./python/keyrings-securestore` (not editable: the tests import the installed copy);
#  3. python/keyrings-securestore/tests on a scratch store with no session bus (headless: keyring's own
#     BackendBasicTests, the backend's rules, pip installing from a password-protected pypiserver with
#     `--keyring-provider import`), then test_backend.py again inside a private D-Bus session with an unlocked
#     gnome-keyring (scripts/with-keyring.sh): keyring's SecretService backend comes first, and the tool is
#     told to use the Secret Service (SECURESTORE_BACKEND=secret-service), so the suite runs on that backend;
#  4. keyring's BackendBasicTests with Debian's python3-keyring (23.9) when it is installed;
#  5. the benchmark (bench/bench_keyring.py): keyring.get_password/set_password through this backend against
#     keyrings.cryptfile.
# Needs python3-venv and PyPI (test dependencies only; the backend itself needs keyring alone).
# Usage: scripts/python-check.sh [--bindir DIR | --system] [--runs N] [--no-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bindir=.build/static/release system=0 runs=30 bench=1
while [ $# -gt 0 ]; do
  case "$1" in
    --bindir) bindir="${2:?}"; shift 2 ;;
    --system) system=1; shift ;;
    --runs) runs="${2:?}"; shift 2 ;;
    --no-bench) bench=0; shift ;;
    *) echo "python-check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/securestore-python-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ $system = 0 ]; then
  if [ -x "$bindir/securestore" ]; then
    bash scripts/install.sh --prefix "$work/prefix" --bindir "$bindir" >/dev/null
  else
    bash scripts/install.sh --prefix "$work/prefix" >/dev/null
  fi
  export PATH="$work/prefix/bin:$PATH"
fi
unset SECURESTORE_TOOL
command -v securestore >/dev/null || { echo "python-check: no securestore on PATH" >&2; exit 2; }
echo "python-check: tool $(command -v securestore) ($(securestore --version))"

python3=/usr/bin/python3
"$python3" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip -q --disable-pip-version-check)
"${pip[@]}" install --upgrade pip
"${pip[@]}" install keyring pytest keyrings.cryptfile "pypiserver[passlib]"
"${pip[@]}" install "$repo/python/keyrings-securestore"
rm -rf "$repo/python/keyrings-securestore/build" "$repo/python/keyrings-securestore/"*.egg-info
echo "python-check: $("$work/venv/bin/python" -m pip list --format=freeze 2>/dev/null | grep -iE '^(keyring|keyrings|pip|pypiserver|pytest)' | tr '\n' ' ')"
tests="$repo/python/keyrings-securestore/tests"
cd "$work"   # never import from the source tree

echo "python-check: headless (no session bus)"
env -u DBUS_SESSION_BUS_ADDRESS -u PYTHON_KEYRING_BACKEND "$work/venv/bin/pytest" -q -p no:cacheprovider -rs "$tests" 2>&1 | tail -4
status=${PIPESTATUS[0]}
[ "$status" = 0 ] || { echo "python-check: headless tests failed" >&2; exit 1; }

if command -v gnome-keyring-daemon >/dev/null && command -v dbus-run-session >/dev/null; then
  echo "python-check: desktop (private session bus, unlocked gnome-keyring; the tool on the Secret Service)"
  env -u PYTHON_KEYRING_BACKEND -u SECURESTORE_IN_KEYRING_BUS SECURESTORE_PYTEST_BACKEND=secret-service bash "$repo/scripts/with-keyring.sh" \
    "$work/venv/bin/pytest" -q -p no:cacheprovider -rs "$tests/test_backend.py" 2>&1 | tail -4
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "python-check: desktop tests failed" >&2; exit 1; }
else
  echo "python-check: no gnome-keyring or dbus-run-session: desktop run skipped"
fi

if "$python3" -c 'import keyring.testing.backend, pytest' 2>/dev/null; then
  echo "python-check: Debian's python3-keyring $("$python3" -c 'import importlib.metadata as m; print(m.version("keyring"))')"
  "$python3" -m venv --system-site-packages "$work/venv-debian"
  "$work/venv-debian/bin/python" -m pip -q --disable-pip-version-check install --no-deps "$repo/python/keyrings-securestore"
  rm -rf "$repo/python/keyrings-securestore/build" "$repo/python/keyrings-securestore/"*.egg-info
  env -u DBUS_SESSION_BUS_ADDRESS "$work/venv-debian/bin/python" -m pytest -q -p no:cacheprovider \
    "$tests/test_backend.py" -k "BackendBasic" 2>&1 | tail -2
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "python-check: BackendBasicTests on Debian's keyring failed" >&2; exit 1; }
fi

if [ $bench = 1 ]; then
  echo "python-check: benchmark"
  env -u DBUS_SESSION_BUS_ADDRESS "$work/venv/bin/python" "$repo/python/keyrings-securestore/bench/bench_keyring.py" --runs "$runs"
fi
echo "python-check: passed in $(( $(date +%s) - t0 )) s"
