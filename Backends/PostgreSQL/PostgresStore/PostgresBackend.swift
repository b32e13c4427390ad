public import SecureStore
import Foundation

package import SecureStoreCrypto

/// Records in a PostgreSQL database, end-to-end encrypted with the SQLite backend's record format: the
/// server stores only class numbers, keyed blind indexes and sealed blobs. Many processes on many machines
/// can share one store (one `namespace`) as long as they hold the same key. See `Backends/PostgreSQL/MAPPING.md`.
///
/// One connection per backend, serialized by a lock (`Locked`). Every call is one transaction; writers of a
/// namespace take a transaction-scoped advisory lock, so the core's read-check-write steps (uniqueness,
/// update collisions, clear) are atomic across machines, and a unique index on (namespace, ukey) backs
/// uniqueness up in the database itself. A lost connection is re-opened on the next call.
public final class PostgresBackend: StorageBackend {
    /// The schema version this code creates and reads (`securestore_schema.version`). Version 1 (records
    /// that cannot say "no secret") is upgraded to 2 on first use by adding the version row: the tables are
    /// the same and records of both versions are read (see MAPPING.md).
    public static let schemaVersion: Int64 = 2

    /// The namespace this store's items live in (several stores may share one database).
    public let namespace: String
    private let url: String
    private let target: PostgresConnection.Target
    private let passwordEnv: String?
    private let options: PostgresConnection.Options
    private let sealer: RecordSealer
    private let lockKey: Int64
    private let state: Locked<Session>

    /// Opens the store in `namespace` at `url` with `key`, creating the schema and the namespace on first use.
    ///
    /// - Parameters:
    ///   - url: a libpq connection URL or `key=value` string **without a password**; several hosts with
    ///     `target_session_attrs=read-write` give failover to whichever is the primary.
    ///   - passwordEnv: the environment variable holding the role's password (read at every connect). Without
    ///     it libpq's own sources apply (`PGPASSWORD`, `~/.pgpass`, peer or certificate auth).
    /// - Throws: `notAvailable` naming the host and the reason when no server answers within
    ///   `connectTimeout`; `authFailed` when `key` does not open an existing namespace; `param` for a URL with
    ///   a password in it or an empty namespace; `readOnly` when the schema must be created on a standby.
    public init(url: String, key: StoreKey, namespace: String = "securestore", passwordEnv: String? = nil,
                connectTimeout: Duration = .seconds(5), statementTimeout: Duration = .seconds(10),
                passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        guard !namespace.isEmpty, namespace.utf8.count <= 200 else {
            throw .param("namespace", "A PostgreSQL namespace must be 1 to 200 bytes long.")
        }
        let target = try PostgresConnection.parse(url)
        guard !target.hasPassword else {
            throw .param("url",
                "The PostgreSQL URL contains a password; remove it and name an environment variable that holds it with passwordEnv.")
        }
        self.url = url
        self.target = target
        self.namespace = namespace
        self.passwordEnv = passwordEnv
        self.lockKey = Self.advisoryLockKey(namespace: namespace)
        var options = PostgresConnection.Options()
        options.connectTimeoutSeconds = Int(max(2, connectTimeout.components.seconds))
        options.statementTimeoutMilliseconds = Int(clamping: statementTimeout.components.seconds * 1000
            + statementTimeout.components.attoseconds / 1_000_000_000_000_000)
        self.options = options

        let connection = try Self.connect(url: url, passwordEnv: passwordEnv, options: options)
        try Self.ensureSchema(connection)
        sealer = try Self.openNamespace(connection, namespace: namespace, lockKey: lockKey, key: key,
                                        cost: passphraseCost)
        state = Locked(Session(connection: connection))
    }

    public var backendDescription: String {
        "postgres \(target.description), namespace \(namespace)"
    }

    /// Server transactions with a per-namespace writer lock; shared by every machine that reaches the server.
    public static let guarantees = StorageGuarantees(atomicWrites: true, acrossProcesses: .full, acrossMachines: .full,
                                                     durableOnReturn: true, insertionOrder: .storageSequence)

    // MARK: Transactions

    /// The live connection, if any; replaced after a failure.
    struct Session {
        var connection: PostgresConnection?
    }

