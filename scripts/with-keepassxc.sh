#!/usr/bin/env bash
# Runs a command inside a private D-Bus session bus whose Secret Service is a headless KeePassXC (Debian's
# `keepassxc`): a throwaway database with one group exposed over the Secret Service, unlocked at start, with
# notifications and access/delete confirmations off (so KeePassXC completes its own prompts at once). Its
# home, config and database live in a temporary folder; when the command ends, the bus and KeePassXC go away.
# Usage: scripts/with-keepassxc.sh COMMAND [ARGS...]
set -euo pipefail
if [ "${SECURESTORE_IN_KEYRING_BUS:-}" = "1" ]; then exec "$@"; fi
command -v keepassxc >/dev/null && command -v keepassxc-cli >/dev/null || {
  echo "with-keepassxc: needs keepassxc (apt-get install keepassxc; scripts/deps.sh installs it)" >&2; exit 69; }
exec dbus-run-session -- bash -c '
  set -euo pipefail
  home="$(mktemp -d)"
  # KeePassXC may not end on SIGTERM once its session bus is going away: it gets two seconds, then SIGKILL (a
  # daemon left behind outlives the run and its folder).
  stop_keepassxc() {
    pkill -f "keepassxc --pw-stdin $home/test.kdbx" 2>/dev/null || true
    for i in $(seq 1 40); do pgrep -f "keepassxc --pw-stdin $home/test.kdbx" >/dev/null || break; sleep 0.05; done
    pkill -9 -f "keepassxc --pw-stdin $home/test.kdbx" 2>/dev/null || true
    rm -rf "$home"
  }
  trap stop_keepassxc EXIT
  export HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" XDG_CACHE_HOME="$home/cache"
  export XDG_RUNTIME_DIR="$home/runtime" QT_QPA_PLATFORM=offscreen SECURESTORE_IN_KEYRING_BUS=1
  mkdir -p -m 700 "$XDG_CONFIG_HOME/keepassxc" "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
  password="securestore-test-keepassxc"
  # A database whose group "SecretService" is exposed (the database setting KeePassXC keeps in its metadata as
  # FDO_SECRETS_EXPOSED_GROUP, which keepassxc-cli cannot set: made through an XML export and import), with no
  # recycle bin, so a deleted item is gone rather than moved.
  printf "%s\n%s\n" "$password" "$password" | keepassxc-cli db-create -q -p "$home/seed.kdbx" >/dev/null 2>&1
  printf "%s\n" "$password" | keepassxc-cli mkdir -q "$home/seed.kdbx" SecretService >/dev/null 2>&1
  printf "%s\n" "$password" | keepassxc-cli export -q -f xml "$home/seed.kdbx" > "$home/seed.xml" 2>/dev/null
  python3 - "$home/seed.xml" "$home/exposed.xml" <<"PY"
import base64, sys, uuid, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1]); meta = tree.getroot().find("Meta")
group = next(g for g in tree.getroot().iter("Group") if g.findtext("Name") == "SecretService")
meta.find("RecycleBinEnabled").text = "False"
data = meta.find("CustomData")
if data is None: data = ET.SubElement(meta, "CustomData")
item = ET.SubElement(data, "Item")
ET.SubElement(item, "Key").text = "FDO_SECRETS_EXPOSED_GROUP"
ET.SubElement(item, "Value").text = "{%s}" % uuid.UUID(bytes=base64.b64decode(group.findtext("UUID")))
tree.write(sys.argv[2], xml_declaration=True, encoding="UTF-8")
PY
  printf "%s\n%s\n" "$password" "$password" | keepassxc-cli import -q -p "$home/exposed.xml" "$home/test.kdbx" >/dev/null 2>&1
  cat > "$XDG_CONFIG_HOME/keepassxc/keepassxc.ini" <<"INI"
[General]
ConfigVersion=2
SingleInstance=false
RememberLastDatabases=false
RememberLastKeyFiles=false
OpenPreviousDatabasesOnStartup=false
AutoSaveAfterEveryChange=false
AutoSaveOnExit=true
UpdateCheckMessageShown=true
[GUI]
MinimizeOnStartup=true
ShowTrayIcon=false
[Browser]
Enabled=false
[SSHAgent]
Enabled=false
[FdoSecrets]
Enabled=true
ShowNotification=false
ConfirmDeleteItem=false
ConfirmAccessItem=false
UnlockBeforeSearch=false
INI
  # Starts KeePassXC on the database and waits until its collection is unlocked; tests that kill or lock the
  # provider restart it with this script (SECURESTORE_SECRET_SERVICE_RESTART).
  cat > "$home/restart.sh" <<SH
#!/usr/bin/env bash
set -euo pipefail
pkill -f "keepassxc --pw-stdin $home/test.kdbx" 2>/dev/null || true
for i in \$(seq 1 100); do pgrep -f "keepassxc --pw-stdin $home/test.kdbx" >/dev/null || break; sleep 0.05; done
printf "%s\\n" "$password" | setsid keepassxc --pw-stdin "$home/test.kdbx" >>"$home/keepassxc.log" 2>&1 &
for i in \$(seq 1 300); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \\
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true" &&
  dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets/collection/test \\
    org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null |
    grep -q "boolean false" && exit 0
  sleep 0.1
done
exit 1
SH
  chmod +x "$home/restart.sh"
  printf "%s\n" "$password" | keepassxc --pw-stdin "$home/test.kdbx" >"$home/keepassxc.log" 2>&1 &
  kp=$!
  # Ready when it owns the name and its collection (named after the database file) is unlocked.
  # (NameHasOwner first: a call to org.freedesktop.secrets before KeePassXC owns it would D-Bus-activate another
  # provider, gnome-keyring, in its place.)
  for i in $(seq 1 300); do
    locked=""
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
      org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true" &&
    locked="$(dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets/collection/test \
      org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null || true)"
    case "$locked" in *"boolean false"*) break ;; esac
    kill -0 $kp 2>/dev/null || { cat "$home/keepassxc.log" >&2; echo "with-keepassxc: KeePassXC exited" >&2; exit 69; }
    sleep 0.1
  done
  case "$locked" in *"boolean false"*) ;; *) cat "$home/keepassxc.log" >&2; echo "with-keepassxc: not unlocked" >&2; exit 69 ;; esac
  export SECURESTORE_SECRET_SERVICE_PROVIDER=keepassxc SECURESTORE_SECRET_SERVICE_RESTART="$home/restart.sh"
  "$@"
' bash "$@"
