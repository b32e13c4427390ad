public import SecureStoreCore
import Foundation
public import SecureStoreCrypto

/// Records in a PostgreSQL database, end-to-end encrypted with the SQLite backend's record format: the
/// server stores only class numbers, keyed blind indexes and sealed blobs. Many processes on many machines
/// can share one store (one `namespace`) as long as they hold the same key. See `Backends/PostgreSQL/MAPPING.md`.
///
/// A small pool of connections (``poolSize``) serves concurrent callers of one backend: reads run in
/// parallel; every call is one transaction, and writers of a namespace take a transaction-scoped advisory
/// lock, so the core's read-check-write steps (uniqueness, update collisions, clear) are atomic across
/// connections and machines; a unique index on (namespace, ukey) backs uniqueness up in the database itself.
/// Inside the lock, each writer checks the namespace's key epoch (its key-check value), so a writer holding a
/// key that a ``rekey(to:passphraseCost:)`` replaced fails with `authFailed` and writes nothing.
///
/// Every call is bounded: connecting within `connectTimeout` per host, each statement and COMMIT within
/// `statementTimeout` (the client's deadline 0.2 s after the server's own timeout; then cancelled, and the
/// answer awaited one more second at most), a wait for
/// another writer's lock within `lockTimeout`. A COMMIT that may have happened without being confirmed (a
/// synchronous standby that did not answer in time, a connection lost during COMMIT) is `outcomeUnknown`.
/// A lost connection is re-opened on the next call.
public final class PostgresBackend: StorageBackend {
    /// The schema version this code creates and reads (`securestore_schema.version`). Versions 1 to 4 are
    /// upgraded to 5 on first use, in one transaction under the schema lock: the `secret` column is added
    /// (versions 1 and 2), the namespace text of every row is replaced by its numeric id in
    /// `securestore_namespaces` (versions 1 to 3), and the `mdat` column is added (version 5). Rows written
    /// before keep their record format and are read as they are; each is written in format 4 when it is next
    /// replaced, or by a rekey (see MAPPING.md).
    public static let schemaVersion: Int64 = 5
    /// The default number of connections one backend keeps.
    public static let defaultPoolSize = 4

    /// The namespace this store's items live in (several stores may share one database).
    public let namespace: String
    /// The namespace's numeric id (`securestore_namespaces.id`): the `ns` column of its rows.
    let namespaceID: Int64
    /// How many connections this backend opens at most (concurrent callers beyond it wait for one).
    public let poolSize: Int
    private let target: PostgresConnection.Target
    private let passwordEnv: String?
    private let options: PostgresConnection.Options
    private let lockKey: Int64
    /// `SELECT pg_advisory_xact_lock(lockKey)`, built once.
    private let lockStatement: String
    /// The statements of the shared sealed-table layer, scoped to this namespace.
    let layout: SealedTableLayout
    private let keys: Locked<Keys>
    private let pool: Pool
    private let hostMemory: HostMemory?

    /// The sealer of the key this backend holds, and the key-check value it saw or wrote (its key epoch).
    struct Keys {
        var sealer: RecordSealer
        var check: [UInt8]
        /// The key a rekey through this object is committing (so its own writers that see the new key check
        /// after the commit, before `sealer` is replaced, use it).
        var pending: (sealer: RecordSealer, check: [UInt8])? = nil
    }

    /// Opens the store in `namespace` at `url` with `key`, creating the schema and the namespace on first use.
    ///
    /// - Parameters:
    ///   - url: a libpq connection URL or `key=value` string **without a password**; several hosts with
    ///     `target_session_attrs=read-write` give failover to whichever is the primary.
    ///   - passwordEnv: the environment variable holding the role's password (read at every connect). Without
    ///     it libpq's own sources apply (`PGPASSWORD`, `~/.pgpass`, peer or certificate auth).
    ///   - connectTimeout: the deadline of a connection attempt to one host (default 5 s).
    ///   - statementTimeout: the deadline of each statement and COMMIT (default 10 s).
    ///   - lockTimeout: how long a writer waits for another writer of the namespace (default 5 s).
    ///   - poolSize: connections kept for concurrent callers (default 4, at least 1).
    ///   - rememberHost: keep the host that last accepted a write in `$XDG_RUNTIME_DIR` (per URL) and try it
    ///     first, so a process per call does not wait out a dead first host every time (default true).
    ///   - creatingStore: whether a missing schema or namespace is created (default true); false fails with
    ///     `itemNotFound` instead, having written nothing (a command that only reads).
    /// - Throws: `notAvailable` naming the host and the reason when no server answers within
    ///   `connectTimeout`; `authFailed` when `key` does not open an existing namespace; `param` for a URL with
    ///   a password in it or an empty namespace; `readOnly` when the schema must be created on a standby.
    public init(url: String, key: StoreKey, namespace: String = "securestore", passwordEnv: String? = nil,
                connectTimeout: Duration = .seconds(5), statementTimeout: Duration = .seconds(10),
                lockTimeout: Duration = .seconds(5), poolSize: Int = PostgresBackend.defaultPoolSize,
                rememberHost: Bool = true, passphraseCost: PassphraseCost = .interactive,
                creatingStore: Bool = true) throws(SecureStoreError) {
        guard !namespace.isEmpty, namespace.utf8.count <= 200 else {
            throw .param("namespace", "A PostgreSQL namespace must be 1 to 200 bytes long.")
        }
        guard (1...64).contains(poolSize) else {
            throw .param("poolSize", "The PostgreSQL pool size must be 1 to 64 connections.")
        }
        func milliseconds(_ d: Duration, _ name: String) throws(SecureStoreError) -> Int {
            let ms = d.wholeMilliseconds
            guard (1...3_600_000).contains(ms) else {
                throw .param(name, "The PostgreSQL \(name) must be between 1 ms and 1 hour.")
            }
            return ms
        }
        let target = try PostgresConnection.parse(url)
        guard !target.hasPassword else {
            throw .param("url",
                "The PostgreSQL URL contains a password; remove it and name an environment variable that holds it with passwordEnv.")
        }
        self.target = target
        self.namespace = namespace
        self.passwordEnv = passwordEnv
        self.poolSize = poolSize
        self.lockKey = Self.advisoryLockKey(namespace: namespace)
        lockStatement = "SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey(namespace: namespace)))"
        var options = PostgresConnection.Options()
        options.connectTimeoutMilliseconds = try milliseconds(connectTimeout, "connectTimeout")
        options.statementTimeoutMilliseconds = try milliseconds(statementTimeout, "statementTimeout")
        options.lockTimeoutMilliseconds = try milliseconds(lockTimeout, "lockTimeout")
        self.options = options
        let memory = rememberHost && target.endpoints.count > 1 ? HostMemory(url: url) : nil
        let pool = Pool(size: poolSize, preferred: memory?.recall(target.endpoints.count))
        hostMemory = memory
        self.pool = pool
        let lockKey = self.lockKey

        let connection = try pool.checkout { (preferred: Int?) throws(SecureStoreError) in
            try Self.connect(target: target, passwordEnv: passwordEnv, options: options, preferred: preferred,
                             pool: pool, memory: memory)
        }
        connection.wasUsed = true
        do throws(SecureStoreError) {
            try Self.ensureSchema(connection, creating: creatingStore)
            let (id, sealer, check) = try Self.openNamespace(connection, namespace: namespace, lockKey: lockKey,
                                                             key: key, cost: passphraseCost, creating: creatingStore)
            namespaceID = id
            layout = Self.layout(namespaceID: id)
            keys = Locked(Keys(sealer: sealer, check: check))
        } catch {
            pool.checkin(connection.isOpen && !connection.inTransaction ? connection : nil)
            throw error
        }
        pool.checkin(connection)
    }

