#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL 15 cluster: initdb into a temporary folder (as the `postgres`
# user when run as root), listening only on 127.0.0.1 on a free port, password (SCRAM) auth for a test role.
# When the command ends — also on failure or Ctrl-C — the server is stopped and the folder removed.
#
# Exported to the command:
#   SECURESTORE_TEST_POSTGRES_URL       postgresql://securestore@127.0.0.1:PORT/securestore (no password in it)
#   SECURESTORE_TEST_POSTGRES_PASSWORD  the test role's password (pass it with passwordEnv, never in argv)
#   SECURESTORE_TEST_POSTGRES_CONTROL   a script: `$SECURESTORE_TEST_POSTGRES_CONTROL stop|start|status`
#   SECURESTORE_TEST_POSTGRES_DATA, SECURESTORE_TEST_POSTGRES_PG_CTL   the data folder and pg_ctl, for reference
# Usage: scripts/with-postgres.sh COMMAND [ARGS...]
set -euo pipefail
if [ "${SECURESTORE_IN_POSTGRES:-}" = "1" ] && [ -n "${SECURESTORE_TEST_POSTGRES_URL:-}" ]; then exec "$@"; fi

bin="${SECURESTORE_POSTGRES_BIN:-/usr/lib/postgresql/15/bin}"
for tool in initdb pg_ctl postgres; do
  [ -x "$bin/$tool" ] || { echo "with-postgres: $bin/$tool not found; run scripts/deps.sh (Debian postgresql-15)" >&2; exit 1; }
done

base="$(mktemp -d "${TMPDIR:-/tmp}/securestore-pg.XXXXXX")"
chmod 755 "$base"
data="$base/data"
log="$base/server.log"
control="$base/control.sh"
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  owner=postgres
  as_owner=(runuser -u postgres --)
  mkdir -p "$base/sock" "$data"
  chown postgres: "$base/sock" "$data"
  chmod 700 "$data"
  touch "$log"
  chown postgres: "$log"
else
  mkdir -p "$base/sock"
fi

cleanup() {
  status=$?
  if [ -f "$data/postmaster.pid" ]; then
    "${as_owner[@]}" "$bin/pg_ctl" -D "$data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  rm -rf "$base"
  exit "$status"
}
child=""
trap cleanup EXIT
# A signal to this script alone (not its process group) still ends the command and removes the cluster.
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; exit 130' INT
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; exit 143' TERM

password="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"

"${as_owner[@]}" "$bin/initdb" -N -D "$data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
  --encoding=UTF8 --locale=C.UTF-8 >"$base/initdb.log" 2>&1 \
  || { cat "$base/initdb.log" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null \
    || echo $((20000 + RANDOM % 40000))
}

# The control script the tests use to stop and restart the server (same port, same data).
started=0
for attempt in 1 2 3 4 5; do
  port="$(free_port)"
  cat > "$control" <<EOF
#!/usr/bin/env bash
# stop | start | status the throwaway test server (written by scripts/with-postgres.sh).
exec </dev/null >>"$log" 2>&1
case "\${1:-}" in
  start)  exec ${as_owner[*]} "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$base/sock -c fsync=${SECURESTORE_POSTGRES_FSYNC:-off}" start ;;
  stop)   exec ${as_owner[*]} "$bin/pg_ctl" -D "$data" -m fast -w -t 60 stop ;;
  status) exec ${as_owner[*]} "$bin/pg_ctl" -D "$data" status ;;
  *) echo "usage: \$0 start|stop|status" >&2; exit 2 ;;
esac
EOF
  chmod 755 "$control"
  if "$control" start; then started=1; break; fi
  echo "with-postgres: start on port $port failed (attempt $attempt); retrying" >&2
done
if [ "$started" != 1 ]; then tail -n 30 "$log" >&2; exit 1; fi

psql_admin=("${as_owner[@]}" "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$base/sock" -p "$port" -U postgres -d postgres)
"${psql_admin[@]}" -c "CREATE ROLE securestore LOGIN PASSWORD '$password'" >/dev/null
"${psql_admin[@]}" -c "CREATE DATABASE securestore OWNER securestore" >/dev/null

export SECURESTORE_TEST_POSTGRES_URL="postgresql://securestore@127.0.0.1:$port/securestore"
export SECURESTORE_TEST_POSTGRES_PASSWORD="$password"
export SECURESTORE_TEST_POSTGRES_CONTROL="$control"
export SECURESTORE_TEST_POSTGRES_DATA="$data"
export SECURESTORE_TEST_POSTGRES_PG_CTL="$bin/pg_ctl"
export SECURESTORE_IN_POSTGRES=1
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $data)" >&2
# In the background with `wait`, so the traps above run at once; stdin stays the caller's.
set +e
"$@" 0<&0 &
child=$!
wait "$child"
status=$?
child=""
set -e
exit "$status"
