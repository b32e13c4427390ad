#!/usr/bin/env bash
# The server's CPU time per add and per lookup for the PostgreSQL schema 3 and schema 4 tables and the bench's
# one-statement floor table, on one throwaway cluster: pgbench (prepared statements, one client) sends the
# statements the backend sends (an add: the namespace's lock and the guarded insert in one pipeline, one
# implicit transaction; a lookup: the select by unique key), and the cluster's CPU time (the postmaster, its
# live children and its reaped ones, from /proc) is read before and after each run. CPU time, unlike wall
# time, hardly moves with the other load on a shared machine.
# Usage: [TARGETS="floor s4 s3"] scripts/with-postgres.sh Benchmarks/postgres-schema-cpu.sh [ROWS] [TRANSACTIONS] [ROUNDS]
set -euo pipefail
rows="${1:-10000}"; tx="${2:-20000}"; rounds="${3:-3}"; targets="${TARGETS:-floor s3 s4}"
url="$SECURESTORE_TEST_POSTGRES_URL"
export PGPASSWORD="$SECURESTORE_TEST_POSTGRES_PASSWORD"
bin="$(dirname "$SECURESTORE_TEST_POSTGRES_PG_CTL")"
pm="$(head -1 "$SECURESTORE_TEST_POSTGRES_DATA/postmaster.pid")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
psql() { command psql -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }

ticks() {   # the cluster's CPU time so far, in clock ticks
  local total=0 f
  read -r -a f < <(sed 's/.*) //' "/proc/$pm/stat")
  total=$(( f[11] + f[12] + f[13] + f[14] ))   # utime stime cutime cstime
  for child in $(ps --ppid "$pm" -o pid=); do
    if read -r -a f < <(sed 's/.*) //' "/proc/$child/stat" 2>/dev/null); then total=$(( total + f[11] + f[12] )); fi
  done
  echo "$total"
}

psql <<SQL
CREATE SCHEMA s3; CREATE SCHEMA s4;
SET search_path = s3;
CREATE TABLE securestore_schema(version bigint NOT NULL);
CREATE TABLE securestore_meta(namespace text NOT NULL, k text NOT NULL, v bytea NOT NULL, PRIMARY KEY (namespace, k));
CREATE TABLE securestore_items(
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace text NOT NULL, cls bigint NOT NULL,
    ref bytea NOT NULL, ukey bytea NOT NULL, svc bytea NOT NULL, acct bytea NOT NULL,
    blob bytea NOT NULL, secret bytea,
    CONSTRAINT securestore_items_ukey UNIQUE (namespace, ukey),
    CONSTRAINT securestore_items_ref UNIQUE (namespace, ref));
CREATE INDEX securestore_items_cls ON securestore_items(namespace, cls, id);
CREATE INDEX securestore_items_svc ON securestore_items(namespace, svc, cls, id);
CREATE INDEX securestore_items_acct ON securestore_items(namespace, acct, cls, id);
SET search_path = s4;
$(sed -n '/static let schemaDDL = """/,/"""$/p' "$(dirname "$0")/../Backends/PostgreSQL/PostgresStore/PostgresBackend.swift" | sed '1d;$d')
SET search_path = public;
CREATE TABLE floor(id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, namespace text NOT NULL,
                   khash bytea NOT NULL, svc bytea NOT NULL, value bytea NOT NULL, UNIQUE (namespace, khash));
CREATE INDEX floor_svc ON floor(namespace, svc);
INSERT INTO s4.securestore_namespaces(name) SELECT 'other-' || g FROM generate_series(1, 9) g;
INSERT INTO s4.securestore_namespaces(name) VALUES ('securestore-bench');
INSERT INTO s3.securestore_meta VALUES ('securestore-bench', 'check', '\x0102');
INSERT INTO s4.securestore_meta VALUES ((SELECT id FROM s4.securestore_namespaces WHERE name = 'securestore-bench'), 'check', '\x0102');
INSERT INTO s3.securestore_items(namespace, cls, ref, ukey, svc, acct, blob, secret)
    SELECT 'securestore-bench', 1, sha256(('r' || g)::bytea), sha256(('u' || g)::bytea), sha256(('s' || g % 10)::bytea),
           sha256(('a' || g)::bytea), decode(repeat('ab', 120), 'hex'), decode(repeat('cd', 72), 'hex')
    FROM generate_series(1, $rows) g;
INSERT INTO s4.securestore_items(ns, cls, ref, ukey, svc, acct, blob, secret)
    SELECT 10, cls, ref, ukey, svc, acct, blob, secret FROM s3.securestore_items ORDER BY id;
INSERT INTO floor(namespace, khash, svc, value) SELECT namespace, ukey, svc, secret FROM s3.securestore_items ORDER BY id;
ALTER TABLE s3.securestore_items SET (autovacuum_enabled = off);
ALTER TABLE s4.securestore_items SET (autovacuum_enabled = off);
ALTER TABLE floor SET (autovacuum_enabled = off);
VACUUM ANALYZE s3.securestore_items; VACUUM ANALYZE s4.securestore_items; VACUUM ANALYZE floor;
SQL