    public var backendDescription: String {
        "postgres \(target.description), namespace \(namespace)"
    }

    /// A call waits for the server: a connect tries each host of the URL for up to the connect timeout, a
    /// writer waits for another writer of its namespace up to the lock timeout, and each statement and COMMIT
    /// is cut at the statement timeout (plus the client's margin and the cancel's grace period). The longest
    /// single wait is the largest of these.
    public var blocking: Blocking {
        let connect = Duration.milliseconds(options.connectTimeoutMilliseconds)
        let statement = Duration.milliseconds(options.statementTimeoutMilliseconds
            + PostgresConnection.serverFirstMilliseconds + PostgresConnection.cancelGraceMilliseconds)
        let lock = Duration.milliseconds(options.lockTimeoutMilliseconds)
        return .upTo(max(connect, statement, lock), waitingFor: "the PostgreSQL server: a connect (up to \(connect) per "
                     + "host of the URL), another writer's namespace lock (up to \(lock)), then each statement and "
                     + "COMMIT of the transaction (up to \(statement) each)")
    }

    /// As many transactions as the pool has connections (``poolSize``): the async API runs that many calls
    /// at once. Readers never wait for writers; writers of the namespace wait for each other at the server
    /// (its advisory lock), each holding its own connection and thread meanwhile.
    public var concurrency: Int { poolSize }

    /// Server transactions with a per-namespace writer lock; shared by every machine that reaches the server.
    public static let guarantees = StorageGuarantees(atomicWrites: true, acrossProcesses: .full, acrossMachines: .full,
                                                     durableOnReturn: true, insertionOrder: .storageSequence)

    /// Round trips made by this object's connections, counted when every call has given its connection back
    /// (tests count a call's round trips with it).
    package var roundTripsForTesting: Int { pool.idleRoundTrips }

    /// The stored-row reader on a statement of a test's own (rows of other shapes than the layout's): in
    /// place in libpq's result, as a lookup reads them, or (`inPlace` false) through row values, as a
    /// statement sent in a pipeline is read.
    package func forEachRecordRowForTesting(_ sql: String, inPlace: Bool,
                                            _ body: (RowColumns) throws(SecureStoreError) -> Void) throws(SecureStoreError) {
        try run(writing: false) { (executor, _) throws(SecureStoreError) in
            if inPlace { return try executor.forEachRecordRow(sql, [], body) }
            for row in try executor.rows(sql, []) { try RowColumns.with(row, body) }
        }
    }

    // MARK: Transactions

