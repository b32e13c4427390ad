#!/usr/bin/env bash
# Runs a command inside a private D-Bus session bus with an unlocked gnome-keyring whose files live in a
# temporary folder. When the command ends, the bus and the daemon go away: nothing is left running.
# Usage: scripts/with-keyring.sh COMMAND [ARGS...]
set -euo pipefail
if [ "${SECURESTORE_IN_KEYRING_BUS:-}" = "1" ]; then exec "$@"; fi
export SECURESTORE_KEYRING_PASSWORD="${SECURESTORE_KEYRING_PASSWORD:-securestore-test-keyring}"
exec dbus-run-session -- bash -c '
  set -euo pipefail
  keyring_home="$(mktemp -d)"
  trap "rm -rf \"$keyring_home\"" EXIT
  export XDG_DATA_HOME="$keyring_home"          # gnome-keyring keeps its keyring files here
  export SECURESTORE_IN_KEYRING_BUS=1
  eval "$(printf "%s" "$SECURESTORE_KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets)"
  # Wait until the unlocked daemon owns the name, or a first client may D-Bus-activate a second, locked one.
  for i in $(seq 1 100); do
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
      org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true" && break
    sleep 0.05
  done
  # Tests that kill or lock the provider restart it unlocked with this command.
  export SECURESTORE_SECRET_SERVICE_PROVIDER=gnome-keyring
  export SECURESTORE_SECRET_SERVICE_RESTART="printf %s \"\$SECURESTORE_KEYRING_PASSWORD\" | gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null 2>&1"
  "$@"
' bash "$@"