    public func withTransaction<T>(writing: Bool, _ body: (inout Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        let outcome: UncheckedBox<Result<T, SecureStoreError>> = state.withLock { session in
            UncheckedBox(Result { () throws(SecureStoreError) -> T in
                try run(&session, writing: writing, body)
            })
        }
        return try outcome.value.get()
    }

    private func run<T>(_ session: inout Session, writing: Bool, _ body: (inout Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        var attempt = 0
        while true {
            attempt += 1
            // A connection that broke since the last call (server restarted, failover) is replaced at once;
            // one whose break shows only now, at BEGIN, is replaced once: nothing has happened yet.
            let reused: Bool
            let connection: PostgresConnection
            if let existing = session.connection, existing.isOpen {
                connection = existing
                reused = true
            } else {
                session.connection = nil
                connection = try Self.connect(url: url, passwordEnv: passwordEnv, options: options)
                session.connection = connection
                reused = false
            }
            // A writer begins and takes its namespace's lock in one round trip.
            do throws(SecureStoreError) {
                try connection.execute(writing ? "BEGIN; SELECT pg_advisory_xact_lock(\(lockKey))"
                                               : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            } catch {
                if connection.isOpen, connection.inTransaction, error.code != .notAvailable {
                    do throws(SecureStoreError) { try connection.execute("ROLLBACK") } catch { session.connection = nil }
                } else {
                    session.connection = nil
                }
                if error.code == .notAvailable, reused, attempt == 1 { continue }
                throw error
            }
            do throws(SecureStoreError) {
                var txn = Transaction(connection: connection, sealer: sealer, namespace: namespace)
                let result = try body(&txn)
                try connection.commit()
                return result
            } catch {
                if connection.isOpen, connection.inTransaction {
                    do throws(SecureStoreError) { try connection.execute("ROLLBACK") } catch { session.connection = nil }
                }
                if !connection.isOpen || error.code == .notAvailable { session.connection = nil }
                throw error
            }
        }
    }

    // MARK: Opening

    private static func connect(url: String, passwordEnv: String?, options: PostgresConnection.Options)
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
        return try PostgresConnection.connect(url: url, password: password, options: options)
    }

    /// The advisory lock key writers of `namespace` hold for the length of each write transaction
    /// (`pg_advisory_xact_lock(key)`): the first 8 bytes of FNV-1a-64 of `"securestore namespace " + namespace`,
    /// as a signed big-endian integer. A maintenance job that holds it keeps every SecureStore writer of that
    /// namespace out; readers are never blocked.
    public static func advisoryLockKey(namespace: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ("securestore namespace " + namespace).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
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
                              cost: PassphraseCost) throws(SecureStoreError) -> RecordSealer
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
                    try db.query("INSERT INTO securestore_meta(namespace, k, v) VALUES ($1, 'check', $2)",
                                 [.text(namespace), .bytes(sealer.makeCheck())])
                    try db.execute("COMMIT")
                    return sealer
                }
                try db.execute("COMMIT")
            } catch {
                if db.isOpen { try? db.execute("ROLLBACK") }
                throw error
            }
        }
        let sealer = try RecordSealer.make(key, storedKDF: stored["kdf"], cost: cost)
        try sealer.verify(check: stored["check"])
        return sealer
    }

    // MARK: Transaction

    /// The backend's view of the namespace's rows inside one PostgreSQL transaction.
    public struct Transaction: StorageTransaction {
        let connection: PostgresConnection
        let sealer: RecordSealer
        let namespace: String

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
            var found: [(id: Int64, record: ItemRecord)] = []
            found.reserveCapacity(rows.count)
            for row in rows {
                guard row.count == 5, case .integer(let id) = row[0], case .integer(let cls) = row[1],
                      case .bytes(let ref) = row[2], case .bytes(let ukey) = row[3], case .bytes(let blob) = row[4]
                else {
                    throw SecureStoreError(.decode, "A stored item has a damaged row: the table was altered.")
                }
                found.append((id, try sealer.open(cls: cls, ref: ref, ukey: ukey, blob: blob, id: id)))
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

struct UncheckedBox<Value>: @unchecked Sendable {   // crosses the lock boundary only; never shared
    let value: Value
    init(_ value: Value) { self.value = value }
}