    public func withTransaction<T>(writing: Bool, _ body: (inout Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        try run(writing: writing) { (executor, keys) throws(SecureStoreError) -> T in
            var txn = SealedTransaction(SealedTable(layout: layout, executor: executor, sealer: keys.sealer,
                                                    epoch: keys.check, epochChecked: writing,
                                                    writingOnlyChangedParts: writing))
            return try body(&txn)
        }
    }

    /// Re-encrypts every item of the namespace under `newKey` in one transaction, under the namespace's
    /// lock, and replaces the key check (the key epoch): every other store object or process still holding the
    /// old key then fails its next write with `authFailed` (and its reads with `decode`) instead of writing a
    /// row the new key cannot read. This store object uses the new key from then on.
    ///
    /// - Throws: `authFailed` when this object's key was itself replaced by another rekey; `outcomeUnknown`
    ///   when the commit was not confirmed (this object then checks which key the namespace has).
    public func rekey(to newKey: StoreKey, passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        let newSealer = try RecordSealer.make(newKey, storedKDF: nil, cost: passphraseCost)
        let newCheck = newSealer.makeCheck()
        do throws(SecureStoreError) {
            try run(writing: true) { (executor, keys) throws(SecureStoreError) in
                try SealedTable(layout: layout, executor: executor, sealer: keys.sealer,
                                epoch: keys.check, epochChecked: true).rekey(to: newSealer, check: newCheck)
                self.keys.withLock { $0.pending = (newSealer, newCheck) }
            }
        } catch {
            keys.withLock { $0.pending = nil }
            if error.code == .outcomeUnknown,
               let stored = try? run(writing: false, { (executor, _) throws(SecureStoreError) in
                   try layout.storedCheck(executor)
               }),
               stored == newCheck {
                keys.withLock { $0 = Keys(sealer: newSealer, check: newCheck) }
            }
            throw error
        }
        keys.withLock { $0 = Keys(sealer: newSealer, check: newCheck) }
    }

    /// Runs `body` on a pooled connection, first in one round trip (``PostgresExecutor/Speculation``), and in
    /// one transaction when that does not fit: a writer then first takes the namespace's lock and checks the
    /// key epoch.
    ///
    /// One round trip: a reader's single statement runs on its own (one statement sees one snapshot, as the
    /// transaction would); a writer's add (a find by one unique key that finds nothing, then the insert of a
    /// record with that key) is sent as an empty statement, the namespace's lock and an insert that happens
    /// only if the stored key epoch is still this object's and no row has the key (`ON CONFLICT (ns, ukey) DO NOTHING`),
    /// one implicit transaction the server commits at the pipeline's sync (no BEGIN, no COMMIT). When
    /// the insert did not happen (a row with the key exists, or the namespace was re-keyed), nothing was
    /// written, and `body` runs again in a transaction, which reads the row or the epoch and gives the
    /// core's own answer. Anything else a body does runs in a transaction from the start (a speculative body
    /// stops at its first statement that does not fit, before anything is sent).
    private func run<T>(writing: Bool, _ body: (PostgresExecutor, Keys) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        var attempt = 0
        var speculate = true
        /// A writer's opening in a round trip of its own (after the epoch changed under a call that sent it
        /// with its first statement).
        var openingApart = false
        while true {
            attempt += 1
            // A connection that broke since the last call (server restarted, failover) is replaced at once;
            // one whose break shows only now, at BEGIN, is replaced once: nothing has happened yet.
            let connection = try pool.checkout(probe: writing) { (preferred: Int?) throws(SecureStoreError) in
                try Self.connect(target: target, passwordEnv: passwordEnv, options: options, preferred: preferred,
                                 pool: pool, memory: hostMemory)
            }
            let reused = connection.wasUsed
            connection.wasUsed = true
            var keep = true
            defer { pool.checkin(keep && connection.isOpen && !connection.inTransaction ? connection : nil) }
            var current = keys.withLock { $0 }
            if speculate {
                let executor = PostgresExecutor(connection: connection, speculation: .init(
                    layout: layout, writing: writing, lock: lockStatement,
                    epoch: current.check))
                do throws(SecureStoreError) {
                    let result = try body(executor, current)
                    try executor.commit()
                    return result
                } catch {
                    if executor.needsTransaction {
                        // Nothing was written: run the body again in a transaction.
                        speculate = false
                        attempt -= 1
                        continue
                    }
                    let failedStep = connection.lastFailedStep
                    let lockWait = writing && failedStep == 1 && ["55P03", "57014"].contains(connection.lastSQLState ?? "")
                    if error.code != .outcomeUnknown { rollback(connection, &keep) } else { keep = false }
                    // The first round trip found the reused connection broken before anything ran (a reader's
                    // statement, a writer's empty first statement): run it again once on a new one.
                    if error.code == .notAvailable, reused, attempt == 1, executor.failedOnFirstTrip,
                       !writing || failedStep == 0 { continue }
                    if lockWait { throw lockHeld(keep ? connection : nil) }
                    throw error
                }
            }
            // A writer begins, takes its namespace's lock and reads the key epoch (in READ COMMITTED each
            // statement sees what was committed before it started: after the lock), in front of its first
            // statement: a delete is two round trips (that one, then its DELETE with COMMIT). After the epoch
            // changed under such a call, those three in a round trip of their own, as here.
            var stored: [UInt8]? = nil
            let together = writing && !openingApart
            let opening = PostgresExecutor.Opening(lock: lockStatement, selectCheck: layout.selectCheck,
                                                   namespaceID: namespaceID, epoch: current.check)
            let executor = together
                ? PostgresExecutor(connection: connection, opening: opening)
                : PostgresExecutor(connection: connection, holding: writing ? [] : ["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"])
            do throws(SecureStoreError) {
                if writing, !together {
                    // Three prepared statements in one pipeline (one round trip).
                    let answers = try connection.pipeline(opening.steps, commit: false)
                    if case .blob(let v)? = answers.last?.rows.first?.first { stored = v }
                }
                // A reader's BEGIN travels with its first statement (the executor holds it).
            } catch {
                // Only the lock can keep the writer's first round trip waiting: a lock or statement timeout there
                // (or the client's cancel at its deadline) is a wait for another writer.
                let lockWait = writing && ["55P03", "57014"].contains(connection.lastSQLState ?? "")
                rollback(connection, &keep)
                if error.code == .notAvailable, reused, attempt == 1 { continue }
                if lockWait { throw lockHeld(keep ? connection : nil) }
                throw error
            }
            do throws(SecureStoreError) {
                if writing, !together, let stored, stored != current.check {
                    // A rekey through this same store object committed while this call waited for the lock.
                    let latest = keys.withLock { $0 }
                    if latest.check == stored {
                        current = latest
                    } else if let pending = latest.pending, pending.check == stored {
                        current = Keys(sealer: pending.sealer, check: pending.check)
                    }
                }
                if writing, !together { try RecordSealer.requireSameEpoch(stored: stored, opened: current.check) }
                let result = try body(executor, current)
                try executor.commit()   // with the writes it held, in one round trip
                return result
            } catch {
                if error.code != .outcomeUnknown { rollback(connection, &keep) } else { keep = false }
                if together, executor.epochChanged != nil {
                    // Rolled back before anything was committed or decoded: again, with the opening apart,
                    // which takes a rekey of this object into account or answers authFailed.
                    openingApart = true
                    attempt -= 1
                    continue
                }
                if together, executor.failedOnFirstTrip {
                    // As for an opening of its own: a reused connection found broken is replaced once (nothing
                    // was committed), and a wait at the lock is a wait for another writer.
                    let lockWait = connection.lastFailedStep == PostgresExecutor.Opening.lockStep
                        && ["55P03", "57014"].contains(connection.lastSQLState ?? "")
                    if error.code == .notAvailable, reused, attempt == 1 { continue }
                    if lockWait { throw lockHeld(keep ? connection : nil) }
                }
                // A reader whose first round trip (its BEGIN and first statement) found the reused connection
                // broken is run again once on a new one: a read-only transaction changed nothing.
                if !writing, executor.failedOnFirstTrip, error.code == .notAvailable, reused, attempt == 1 { continue }
                throw error
            }
        }
    }

    private func rollback(_ connection: PostgresConnection, _ keep: inout Bool) {
        guard connection.isOpen, connection.inTransaction else {
            if !connection.isOpen { keep = false }
            return
        }
        do throws(SecureStoreError) { try connection.execute("ROLLBACK") } catch { keep = false }
    }

    /// The error for a writer that waited out `lockTimeout` for its namespace's lock, naming the session that
    /// holds it and for how long its transaction has run, when the server tells.
    private func lockHeld(_ connection: PostgresConnection?) -> SecureStoreError {
        var holder = ""
        let rows = try? connection?.query("""
            SELECT a.pid, (extract(epoch FROM clock_timestamp() - a.xact_start) * 1000)::bigint, a.application_name
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.classid::bigint = $1 AND l.objid::bigint = $2
            LIMIT 1
            """, [.integer((lockKey >> 32) & 0xFFFF_FFFF), .integer(lockKey & 0xFFFF_FFFF)]).rows
        if let row = rows?.first, row.count == 3, case .integer(let pid) = row[0] {
            var parts = ["PostgreSQL backend pid \(pid)"]
            if case .text(let app) = row[2], !app.isEmpty { parts.append("application \(app)") }
            if case .integer(let ms) = row[1] {
                parts.append("its transaction open for \(String(format: "%.1f", Double(ms) / 1000)) s")
            }
            holder = " (" + parts.joined(separator: ", ") + ")"
        }
        return SecureStoreError(.io,
            "Another writer of namespace \(namespace) holds its lock\(holder); this call waited \(min(options.lockTimeoutMilliseconds, options.statementTimeoutMilliseconds)) ms for it (lockTimeout) and changed nothing. Try again.")
    }

    // MARK: Opening

    /// A new connection, the host that accepted it tried first; a host that accepts writes is remembered
    /// (in the pool, and in `memory` when it changed).
    private static func connect(target: PostgresConnection.Target, passwordEnv: String?,
                                options: PostgresConnection.Options, preferred: Int?, pool: Pool, memory: HostMemory?)
        throws(SecureStoreError) -> PostgresConnection
    {
        var password: String? = nil
        if let passwordEnv {
            guard let bytes = try SecretText.environment(passwordEnv, in: ProcessInfo.processInfo.environment),
                  let value = String(validating: bytes, as: UTF8.self) else {
                throw SecureStoreError(.notAvailable,
                    "passwordEnv names \(passwordEnv), but that environment variable is not set; export it.")
            }
            password = value
        }
        let connection = try PostgresConnection.connect(target: target, password: password, options: options,
                                                        preferred: preferred)
        if connection.acceptsWrites, pool.noteWriter(connection.hostIndex) {
            memory?.remember(connection.hostIndex, of: target.endpoints.count)
        }
        return connection
    }

    /// The advisory lock key writers of `namespace` hold for the length of each write transaction
    /// (`pg_advisory_xact_lock(key)`): the first 8 bytes of FNV-1a-64 of `"securestore namespace " + namespace`,
    /// as a signed big-endian integer. A maintenance job that holds it keeps every SecureStore writer of that
    /// namespace out; readers are never blocked.
    public static func advisoryLockKey(namespace: String) -> Int64 {
        Int64(bitPattern: FNV1a.hash(("securestore namespace " + namespace).utf8))
    }

    /// The lock held while the schema is created.
    static let schemaLockKey = advisoryLockKey(namespace: "") ^ 0x5c4e_3a11

    /// Creates the tables on first use, and upgrades an older schema (versions 1 to 4) to this one, in one
    /// transaction under an advisory lock (so racing first users create or upgrade it once). Touches nothing
    /// when the current schema is already there.
    static func ensureSchema(_ db: PostgresConnection, creating: Bool = true) throws(SecureStoreError) {
        func version() throws(SecureStoreError) -> Int64? {
            let present = try db.query("SELECT to_regclass('securestore_schema') IS NOT NULL")
            guard case .integer(1)? = present.rows.first?.first else { return nil }
            let rows = try db.query("SELECT max(version) FROM securestore_schema")
            if case .integer(let v)? = rows.rows.first?.first { return v }
            return nil
        }
        var found = try version()
        if found == nil, !creating {
            throw SecureStoreError(.itemNotFound, "There is no SecureStore schema at \(db.endpoint) yet: nothing has been stored there.")
        }
        if found == nil || found.map({ $0 < schemaVersion }) == true {
            try db.execute("BEGIN")
            do throws(SecureStoreError) {
                try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(schemaLockKey)])
                let current = try version()
                if let current, current < schemaVersion {
                    try SealedTableLayout.checkSchemaVersion(current, supported: schemaVersion, place: "database")
                    try db.execute((current < 4 ? upgradeTo4DDL : "") + upgradeTo5DDL)
                    try db.query("INSERT INTO securestore_schema(version) VALUES ($1)", [.integer(schemaVersion)])
                } else if current == nil {
                    try db.execute(schemaDDL)
                    try db.query("INSERT INTO securestore_schema(version) VALUES ($1)", [.integer(schemaVersion)])
                }
                try db.commit()
            } catch {
                if db.isOpen, db.inTransaction { _ = try? db.execute("ROLLBACK") }
                throw error
            }
            found = try version()
        }
        guard let found else {
            throw SecureStoreError(.decode, "The securestore_schema table at \(db.endpoint) is empty: the schema was altered.")
        }
        try SealedTableLayout.checkSchemaVersion(found, supported: schemaVersion, place: "database")
        guard found == schemaVersion else {
            throw SecureStoreError(.decode, "The database has an unknown schema version \(found).")
        }
    }

    /// The tables and indexes of schema 5 (MAPPING.md). Every index is one a statement's plan uses (tested
    /// with `EXPLAIN`): the primary key `(ns, id)` serves the finds by namespace and by class (in id order) and
    /// the rekey's update by id, the two unique indexes the finds and writes by unique key and by reference,
    /// and the service and account indexes the finds by class and service or account.
    static let schemaDDL = """
        CREATE TABLE IF NOT EXISTS securestore_schema(version bigint NOT NULL);
        CREATE TABLE IF NOT EXISTS securestore_namespaces(
            id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL,
            CONSTRAINT securestore_namespaces_name UNIQUE (name));
        CREATE TABLE IF NOT EXISTS securestore_meta(
            ns integer NOT NULL, k text NOT NULL, v bytea NOT NULL, PRIMARY KEY (ns, k));
        CREATE TABLE IF NOT EXISTS securestore_items(
            id bigint GENERATED ALWAYS AS IDENTITY,
            ns integer NOT NULL, cls bigint NOT NULL,
            ref bytea NOT NULL, ukey bytea NOT NULL, svc bytea NOT NULL, acct bytea NOT NULL,
            blob bytea NOT NULL, secret bytea, mdat bytea,
            CONSTRAINT securestore_items_pkey PRIMARY KEY (ns, id),
            CONSTRAINT securestore_items_ukey UNIQUE (ns, ukey),
            CONSTRAINT securestore_items_ref UNIQUE (ns, ref));
        CREATE INDEX IF NOT EXISTS securestore_items_svc ON securestore_items(ns, svc, cls, id);
        CREATE INDEX IF NOT EXISTS securestore_items_acct ON securestore_items(ns, acct, cls, id);
        """

    /// The statements that turn a schema of version 1, 2 or 3 into version 4, in the caller's transaction: the
    /// `secret` column (versions 1 and 2), then every namespace name gets its numeric id and every row that id
    /// instead of the name; row ids (so insertion order) and the id sequence stay.
    static let upgradeTo4DDL = """
        ALTER TABLE securestore_items ADD COLUMN IF NOT EXISTS secret bytea;
        CREATE TABLE securestore_namespaces(
            id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL,
            CONSTRAINT securestore_namespaces_name UNIQUE (name));
        INSERT INTO securestore_namespaces(name)
            SELECT namespace FROM securestore_meta UNION SELECT namespace FROM securestore_items ORDER BY 1;
        ALTER TABLE securestore_meta ADD COLUMN ns integer;
        UPDATE securestore_meta m SET ns = n.id FROM securestore_namespaces n WHERE n.name = m.namespace;
        ALTER TABLE securestore_meta DROP COLUMN namespace, ALTER COLUMN ns SET NOT NULL,
            ADD CONSTRAINT securestore_meta_pkey PRIMARY KEY (ns, k);
        ALTER TABLE securestore_items ADD COLUMN ns integer;
        UPDATE securestore_items i SET ns = n.id FROM securestore_namespaces n WHERE n.name = i.namespace;
        ALTER TABLE securestore_items DROP CONSTRAINT securestore_items_pkey, DROP COLUMN namespace,
            ALTER COLUMN ns SET NOT NULL,
            ADD CONSTRAINT securestore_items_pkey PRIMARY KEY (ns, id),
            ADD CONSTRAINT securestore_items_ukey UNIQUE (ns, ukey),
            ADD CONSTRAINT securestore_items_ref UNIQUE (ns, ref);
        CREATE INDEX securestore_items_svc ON securestore_items(ns, svc, cls, id);
        CREATE INDEX securestore_items_acct ON securestore_items(ns, acct, cls, id);
        """

    /// Schema 4 to 5, in the caller's transaction: the `mdat` column of format 4 rows (rows stay as they are).
    static let upgradeTo5DDL = """
        ALTER TABLE securestore_items ADD COLUMN IF NOT EXISTS mdat bytea;
        """

    /// The sealed-table statements of the rows of the namespace with id `namespaceID`.
    static func layout(namespaceID: Int64) -> SealedTableLayout {
        SealedTableLayout(items: "securestore_items", meta: "securestore_meta", scope: ("ns", .integer(namespaceID)),
                          numbered: true)
    }

    /// The numeric id of `namespace`, the sealer for `key` in it, and its key check: checked against the
    /// stored key check (an existing namespace never gets a new key file), or on first use with the
    /// namespace's id, a new key check and passphrase parameters stored under the namespace's advisory lock.
    static func openNamespace(_ db: PostgresConnection, namespace: String, lockKey: Int64, key: StoreKey,
                              cost: PassphraseCost, creating: Bool = true)
        throws(SecureStoreError) -> (id: Int64, sealer: RecordSealer, check: [UInt8])
    {
        let selectID = "SELECT id FROM securestore_namespaces WHERE name = $1"
        func knownID() throws(SecureStoreError) -> Int64? {
            if case .integer(let id)? = try db.query(selectID, [.text(namespace)]).rows.first?.first { return id }
            return nil
        }
        if let id = try knownID() {
            let executor = PostgresExecutor(connection: db)
            if let opened = try layout(namespaceID: id).openKeyCheck(executor, key: key, cost: cost) {
                return (id, opened.sealer, opened.epoch)
            }
        }
        guard creating else {
            throw SecureStoreError(.itemNotFound, "The namespace has no store at \(db.endpoint) yet: nothing has been stored in it.")
        }
        try db.execute("BEGIN")
        do throws(SecureStoreError) {
            try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(lockKey)])
            try db.query("INSERT INTO securestore_namespaces(name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                         [.text(namespace)])
            guard let id = try knownID() else {
                throw SecureStoreError(.internalError, "The namespace's id could not be stored at \(db.endpoint).")
            }
            let scoped = layout(namespaceID: id)
            let executor = PostgresExecutor(connection: db)
            if let opened = try scoped.openKeyCheck(executor, key: key, cost: cost) {
                try db.commit()
                return (id, opened.sealer, opened.epoch)
            }
            let created = try scoped.createKeyCheck(executor, key: key, cost: cost, what: "The namespace")
            try executor.commit()   // with the key check's writes, which the executor held
            return (id, created.sealer, created.epoch)
        } catch {
            if db.isOpen, db.inTransaction { _ = try? db.execute("ROLLBACK") }
            throw error
        }
    }

    // MARK: Transaction

    /// The backend's view of the namespace's rows inside one PostgreSQL transaction: the shared sealed-table
    /// layer over this connection.
    public typealias Transaction = SealedTransaction
}

