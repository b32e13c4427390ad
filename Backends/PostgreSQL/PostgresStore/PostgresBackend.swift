public import SecureStore
import Foundation
public import SecureStoreCrypto

package import SecureStoreCrypto

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
    /// The schema version this code creates and reads (`securestore_schema.version`). Version 1 (records
    /// that cannot say "no secret") is upgraded to 2 on first use by adding the version row: the tables are
    /// the same and records of both versions are read (see MAPPING.md).
    public static let schemaVersion: Int64 = 2
    /// The default number of connections one backend keeps.
    public static let defaultPoolSize = 4

    /// The namespace this store's items live in (several stores may share one database).
    public let namespace: String
    /// How many connections this backend opens at most (concurrent callers beyond it wait for one).
    public let poolSize: Int
    private let target: PostgresConnection.Target
    private let passwordEnv: String?
    private let options: PostgresConnection.Options
    private let lockKey: Int64
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
    /// - Throws: `notAvailable` naming the host and the reason when no server answers within
    ///   `connectTimeout`; `authFailed` when `key` does not open an existing namespace; `param` for a URL with
    ///   a password in it or an empty namespace; `readOnly` when the schema must be created on a standby.
    public init(url: String, key: StoreKey, namespace: String = "securestore", passwordEnv: String? = nil,
                connectTimeout: Duration = .seconds(5), statementTimeout: Duration = .seconds(10),
                lockTimeout: Duration = .seconds(5), poolSize: Int = PostgresBackend.defaultPoolSize,
                rememberHost: Bool = true, passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        guard !namespace.isEmpty, namespace.utf8.count <= 200 else {
            throw .param("namespace", "A PostgreSQL namespace must be 1 to 200 bytes long.")
        }
        guard (1...64).contains(poolSize) else {
            throw .param("poolSize", "The PostgreSQL pool size must be 1 to 64 connections.")
        }
        func milliseconds(_ d: Duration, _ name: String) throws(SecureStoreError) -> Int {
            let ms = Int(clamping: d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000)
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
            try Self.ensureSchema(connection)
            let (sealer, check) = try Self.openNamespace(connection, namespace: namespace, lockKey: lockKey, key: key,
                                                         cost: passphraseCost)
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

    /// Server transactions with a per-namespace writer lock; shared by every machine that reaches the server.
    public static let guarantees = StorageGuarantees(atomicWrites: true, acrossProcesses: .full, acrossMachines: .full,
                                                     durableOnReturn: true, insertionOrder: .storageSequence)

    // MARK: Transactions

    public func withTransaction<T>(writing: Bool, _ body: (inout Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        try run(writing: writing) { (connection, keys) throws(SecureStoreError) -> T in
            var txn = Transaction(connection: connection, sealer: keys.sealer, namespace: namespace, check: keys.check,
                                  epochChecked: writing)
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
        let ns = PGValue.text(namespace)
        do throws(SecureStoreError) {
            try run(writing: true) { (db, keys) throws(SecureStoreError) in
                let rows = try db.query(Transaction.select + " ORDER BY id", [ns]).rows
                for row in rows {
                    guard row.count == 5, case .integer(let id) = row[0], case .integer(let cls) = row[1],
                          case .bytes(let ref) = row[2], case .bytes(let ukey) = row[3], case .bytes(let blob) = row[4]
                    else {
                        throw SecureStoreError(.decode, "A stored item has a damaged row: the table was altered.")
                    }
                    let sealed = newSealer.seal(try keys.sealer.open(cls: cls, ref: ref, ukey: ukey, blob: blob, id: id))
                    try db.query("UPDATE securestore_items SET ref = $2, ukey = $3, svc = $4, acct = $5, blob = $6 WHERE namespace = $1 AND id = $7",
                                 [ns, .bytes(sealed.ref), .bytes(sealed.ukey), .bytes(sealed.svc), .bytes(sealed.acct),
                                  .bytes(sealed.blob), .integer(id)])
                }
                try db.query("DELETE FROM securestore_meta WHERE namespace = $1 AND k IN ('kdf', 'check')", [ns])
                if let kdf = newSealer.kdfParameters {
                    try db.query("INSERT INTO securestore_meta(namespace, k, v) VALUES ($1, 'kdf', $2)", [ns, .bytes(kdf)])
                }
                try db.query("INSERT INTO securestore_meta(namespace, k, v) VALUES ($1, 'check', $2)", [ns, .bytes(newCheck)])
                self.keys.withLock { $0.pending = (newSealer, newCheck) }
            }
        } catch {
            keys.withLock { $0.pending = nil }
            if error.code == .outcomeUnknown,
               let stored = try? run(writing: false, { (db, _) throws(SecureStoreError) in try Self.storedCheck(db, ns) }),
               stored == newCheck {
                keys.withLock { $0 = Keys(sealer: newSealer, check: newCheck) }
            }
            throw error
        }
        keys.withLock { $0 = Keys(sealer: newSealer, check: newCheck) }
    }

    /// The bytes of a hex string (as `encode(…, 'hex')` returns), nil for anything else.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = UInt8(String(UnicodeScalar(digits[i])), radix: 16),
                  let low = UInt8(String(UnicodeScalar(digits[i + 1])), radix: 16) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    /// The namespace's key-check value now.
    static func storedCheck(_ db: PostgresConnection, _ ns: PGValue) throws(SecureStoreError) -> [UInt8]? {
        let rows = try db.query("SELECT v FROM securestore_meta WHERE namespace = $1 AND k = 'check'", [ns]).rows
        if case .bytes(let v)? = rows.first?.first { return v }
        return nil
    }

    /// Runs `body` in one transaction on a pooled connection: a writer first takes the namespace's lock and
    /// checks the key epoch.
    private func run<T>(writing: Bool, _ body: (PostgresConnection, Keys) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        var attempt = 0
        while true {
            attempt += 1
            // A connection that broke since the last call (server restarted, failover) is replaced at once;
            // one whose break shows only now, at BEGIN, is replaced once: nothing has happened yet.
            let connection = try pool.checkout { (preferred: Int?) throws(SecureStoreError) in
                try Self.connect(target: target, passwordEnv: passwordEnv, options: options, preferred: preferred,
                                 pool: pool, memory: hostMemory)
            }
            let reused = connection.wasUsed
            connection.wasUsed = true
            var keep = true
            defer { pool.checkin(keep && connection.isOpen && !connection.inTransaction ? connection : nil) }
            var current = keys.withLock { $0 }
            // A writer begins, takes its namespace's lock and reads the key epoch in one round trip (in READ
            // COMMITTED each statement sees what was committed before it started: after the lock).
            var stored: [UInt8]? = nil
            do throws(SecureStoreError) {
                if writing {
                    let rows = try connection.execute("BEGIN; SELECT pg_advisory_xact_lock(\(lockKey)); "
                        + "SELECT encode(v, 'hex') FROM securestore_meta WHERE namespace = \(try connection.literal(namespace)) AND k = 'check'")
                    if case .text(let hex)? = rows.rows.first?.first { stored = Self.bytes(hex: hex) }
                } else {
                    try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                }
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
                if writing, let stored, stored != current.check {
                    // A rekey through this same store object committed while this call waited for the lock.
                    let latest = keys.withLock { $0 }
                    if latest.check == stored {
                        current = latest
                    } else if let pending = latest.pending, pending.check == stored {
                        current = Keys(sealer: pending.sealer, check: pending.check)
                    }
                }
                if writing { try RecordSealer.requireSameEpoch(stored: stored, opened: current.check) }
                let result = try body(connection, current)
                try connection.commit()
                return result
            } catch {
                if error.code != .outcomeUnknown { rollback(connection, &keep) } else { keep = false }
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
            guard let value = ProcessInfo.processInfo.environment[passwordEnv], !value.isEmpty else {
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

    /// Creates the tables on first use (under an advisory lock, so racing first users create them once)
    /// and checks the version (a version 1 schema is marked version 2: same tables, records of both versions
    /// are read). Touches nothing when the current schema is already there.
    static func ensureSchema(_ db: PostgresConnection) throws(SecureStoreError) {
        func version() throws(SecureStoreError) -> Int64? {
            let present = try db.query("SELECT to_regclass('securestore_schema') IS NOT NULL")
            guard case .bool(true)? = present.rows.first?.first else { return nil }
            let rows = try db.query("SELECT max(version) FROM securestore_schema")
            if case .integer(let v)? = rows.rows.first?.first { return v }
            return nil
        }
        var found = try version()
        if found == nil || found == 1 {
            try db.execute("BEGIN")
            do throws(SecureStoreError) {
                try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(schemaLockKey)])
                let current = try version()
                if current == 1 {
                    try db.query("INSERT INTO securestore_schema(version) VALUES ($1)", [.integer(schemaVersion)])
                } else if current == nil {
                    try db.execute("""
                        CREATE TABLE IF NOT EXISTS securestore_schema(version bigint NOT NULL);
                        CREATE TABLE IF NOT EXISTS securestore_meta(
                            namespace text NOT NULL, k text NOT NULL, v bytea NOT NULL, PRIMARY KEY (namespace, k));
                        CREATE TABLE IF NOT EXISTS securestore_items(
                            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                            namespace text NOT NULL, cls bigint NOT NULL,
                            ref bytea NOT NULL, ukey bytea NOT NULL, svc bytea NOT NULL, acct bytea NOT NULL,
                            blob bytea NOT NULL,
                            CONSTRAINT securestore_items_ukey UNIQUE (namespace, ukey),
                            CONSTRAINT securestore_items_ref UNIQUE (namespace, ref));
                        CREATE INDEX IF NOT EXISTS securestore_items_cls ON securestore_items(namespace, cls, id);
                        CREATE INDEX IF NOT EXISTS securestore_items_svc ON securestore_items(namespace, svc, cls, id);
                        CREATE INDEX IF NOT EXISTS securestore_items_acct ON securestore_items(namespace, acct, cls, id);
                        """)
                    try db.query("INSERT INTO securestore_schema(version) VALUES ($1)", [.integer(schemaVersion)])
                }
                try db.execute("COMMIT")
            } catch {
                if db.isOpen { try? db.execute("ROLLBACK") }
                throw error
            }
            found = try version()
        }
        guard let found else {
            throw SecureStoreError(.decode, "The securestore_schema table at \(db.endpoint) is empty: the schema was altered.")
        }
        guard found <= schemaVersion else {
            throw SecureStoreError(.notAvailable,
                "The database was set up by a newer SecureStore (schema \(found); this one reads up to \(schemaVersion)). Upgrade SecureStore.")
        }
        guard found == schemaVersion else {
            throw SecureStoreError(.decode, "The database has an unknown SecureStore schema version \(found).")
        }
    }

    /// The sealer for `key` in `namespace`: checked against the stored key check, or (first use) with a new
    /// key check and passphrase parameters stored under the namespace's advisory lock.
    static func openNamespace(_ db: PostgresConnection, namespace: String, lockKey: Int64, key: StoreKey,
                              cost: PassphraseCost) throws(SecureStoreError) -> (RecordSealer, [UInt8])
    {
        func meta() throws(SecureStoreError) -> [String: [UInt8]] {
            var out: [String: [UInt8]] = [:]
            for row in try db.query("SELECT k, v FROM securestore_meta WHERE namespace = $1", [.text(namespace)]).rows {
                if row.count == 2, case .text(let k) = row[0], case .bytes(let v) = row[1] { out[k] = v }
            }
            return out
        }
        var stored = try meta()
        if stored["check"] == nil {
            try db.execute("BEGIN")
            do throws(SecureStoreError) {
                try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(lockKey)])
                stored = try meta()
                if stored["check"] == nil {
                    guard try db.query("SELECT 1 FROM securestore_items WHERE namespace = $1 LIMIT 1",
                                       [.text(namespace)]).rows.isEmpty else {
                        throw SecureStoreError(.decode,
                            "Namespace \(namespace) holds items but no key check: the database was altered.")
                    }
                    let sealer = try RecordSealer.make(key, storedKDF: nil, cost: cost)
                    if let kdf = sealer.kdfParameters {
                        try db.query("INSERT INTO securestore_meta(namespace, k, v) VALUES ($1, 'kdf', $2)",
                                     [.text(namespace), .bytes(kdf)])
                    }
                    let check = sealer.makeCheck()
                    try db.query("INSERT INTO securestore_meta(namespace, k, v) VALUES ($1, 'check', $2)",
                                 [.text(namespace), .bytes(check)])
                    try db.commit()
                    return (sealer, check)
                }
                try db.execute("COMMIT")
            } catch {
                if db.isOpen { try? db.execute("ROLLBACK") }
                throw error
            }
        }
        let sealer = try RecordSealer.make(key, storedKDF: stored["kdf"], cost: cost)
        try sealer.verify(check: stored["check"])
        return (sealer, stored["check"] ?? [])
    }

    // MARK: Transaction

    /// The backend's view of the namespace's rows inside one PostgreSQL transaction.
    public struct Transaction: StorageTransaction {
        let connection: PostgresConnection
        let sealer: RecordSealer
        let namespace: String
        /// The key-check value the sealer belongs to (its key epoch).
        let check: [UInt8]
        /// Whether this transaction already checked the epoch (writers do, under the lock).
        let epochChecked: Bool

        static let select = "SELECT id, cls, ref, ukey, blob FROM securestore_items WHERE namespace = $1"

        public mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
            let ns = PGValue.text(namespace)
            var rows: [[PGValue]]
            if let ref = filter.persistentRef {
                rows = try connection.query(Self.select + " AND ref = $2", [ns, .bytes(sealer.refIndex(ref))]).rows
            } else if let uniqueKeys = filter.uniqueKeys {
                rows = []
                for key in Set(uniqueKeys) {
                    rows += try connection.query(Self.select + " AND ukey = $2",
                                                 [ns, .bytes(sealer.uniqueKeyIndex(key))]).rows
                }
            } else if let cls = filter.itemClass {
                let number = PGValue.integer(RecordSealer.classNumber(cls))
                if let service = filter.equalities[.service] {
                    rows = try connection.query(Self.select + " AND svc = $2 AND cls = $3 ORDER BY id",
                                                [ns, .bytes(sealer.attributeIndex(.service, service)), number]).rows
                } else if let account = filter.equalities[.account] {
                    rows = try connection.query(Self.select + " AND acct = $2 AND cls = $3 ORDER BY id",
                                                [ns, .bytes(sealer.attributeIndex(.account, account)), number]).rows
                } else {
                    rows = try connection.query(Self.select + " AND cls = $2 ORDER BY id", [ns, number]).rows
                }
            } else {
                rows = try connection.query(Self.select + " ORDER BY id", [ns]).rows
            }
            if rows.isEmpty, !epochChecked {
                // Nothing under this key's indexes: after a rekey by someone else, say so instead of "not found".
                try RecordSealer.requireSameEpoch(stored: try PostgresBackend.storedCheck(connection, .text(namespace)),
                                                  opened: check)
            }
            var found: [(id: Int64, record: ItemRecord)] = []
            found.reserveCapacity(rows.count)
            for row in rows {
                guard row.count == 5, case .integer(let id) = row[0], case .integer(let cls) = row[1],
                      case .bytes(let ref) = row[2], case .bytes(let ukey) = row[3], case .bytes(let blob) = row[4]
                else {
                    throw SecureStoreError(.decode, "A stored item has a damaged row: the table was altered.")
                }
                do throws(SecureStoreError) {
                    found.append((id, try sealer.open(cls: cls, ref: ref, ukey: ukey, blob: blob, id: id)))
                } catch {
                    // A row this key cannot open: after a rekey by someone else that is the key, not damage.
                    try RecordSealer.requireSameEpoch(stored: try PostgresBackend.storedCheck(connection, .text(namespace)),
                                                      opened: check)
                    throw error
                }
            }
            if found.count > 1, filter.persistentRef != nil || filter.uniqueKeys != nil { found.sort { $0.id < $1.id } }
            return found.map(\.record)
        }

        public mutating func insert(_ record: ItemRecord) throws(SecureStoreError) {
            let row = sealer.seal(record)
            try connection.query(
                "INSERT INTO securestore_items(namespace, cls, ref, ukey, svc, acct, blob) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                [.text(namespace), .integer(row.cls), .bytes(row.ref), .bytes(row.ukey), .bytes(row.svc),
                 .bytes(row.acct), .bytes(row.blob)])
        }

        public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
            let row = sealer.seal(record)
            let changed = try connection.query(
                "UPDATE securestore_items SET cls = $2, ukey = $3, svc = $4, acct = $5, blob = $6 WHERE namespace = $1 AND ref = $7",
                [.text(namespace), .integer(row.cls), .bytes(row.ukey), .bytes(row.svc), .bytes(row.acct),
                 .bytes(row.blob), .bytes(row.ref)]).affected
            guard changed == 1 else {
                throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
            }
        }

        public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
            for ref in refs {
                try connection.query("DELETE FROM securestore_items WHERE namespace = $1 AND ref = $2",
                                     [.text(namespace), .bytes(sealer.refIndex(ref))])
            }
        }

        public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
            var removed = 0
            for cls in classes.sorted(by: { $0.rawValue < $1.rawValue }) {
                removed += try connection.query("DELETE FROM securestore_items WHERE namespace = $1 AND cls = $2",
                                                [.text(namespace), .integer(RecordSealer.classNumber(cls))]).affected
            }
            return removed
        }
    }
}
