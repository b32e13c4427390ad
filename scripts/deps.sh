#!/usr/bin/env bash
# Installs the Debian packages SecureStore builds and tests with, when any is missing (needs root or sudo).
set -euo pipefail
packages=(libsqlite3-dev libsodium-dev libsecret-1-dev pkg-config dbus dbus-x11 libsecret-tools sqlite3
          gnome-keyring keepassxc procps   # the two Secret Service providers the tests run on (pkill/pgrep restart KeePassXC)
          libpq-dev postgresql-15 postgresql-client-15
          python3-keyring python3-pytest   # Python keyring's backend suite, run through the tool
          git python3-docker   # git and the docker SDK for Python: real clients of the credential helpers
          groff-base man-db)   # the man page test renders it with groff and man -l
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