/// Runs the sealed-table layer's statements on one connection. Writes nothing waits for are held and
/// pipelined (libpq pipeline mode) in front of the next statement, or with COMMIT (``commit()``).
///
/// With a ``Speculation`` it runs a call in one round trip, without a transaction of its own, where that
/// gives the same answer: a reader's one statement (one statement sees one snapshot), and a writer's add —
/// its find by one unique key is answered "nothing" without asking, and its insert of a record with that
/// key is sent as an empty statement, the namespace's lock and an insert guarded by the key epoch and the
/// unique index, in one pipeline whose statements the server runs as one implicit transaction, committed at the pipeline's
/// sync (no `BEGIN` and `COMMIT` to parse and run). The guard makes the find's answer true or the insert not
/// happen: the lock is taken by the first statement and held to the commit, and the insert's snapshot is
/// taken after it (READ COMMITTED: a snapshot per statement), so, as in a transaction, no other writer of
/// the namespace runs between the "find" and
/// the insert; `ON CONFLICT (ns, ukey) DO NOTHING` inserts nothing when a row with the key exists, which is exactly
/// when the find would have found one. Anything else (a second statement, an update, a delete, an insert
/// that did not happen) sets ``needsTransaction`` and throws, and the backend runs the call again in a
/// transaction; nothing was written.
struct PostgresExecutor: SealedTableExecutor {
    let connection: PostgresConnection
    private let held: Held
    private let speculation: Speculation?