insert_values="1::bigint, sha256(('r' || :r || '-' || random())::bytea), sha256(('u' || :r || '-' || random())::bytea), sha256('s1'::bytea), sha256(('a' || :r)::bytea), decode(repeat('ab', 120), 'hex'), decode(repeat('cd', 72), 'hex')"
cat > "$work/add-s3.sql" <<SQL
\set r random(1, 2000000000)
\startpipeline
SELECT pg_advisory_xact_lock(42);
INSERT INTO s3.securestore_items(namespace, cls, ref, ukey, svc, acct, blob, secret) SELECT 'securestore-bench'::text, $insert_values WHERE EXISTS (SELECT 1 FROM s3.securestore_meta WHERE namespace = 'securestore-bench'::text AND k = 'check' AND v = '\x0102'::bytea) ON CONFLICT DO NOTHING RETURNING id;
\endpipeline
SQL
cat > "$work/add-s4.sql" <<SQL
\set r random(1, 2000000000)
\startpipeline
SELECT pg_advisory_xact_lock(42);
INSERT INTO s4.securestore_items(ns, cls, ref, ukey, svc, acct, blob, secret) SELECT 10::bigint, $insert_values WHERE EXISTS (SELECT 1 FROM s4.securestore_meta WHERE ns = 10::bigint AND k = 'check' AND v = '\x0102'::bytea) ON CONFLICT (ns, ukey) DO NOTHING RETURNING id;
\endpipeline
SQL
cat > "$work/add-floor.sql" <<SQL
\set r random(1, 2000000000)
INSERT INTO floor(namespace, khash, svc, value) VALUES ('securestore-bench', sha256(('u' || :r || '-' || random())::bytea), sha256('s1'::bytea), decode(repeat('cd', 72), 'hex'));
SQL
cat > "$work/lookup-s3.sql" <<SQL
\set k random(1, $rows)
SELECT id, cls, ref, ukey, blob, secret FROM s3.securestore_items WHERE namespace = 'securestore-bench'::text AND ukey IN (sha256(('u' || :k)::bytea)) ORDER BY id;
SQL
cat > "$work/lookup-s4.sql" <<SQL
\set k random(1, $rows)
SELECT id, cls, ref, ukey, blob, secret FROM s4.securestore_items WHERE ns = 10::bigint AND ukey IN (sha256(('u' || :k)::bytea)) ORDER BY id;
SQL
cat > "$work/lookup-floor.sql" <<SQL
\set k random(1, $rows)
SELECT value FROM floor WHERE namespace = 'securestore-bench'::text AND khash = sha256(('u' || :k)::bytea);
SQL

# Deterministic figures first: the tables' index sizes, and the shared buffers one add and one lookup touch
# (EXPLAIN ANALYZE, BUFFERS: the plan's top line, five times, after two executions warmed the session).
psql -At -c "SELECT 'index bytes: schema 3 ' || pg_indexes_size('s3.securestore_items') || ', schema 4 ' || pg_indexes_size('s4.securestore_items') || ', floor ' || pg_indexes_size('floor') || ' (' || (SELECT count(*) FROM pg_indexes WHERE schemaname = 's3' AND tablename = 'securestore_items') || ', ' || (SELECT count(*) FROM pg_indexes WHERE schemaname = 's4' AND tablename = 'securestore_items') || ', ' || (SELECT count(*) FROM pg_indexes WHERE tablename = 'floor') || ' indexes)'"
for target in floor s3 s4; do
  for op in add lookup; do
    statement="$(grep -v -e '^\\' -e advisory "$work/$op-$target.sql" | sed "s/:r/12345/g; s/:k/777/g")"
    explain=(-c "SELECT '--'" -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) ${statement%;}")
    hits="$(psql -At -c "$statement" -c "$statement" "${explain[@]}" "${explain[@]}" "${explain[@]}" "${explain[@]}" "${explain[@]}" \
      | awk '/^--$/ { take = 1; next } take && /Buffers:/ { sub(/^ *Buffers: shared /, ""); printf "%s; ", $0; take = 0 }')"
    echo "$target $op: $hits"
  done
done

hz=$(getconf CLK_TCK)
echo "rows $rows, $tx transactions a run, $rounds rounds; server CPU µs per operation (wall µs per operation, pgbench)"
for op in lookup add; do
  for round in $(seq "$rounds"); do
    line="$op round $round:"
    for target in $targets; do
      before=$(ticks)
      latency=$("$bin/pgbench" -n -M prepared -c 1 -t "$tx" -f "$work/$op-$target.sql" "$url" 2>/dev/null | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
      sleep 0.3
      after=$(ticks)
      cpu=$(echo "scale=1; ($after - $before) * 1000000 / $hz / $tx" | bc)
      wall=$(echo "scale=1; $latency * 1000 / 1" | bc)
      line="$line  $target $cpu ($wall)"
    done
    echo "$line"
  done
done
