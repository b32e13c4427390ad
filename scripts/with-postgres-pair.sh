#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL 15 primary and a hot standby streaming from it: initdb into a
# temporary folder (as the `postgres` user when run as root), `pg_basebackup -R` into a second folder, both
# listening only on 127.0.0.1 on free ports, password (SCRAM) auth for a test role. When the command ends —
# also on failure or Ctrl-C — both servers are stopped and the folder removed.
#
# Exported to the command:
#   SECURESTORE_TEST_PG_PAIR_URL          both hosts, target_session_attrs=read-write (no password in it)
#   SECURESTORE_TEST_PG_PAIR_PRIMARY_URL  the primary alone;  SECURESTORE_TEST_PG_PAIR_STANDBY_URL  the standby alone
#   SECURESTORE_TEST_PG_PAIR_PASSWORD     the test role's password (pass it with passwordEnv, never in argv)
#   SECURESTORE_TEST_PG_PAIR_CONTROL      a script:
#       CONTROL primary|standby start|stop|kill   start, stop (fast) or stop (immediate, as a crash) a server
#       CONTROL promote                            promotes the standby (waits until it accepts writes)
#       CONTROL sync on|off                        synchronous_standby_names '*' or '' on the primary
#       CONTROL sql primary|standby SQL            runs SQL as the superuser, prints unaligned tuples
# Usage: scripts/with-postgres-pair.sh COMMAND [ARGS...]
set -euo pipefail

bin="${SECURESTORE_POSTGRES_BIN:-/usr/lib/postgresql/15/bin}"
for tool in initdb pg_ctl postgres pg_basebackup psql; do
  [ -x "$bin/$tool" ] || { echo "with-postgres-pair: $bin/$tool not found; run scripts/deps.sh (Debian postgresql-15)" >&2; exit 1; }
done

base="$(mktemp -d "${TMPDIR:-/tmp}/securestore-pgpair.XXXXXX")"
chmod 755 "$base"
primary="$base/primary"
standby="$base/standby"
sock="$base/sock"
control="$base/control.sh"
as_owner=()
mkdir -p "$sock" "$primary"
touch "$base/primary.log" "$base/standby.log"
if [ "$(id -u)" -eq 0 ]; then
  as_owner=(runuser -u postgres --)
  chown postgres: "$sock" "$primary" "$base/primary.log" "$base/standby.log"
  chown postgres: "$base"
fi
chmod 700 "$primary"

cleanup() {
  status=$?
  for d in "$primary" "$standby"; do
    if [ -f "$d/postmaster.pid" ]; then
      "${as_owner[@]}" "$bin/pg_ctl" -D "$d" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
    fi
  done
  rm -rf "$base"
  exit "$status"
}
child=""
trap cleanup EXIT
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; exit 130' INT
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; exit 143' TERM

password="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
"${as_owner[@]}" "$bin/initdb" -N -D "$primary" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
  --encoding=UTF8 --locale=C.UTF-8 >"$base/initdb.log" 2>&1 \
  || { cat "$base/initdb.log" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null \
    || echo $((20000 + RANDOM % 40000))
}
pport="$(free_port)"
sport="$(free_port)"
while [ "$sport" = "$pport" ]; do sport="$(free_port)"; done

cat > "$control" <<EOF
#!/usr/bin/env bash
# Controls the throwaway primary/standby pair (written by scripts/with-postgres-pair.sh).
set -euo pipefail
owner=(${as_owner[*]})
opts() { echo "-c listen_addresses=127.0.0.1 -p \$1 -c unix_socket_directories=$sock -c fsync=off -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on -c wal_sender_timeout=5s -c wal_receiver_timeout=5s"; }
dir() { case "\$1" in primary) echo "$primary" ;; standby) echo "$standby" ;; *) echo "no server \$1" >&2; exit 2 ;; esac; }
port() { case "\$1" in primary) echo "$pport" ;; standby) echo "$sport" ;; esac; }
sql() { "\${owner[@]}" "$bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$sock" -p "\$(port "\$1")" -U postgres -d postgres -c "\$2"; }
case "\${1:-}" in
  primary|standby)
    d="\$(dir "\$1")"
    case "\${2:-}" in
      start) "\${owner[@]}" "$bin/pg_ctl" -D "\$d" -l "$base/\$1.log" -w -t 60 -o "\$(opts "\$(port "\$1")")" start >/dev/null ;;
      stop)  "\${owner[@]}" "$bin/pg_ctl" -D "\$d" -m fast -w -t 60 stop >/dev/null ;;
      kill)  "\${owner[@]}" "$bin/pg_ctl" -D "\$d" -m immediate -w -t 60 stop >/dev/null ;;
      *) echo "usage: \$0 primary|standby start|stop|kill" >&2; exit 2 ;;
    esac ;;
  promote) "\${owner[@]}" "$bin/pg_ctl" -D "$standby" -w -t 60 promote >/dev/null ;;
  sync)
    case "\${2:-}" in on) names='*' ;; off) names='' ;; *) echo "usage: \$0 sync on|off" >&2; exit 2 ;; esac
    sql primary "ALTER SYSTEM SET synchronous_standby_names = '\$names'" && sql primary "SELECT pg_reload_conf()" >/dev/null ;;
  sql) sql "\$2" "\$3" ;;
  *) echo "usage: \$0 primary|standby start|stop|kill | promote | sync on|off | sql SERVER SQL" >&2; exit 2 ;;
esac
EOF
chmod 755 "$control"

"$control" primary start || { tail -n 30 "$base/primary.log" >&2; exit 1; }
"$control" sql primary "CREATE ROLE securestore LOGIN PASSWORD '$password'" >/dev/null
"$control" sql primary "CREATE DATABASE securestore OWNER securestore" >/dev/null
"${as_owner[@]}" "$bin/pg_basebackup" -N -D "$standby" -R -X stream -c fast -h "$sock" -p "$pport" -U postgres \
  >"$base/basebackup.log" 2>&1 || { cat "$base/basebackup.log" >&2; exit 1; }
chmod 700 "$standby"
"$control" standby start || { tail -n 30 "$base/standby.log" >&2; exit 1; }
for i in $(seq 1 100); do
  [ "$("$control" sql primary "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ] && break
  sleep 0.1
done

export SECURESTORE_TEST_PG_PAIR_URL="postgresql://securestore@127.0.0.1:$pport,127.0.0.1:$sport/securestore?target_session_attrs=read-write"
export SECURESTORE_TEST_PG_PAIR_PRIMARY_URL="postgresql://securestore@127.0.0.1:$pport/securestore"
export SECURESTORE_TEST_PG_PAIR_STANDBY_URL="postgresql://securestore@127.0.0.1:$sport/securestore"
export SECURESTORE_TEST_PG_PAIR_PASSWORD="$password"
export SECURESTORE_TEST_PG_PAIR_CONTROL="$control"
echo "with-postgres-pair: primary 127.0.0.1:$pport, standby 127.0.0.1:$sport (in $base)" >&2
set +e
"$@" 0<&0 &
child=$!
wait "$child"
status=$?
child=""
set -e
exit "$status"