    /// What a call run in one round trip may do (see the type's comment).
    struct Speculation {
        let layout: SealedTableLayout
        let writing: Bool
        /// The statement that takes the namespace's lock.
        let lock: String
        /// The key epoch the records are sealed for (the guarded insert requires it).
        let epoch: [UInt8]
    }

    /// Where a speculative call is.
    private enum Stage {
        case start
        /// A reader's statement was sent.
        case read
        /// A writer's find by this unique-key index was answered "nothing".
        case found([UInt8])
        /// A writer's insert of a record with that key is held (its parameters).
        case inserting([PGValue])
        case committed
        /// It needs a transaction: nothing was written.
        case needsTransaction
    }

    /// A writer's transaction opening (BEGIN, the namespace's lock, the key-epoch read), sent in front of the
    /// call's first statement instead of in a round trip of its own: the epoch read's answer is checked
    /// before any row of that trip reaches the caller, and before any COMMIT is sent (a call whose first
    /// statement is its commit sends the opening alone first). A different epoch ends the call with
    /// ``epochChanged`` set: nothing was committed, and the backend runs it again with the opening apart.
    struct Opening {
        let lock: String
        let selectCheck: String
        let namespaceID: Int64
        /// The key epoch this call's records are sealed for.
        let epoch: [UInt8]

        var steps: [PostgresConnection.Step] {
            [PostgresConnection.Step(sql: "BEGIN", params: []),
             PostgresConnection.Step(sql: lock, params: []),
             PostgresConnection.Step(sql: selectCheck, params: [.integer(namespaceID)])]
        }
        /// The lock's step in ``steps`` (a wait there is a wait for another writer).
        static let lockStep = 1
        /// The epoch read's step in ``steps``.
        static let checkStep = 2
    }

    /// The statements not sent yet, and whether the first round trip failed.
    private final class Held {
        var steps: [PostgresConnection.Step] = []
        var trips = 0
        var failedOnFirstTrip = false
        var stage = Stage.start
        /// The opening, until it is sent.
        var opening: Opening?
        /// The key epoch the opening read, when it differs from the call's (nil: it did not, or was not read).
        var epochChanged: [UInt8]??
    }

    /// - Parameter holding: statements without parameters to send in front of the first one (a BEGIN).
    init(connection: PostgresConnection, holding: [String] = []) {
        self.connection = connection
        held = Held()
        held.steps = holding.map { PostgresConnection.Step(sql: $0, params: []) }
        speculation = nil
    }

    /// A writer's executor whose transaction opening travels with its first statement (``Opening``).
    init(connection: PostgresConnection, opening: Opening) {
        self.connection = connection
        held = Held()
        held.opening = opening
        speculation = nil
    }

    /// The key epoch the opening found, when it was not the call's own (`.some(nil)`: no key check row).
    var epochChanged: [UInt8]?? { held.epochChanged }

    /// An executor that runs the call in one round trip, or asks for a transaction.
    init(connection: PostgresConnection, speculation: Speculation) {
        self.connection = connection
        held = Held()
        self.speculation = speculation
    }

    /// Whether the first round trip of this executor failed (nothing before it reached the server).
    var failedOnFirstTrip: Bool { held.failedOnFirstTrip }

    /// Whether a speculative call turned out to need a transaction (nothing was written). Also true for a
    /// writer's call that ended, by an error, before it sent anything: the error may rest on the "nothing
    /// found" that was not asked.
    var needsTransaction: Bool {
        guard let speculation else { return false }
        if case .needsTransaction = held.stage { return true }
        return speculation.writing && held.trips == 0
    }

    /// Marks the call as needing a transaction; the error unwinds the body (the backend runs it again).
    private func transactionNeeded() -> SecureStoreError {
        held.stage = .needsTransaction
        return SecureStoreError(.internalError, "This PostgreSQL call needs a transaction; it is run again in one.")
    }

    /// The guarded insert of a writer's add: the layout's insert, done only when the namespace's key check is
    /// still `$10` and no row has its unique key. Its `RETURNING` row says it happened. The unique-key index is
    /// its only arbiter (`ON CONFLICT (ns, ukey)`), so the server probes only that index before inserting,
    /// not the primary key and the reference index too: a row with the same reference (a copy imported
    /// again) fails with 23505, `duplicateItem`, the answer the transaction's plain insert gives it.
    static let guardedInsert = "INSERT INTO securestore_items(ns, cls, ref, ukey, svc, acct, blob, secret, mdat) "
        + "SELECT $1::bigint, $2::bigint, $3::bytea, $4::bytea, $5::bytea, $6::bytea, $7::bytea, $8::bytea, $9::bytea "
        + "WHERE EXISTS (SELECT 1 FROM securestore_meta WHERE ns = $1::bigint AND k = 'check' AND v = $10::bytea) "
        + "ON CONFLICT (ns, ukey) DO NOTHING RETURNING id"

    func rows(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) -> [[TableValue]] {
        guard try speculate(sql, parameters) else { return [] }
        return try send(sql, parameters).rows
    }

    /// A statement sent on its own (every reader's, and a writer's once its transaction is open) leaves its
    /// rows in libpq's result and lends them from there; one that travels with others in a pipeline is read
    /// through ``rows(_:_:)``.
    func forEachRecordRow(_ sql: String, _ parameters: [TableValue],
                          _ body: (RowColumns) throws(SecureStoreError) -> Void) throws(SecureStoreError) {
        guard try speculate(sql, parameters) else { return }
        guard held.opening == nil, held.steps.isEmpty else {
            for row in try send(sql, parameters).rows { try RowColumns.with(row, body) }
            return
        }
        let params = parameters.map(Self.parameter)
        let found = try trip { () throws(SecureStoreError) in try connection.recordRows(sql, params) }
        try found.forEach(body)   // after the trip: a row that does not decode is not a failed round trip
    }

    /// Whether a speculative call sends `sql` (false: a writer's find by one unique key, answered "nothing"
    /// without asking); throws when the call needs a transaction.
    private func speculate(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) -> Bool {
        if let speculation {
            switch held.stage {
            case .start where !speculation.writing:
                held.stage = .read
            case .read where sql == speculation.layout.selectCheck:
                break   // the key epoch after an empty find: a later snapshot can only be more recent
            case .start where speculation.writing && parameters.count == 2 && sql == speculation.layout.selectByKeys(1):
                guard case .blob(let key) = parameters[1] else { throw transactionNeeded() }
                held.stage = .found(key)
                return false
            default:
                throw transactionNeeded()
            }
        }
        return true
    }

    func run(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) -> Int {
        if speculation != nil { throw transactionNeeded() }
        return try send(sql, parameters).affected
    }

    func write(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) {
        if let speculation {
            guard case .found(let key) = held.stage, speculation.writing, sql == speculation.layout.insert,
                  parameters.count == 9, parameters[3] == .blob(key) else { throw transactionNeeded() }
            held.stage = .inserting(parameters.map(Self.parameter))
            return
        }
        held.steps.append(PostgresConnection.Step(sql: sql, params: parameters.map(Self.parameter)))
        try sendWhenFull()
    }

    /// At most this many writes are held (a rekey's or an import's thousands of rows go in pipelines of this
    /// many, one round trip each, rather than one round trip per row or all of them in memory until COMMIT).
    static let maximumHeld = 256

    /// Sends the held writes (with the opening, when it was not sent yet) once there are ``maximumHeld``.
    private func sendWhenFull() throws(SecureStoreError) {
        guard held.steps.count >= Self.maximumHeld else { return }
        _ = try sendHeld(then: nil)
    }

    /// A replace is held like ``write(_:_:)`` (sent with the next statement or with COMMIT, so an update is
    /// two round trips: its find with the transaction's opening, then its writes with COMMIT), in a form that
    /// fails by itself when it changes no row: `WITH changed AS (… RETURNING 1) SELECT 1 / count(*) FROM
    /// changed` divides by zero (SQLSTATE 22012, which no other statement of this backend can raise), the
    /// server skips the rest of the pipeline, COMMIT included, and the transaction is rolled back.
    func writeOne(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) {
        if speculation != nil { throw transactionNeeded() }
        held.steps.append(PostgresConnection.Step(sql: "WITH changed AS (" + sql + " RETURNING 1) SELECT 1 / count(*) FROM changed",
                                                  params: parameters.map(Self.parameter)))
        try sendWhenFull()
    }

    /// The SQLSTATE of ``writeOne(_:_:)``'s statement when its row was not there (division by zero).
    private static let replacedRowMissing = "22012"

    /// Commits, with the held writes in the same round trip. A speculative writer sends its whole call here.
    func commit() throws(SecureStoreError) {
        if let speculation {
            switch held.stage {
            case .start where !speculation.writing, .read:
                return   // one statement, committed on its own
            case .inserting(let parameters):
                // One implicit transaction, committed by the server at the pipeline's sync. The empty first
                // statement (which the server answers without running anything) tells a connection that
                // was already broken — the session's end reported for it — from a session ended while the
                // lock waited for another writer.
                let steps = [PostgresConnection.Step(sql: "", params: []),
                             PostgresConnection.Step(sql: speculation.lock, params: []),
                             PostgresConnection.Step(sql: Self.guardedInsert,
                                                     params: parameters + [.bytes(speculation.epoch)])]
                let answers = try trip { () throws(SecureStoreError) in
                    try connection.pipeline(steps, commit: false, committedAtSync: true)
                }
                // No row: a row with the key exists, or the key epoch changed. Nothing was written.
                guard answers.count == 3, answers[2].rows.count == 1 else { throw transactionNeeded() }
                held.stage = .committed
                return
            default:
                throw transactionNeeded()
            }
        }
        if let opening = held.opening {
            // Nothing was sent yet: nothing to commit, or writes only, which wait for the epoch's answer.
            guard !held.steps.isEmpty else { return }
            held.opening = nil
            let answers = try trip { () throws(SecureStoreError) in try connection.pipeline(opening.steps, commit: false) }
            try checkEpoch(answers, at: Opening.checkStep, opening)
        }
        if held.steps.isEmpty { return try connection.commit() }
        let steps = held.steps
        held.steps = []
        _ = try trip { () throws(SecureStoreError) in try connection.pipeline(steps, commit: true) }
    }

    /// Ends the call when the opening's epoch read is not the call's epoch (its rows are never decoded).
    private func checkEpoch(_ answers: [PGRows], at index: Int, _ opening: Opening) throws(SecureStoreError) {
        var stored: [UInt8]? = nil
        if index < answers.count, case .blob(let v)? = answers[index].rows.first?.first { stored = v }
        guard stored != opening.epoch else { return }
        held.epochChanged = .some(stored)
        throw SecureStoreError(.authFailed, "The namespace's key epoch changed; the call is run again.")
    }

    /// Runs one statement now, after the held statements (one round trip).
    private func send(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) -> PGRows {
        let params = parameters.map(Self.parameter)
        if held.opening == nil, held.steps.isEmpty {
            return try trip { () throws(SecureStoreError) in try connection.query(sql, params) }
        }
        return try sendHeld(then: PostgresConnection.Step(sql: sql, params: params)).last ?? PGRows(rows: [], affected: 0)
    }

    /// The opening (when it was not sent yet), the held writes and `last` in one pipeline (one round trip),
    /// without COMMIT; their answers. The transaction stays open, so a changed epoch is rolled back with
    /// whatever ran after it.
    private func sendHeld(then last: PostgresConnection.Step?) throws(SecureStoreError) -> [PGRows] {
        var steps = held.steps
        held.steps = []
        if let last { steps.append(last) }
        guard let opening = held.opening else {
            return try trip { () throws(SecureStoreError) in try connection.pipeline(steps, commit: false) }
        }
        held.opening = nil
        let answers = try trip { () throws(SecureStoreError) in
            try connection.pipeline(opening.steps + steps, commit: false)
        }
        try checkEpoch(answers, at: Opening.checkStep, opening)
        return answers
    }

    /// Counts one round trip, noting a failure of the first.
    private func trip<R>(_ body: () throws(SecureStoreError) -> R) throws(SecureStoreError) -> R {
        held.trips += 1
        do throws(SecureStoreError) {
            return try body()
        } catch {
            if held.trips == 1 { held.failedOnFirstTrip = true }
            if connection.lastSQLState == Self.replacedRowMissing { throw SealedTable.replacedRowVanished }
            throw error
        }
    }

    private static func parameter(_ v: TableValue) -> PGValue {
        switch v {
        case .null: .null
        case .integer(let n): .integer(n)
        case .blob(let b): .bytes(b)
        case .text(let t): .text(t)
        }
    }
}

extension PostgresBackend {
    /// Whether libpq can be loaded in this process (it is opened at first use); its `notAvailable` error,
    /// naming the library and the package to install, when not.
    public static func checkLibrary() throws(SecureStoreError) { try LibPQ.require() }
}
