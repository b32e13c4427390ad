public import SecureStore
import Foundation
import Synchronization

/// Records in one SQLite file, every secret and attribute sealed with XChaCha20-Poly1305 and found through
/// keyed blind indexes. See `Backends/SQLite/FORMAT.md` for the file format.
///
/// One connection, serialized by a `Mutex`; other processes are kept apart by SQLite's own locks (WAL,
/// `BEGIN IMMEDIATE` for writers, a busy timeout).
public final class SQLiteBackend: StorageBackend {
    /// The schema version this code writes and reads (`PRAGMA user_version`).
    public static let schemaVersion: Int64 = 1

    private let state: Mutex<Connection>
    public let path: String

    /// Opens (creating when absent) the store at `path` with `key`.
    ///
    /// - Throws: `authFailed` when the key does not open an existing store (the file is left untouched),
    ///   `decode` when the file is not a SecureStore database, `notAvailable` for a newer schema.
    public init(path: String, key: SQLiteKey, passphraseCost: PassphraseCost = .interactive,
                busyTimeout: Duration = .seconds(10)) throws(SecureStoreError) {
        try Sodium.ready()
        self.path = path
        try Files.createFileIfAbsent(path)
        let ms = Int32(clamping: busyTimeout.components.seconds * 1000
                       + busyTimeout.components.attoseconds / 1_000_000_000_000_000)
        let connection = try Connection.open(path: path, key: key, cost: passphraseCost, busyMilliseconds: ms)
        state = Mutex(connection)
    }

    public var backendDescription: String { "sqlite \(path)" }

    public func withTransaction<T>(writing: Bool, _ body: (inout Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        let outcome: UncheckedBox<Result<T, SecureStoreError>> = state.withLock { connection in
            UncheckedBox(Result { () throws(SecureStoreError) -> T in
                try connection.transaction(writing: writing) { () throws(SecureStoreError) -> T in
                    var txn = Transaction(connection: connection)
                    return try body(&txn)
                }
            })
        }
        return try outcome.value.get()
    }

    /// Re-encrypts every item under `newKey` (new blind indexes and key check) in one transaction; until it
    /// commits, the old key keeps working.
    public func rekey(to newKey: SQLiteKey, passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        let outcome: Result<Void, SecureStoreError> = state.withLock { connection in
            Result { () throws(SecureStoreError) in try connection.rekey(to: newKey, cost: passphraseCost) }
        }
        try outcome.get()
    }

    /// `EXPLAIN QUERY PLAN` of the full-key lookup (for tests).
    func fullKeyLookupPlan() throws(SecureStoreError) -> String {
        let outcome: Result<String, SecureStoreError> = state.withLock { connection in
            Result { () throws(SecureStoreError) -> String in
                let rows = try connection.db.query("EXPLAIN QUERY PLAN " + Connection.selectByUniqueKey,
                                                   [.blob([UInt8](repeating: 0, count: 32))])
                return rows.map { row in
                    row.compactMap { if case .text(let t) = $0 { t } else { nil } }.joined(separator: " ")
                }.joined(separator: "\n")
            }
        }
        return try outcome.get()
    }

    // MARK: Transaction

    /// The backend's view of the `items` table inside one SQLite transaction.
    public struct Transaction: StorageTransaction {
        let connection: Connection

        public mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
            try connection.find(filter)
        }

        public mutating func insert(_ record: ItemRecord) throws(SecureStoreError) {
            let row = connection.row(for: record)
            try connection.db.query(
                "INSERT INTO items(cls, ref, ukey, svc, acct, blob) VALUES (?, ?, ?, ?, ?, ?)",
                [.integer(row.cls), .blob(row.ref), .blob(row.ukey), .blob(row.svc), .blob(row.acct), .blob(row.blob)])
        }

        public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
            let row = connection.row(for: record)
            try connection.db.query(
                "UPDATE items SET cls = ?, ukey = ?, svc = ?, acct = ?, blob = ? WHERE ref = ?",
                [.integer(row.cls), .blob(row.ukey), .blob(row.svc), .blob(row.acct), .blob(row.blob), .blob(row.ref)])
            guard connection.db.changes == 1 else {
                throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
            }
        }

        public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
            for ref in refs {
                try connection.db.query("DELETE FROM items WHERE ref = ?", [.blob(connection.refIndex(ref))])
            }
        }

        public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
            var removed = 0
            for cls in classes.sorted(by: { $0.rawValue < $1.rawValue }) {
                try connection.db.query("DELETE FROM items WHERE cls = ?", [.integer(Connection.classNumber(cls))])
                removed += connection.db.changes
            }
            return removed
        }
    }
}

/// How hard a passphrase is stretched (Argon2id) when a store or a new key is created.
public struct PassphraseCost: Sendable, Hashable {
    public var operations: UInt64
    public var memoryBytes: UInt64

    public init(operations: UInt64, memoryBytes: UInt64) {
        self.operations = operations
        self.memoryBytes = memoryBytes
    }

    /// libsodium's INTERACTIVE limits (about 64 MiB, a fraction of a second).
    public static let interactive = PassphraseCost(operations: Sodium.interactiveOps, memoryBytes: Sodium.interactiveMem)
    /// libsodium's minimum limits: for tests only.
    public static let minimum = PassphraseCost(operations: Sodium.minimumOps, memoryBytes: Sodium.minimumMem)
}

// MARK: Connection

extension SQLiteBackend {
    /// The connection and the keys that open its rows; used only under the backend's mutex.
    final class Connection: @unchecked Sendable {   // only ever used under the backend's Mutex
        let db: SQLiteConnection
        private(set) var keys: Keys

        struct Keys {
            let encryption: SecretKey
            let index: SecretKey
            /// `kdf` meta value when the master key came from a passphrase.
            let kdf: [UInt8]?
        }

        struct Row {
            let cls: Int64
            let ref: [UInt8]
            let ukey: [UInt8]
            let svc: [UInt8]
            let acct: [UInt8]
            let blob: [UInt8]
        }

        static let selectColumns = "SELECT id, cls, ref, ukey, blob FROM items"
        static let selectByUniqueKey = selectColumns + " WHERE ukey = ? ORDER BY id"
        static let checkPlaintext = Array("SecureStore key check v1".utf8)

        private init(db: SQLiteConnection, keys: Keys) {
            self.db = db
            self.keys = keys
        }

        static func open(path: String, key: SQLiteKey, cost: PassphraseCost, busyMilliseconds: Int32)
            throws(SecureStoreError) -> Connection
        {
            let db = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyMilliseconds)
            // Nothing below writes to an existing file before its key check passed.
            if try !hasSchema(db) {
                guard try integer(db, "SELECT count(*) FROM sqlite_master") == 0 else {
                    throw SecureStoreError(.decode,
                        "The file is a SQLite database of another program, not a SecureStore store; refusing to touch it.")
                }
                try db.exec("PRAGMA journal_mode=WAL")
                try db.exec("BEGIN IMMEDIATE")
                do throws(SecureStoreError) {
                    if try !hasSchema(db) {
                        guard try integer(db, "SELECT count(*) FROM sqlite_master") == 0 else {
                            throw SecureStoreError(.decode,
                                "The file is a SQLite database of another program, not a SecureStore store; refusing to touch it.")
                        }
                        let keys = try makeKeys(key, storedKDF: nil, cost: cost)
                        try db.exec("""
                            CREATE TABLE meta(k TEXT PRIMARY KEY, v BLOB NOT NULL);
                            CREATE TABLE items(id INTEGER PRIMARY KEY, cls INTEGER NOT NULL, ref BLOB NOT NULL,
                                               ukey BLOB NOT NULL, svc BLOB, acct BLOB, blob BLOB NOT NULL);
                            CREATE INDEX items_ref ON items(ref);
                            CREATE INDEX items_ukey ON items(ukey);
                            CREATE INDEX items_cls ON items(cls, id);
                            CREATE INDEX items_svc ON items(svc);
                            CREATE INDEX items_acct ON items(acct);
                            PRAGMA user_version = \(SQLiteBackend.schemaVersion);
                            """)
                        try writeMeta(db, keys)
                        try db.exec("COMMIT")
                        let connection = Connection(db: db, keys: keys)
                        try connection.configure()
                        return connection
                    }
                    try db.exec("ROLLBACK")
                } catch {
                    try? db.exec("ROLLBACK")
                    throw error
                }
            }
            let version = try integer(db, "PRAGMA user_version")
            guard version <= SQLiteBackend.schemaVersion else {
                throw SecureStoreError(.notAvailable,
                    "The store was written by a newer SecureStore (schema \(version); this one reads up to \(SQLiteBackend.schemaVersion)). Upgrade SecureStore.")
            }
            guard version == SQLiteBackend.schemaVersion else {
                throw SecureStoreError(.decode, "The store file has an unknown schema version \(version).")
            }
            let storedKDF = try meta(db, "kdf")
            let keys = try makeKeys(key, storedKDF: storedKDF, cost: cost)
            guard let check = try meta(db, "check"),
                  Sodium.open(check, ad: Array("check".utf8), key: keys.encryption) == checkPlaintext
            else {
                throw SecureStoreError(.authFailed, "The key or passphrase does not open this store.")
            }
            let connection = Connection(db: db, keys: keys)
            try connection.configure()
            return connection
        }

        /// Connection settings (none of them writes to the file once it is in WAL mode).
        private func configure() throws(SecureStoreError) {
            let mode = try db.query("PRAGMA journal_mode")
            if case .text(let m)? = mode.first?.first, m.lowercased() != "wal" {
                try db.exec("PRAGMA journal_mode=WAL")
            }
            try db.exec("PRAGMA synchronous=FULL; PRAGMA secure_delete=ON;")
        }

        private static func hasSchema(_ db: SQLiteConnection) throws(SecureStoreError) -> Bool {
            try integer(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'items')") == 2
        }

        private static func integer(_ db: SQLiteConnection, _ sql: String) throws(SecureStoreError) -> Int64 {
            if case .integer(let n)? = try db.query(sql).first?.first { return n }
            return 0
        }

        private static func meta(_ db: SQLiteConnection, _ name: String) throws(SecureStoreError) -> [UInt8]? {
            if case .blob(let b)? = try db.query("SELECT v FROM meta WHERE k = ?", [.text(name)]).first?.first {
                return b
            }
            return nil
        }

        private static func writeMeta(_ db: SQLiteConnection, _ keys: Keys) throws(SecureStoreError) {
            try db.query("DELETE FROM meta WHERE k = 'kdf'")
            if let kdf = keys.kdf {
                try db.query("INSERT INTO meta(k, v) VALUES ('kdf', ?)", [.blob(kdf)])
            }
            let check = Sodium.seal(checkPlaintext, ad: Array("check".utf8), key: keys.encryption)
            try db.query("INSERT OR REPLACE INTO meta(k, v) VALUES ('check', ?)", [.blob(check)])
        }

        /// Encryption and index subkeys for `key`; a passphrase uses the stored salt and costs when there are
        /// some, else new ones.
        static func makeKeys(_ key: SQLiteKey, storedKDF: [UInt8]?, cost: PassphraseCost) throws(SecureStoreError) -> Keys {
            let master: SecretKey
            var kdf: [UInt8]? = nil
            switch key {
            case .passphrase(let passphrase):
                var salt: [UInt8], ops: UInt64, mem: UInt64
                if let stored = storedKDF {
                    // alg (1) ‖ ops (8) ‖ mem (8) ‖ salt (16)
                    guard stored.count == 17 + Sodium.saltBytes, stored[0] == 1 else {
                        throw SecureStoreError(.decode, "The store's passphrase parameters are damaged.")
                    }
                    ops = stored[1..<9].reduce(0) { $0 << 8 | UInt64($1) }
                    mem = stored[9..<17].reduce(0) { $0 << 8 | UInt64($1) }
                    salt = Array(stored[17...])
                    kdf = stored
                } else {
                    salt = Sodium.random(Sodium.saltBytes)
                    ops = cost.operations
                    mem = cost.memoryBytes
                    var encoded: [UInt8] = [1]
                    withUnsafeBytes(of: ops.bigEndian) { encoded.append(contentsOf: $0) }
                    withUnsafeBytes(of: mem.bigEndian) { encoded.append(contentsOf: $0) }
                    kdf = encoded + salt
                }
                var bytes = Array(passphrase)
                defer { Sodium.zero(&bytes) }
                master = try Sodium.stretch(bytes, salt: salt, ops: ops, mem: mem)
            default:
                if storedKDF != nil {
                    throw SecureStoreError(.authFailed, "This store is opened with a passphrase, not a key.")
                }
                var bytes = try key.keyBytes()
                defer { Sodium.zero(&bytes) }
                master = try SecretKey(copying: bytes)
            }
            return Keys(encryption: try Sodium.derive(master, id: 1, context: "SSencryp"),
                        index: try Sodium.derive(master, id: 2, context: "SSindex_"), kdf: kdf)
        }

        func transaction<T>(writing: Bool, _ body: () throws(SecureStoreError) -> T) throws(SecureStoreError) -> T {
            try db.exec(writing ? "BEGIN IMMEDIATE" : "BEGIN")
            do throws(SecureStoreError) {
                let result = try body()
                try db.exec("COMMIT")
                return result
            } catch {
                try? db.exec("ROLLBACK")
                throw error
            }
        }

        // MARK: Rows

        static func classNumber(_ cls: ItemClass) -> Int64 {
            switch cls {
            case .genericPassword: 1
            case .internetPassword: 2
            case .certificate: 3
            case .key: 4
            case .identity: 5
            }
        }

        func refIndex(_ ref: PersistentRef, keys: Keys? = nil) -> [UInt8] {
            Sodium.blindIndex((keys ?? self.keys).index, domain: 1, Array(ref.data))
        }

        private func attributeIndex(_ name: AttributeName, _ value: AttributeValue?, keys: Keys) -> [UInt8] {
            let bytes = (value ?? name.defaultValue)?.bytes ?? []
            return Sodium.blindIndex(keys.index, domain: name == .service ? 3 : 4, bytes)
        }

        private static func associatedData(cls: Int64, ref: [UInt8], ukey: [UInt8]) -> [UInt8] {
            Array("SSrow1".utf8) + [UInt8(truncatingIfNeeded: cls)] + ref + ukey
        }

        func row(for record: ItemRecord, keys: Keys? = nil) -> Row {
            let keys = keys ?? self.keys
            let cls = Self.classNumber(record.itemClass)
            let ref = refIndex(record.persistentRef, keys: keys)
            let ukey = Sodium.blindIndex(keys.index, domain: 2, record.uniqueKey.bytes)
            var plain = RecordCodec.encode(record)
            defer { Sodium.zero(&plain) }
            let blob = Sodium.seal(plain, ad: Self.associatedData(cls: cls, ref: ref, ukey: ukey), key: keys.encryption)
            return Row(cls: cls, ref: ref, ukey: ukey,
                       svc: attributeIndex(.service, record.attributes[.service], keys: keys),
                       acct: attributeIndex(.account, record.attributes[.account], keys: keys), blob: blob)
        }

        /// Decrypts one `selectColumns` row.
        private func record(from row: [SQLValue]) throws(SecureStoreError) -> (id: Int64, record: ItemRecord) {
            guard row.count == 5, case .integer(let id) = row[0], case .integer(let cls) = row[1],
                  case .blob(let ref) = row[2], case .blob(let ukey) = row[3], case .blob(let blob) = row[4]
            else {
                throw SecureStoreError(.decode, "A stored item has a damaged row: the file was altered or corrupted.")
            }
            guard var plain = Sodium.open(blob, ad: Self.associatedData(cls: cls, ref: ref, ukey: ukey),
                                          key: keys.encryption)
            else {
                throw SecureStoreError(.decode, "Stored item #\(id) cannot be decrypted: the data was altered or corrupted.")
            }
            defer { Sodium.zero(&plain) }
            guard let record = RecordCodec.decode(plain), Self.classNumber(record.itemClass) == cls else {
                throw SecureStoreError(.decode, "Stored item #\(id) cannot be decoded: the data was altered or corrupted.")
            }
            return (id, record)
        }

        func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
            var rows: [[SQLValue]]
            if let ref = filter.persistentRef {
                rows = try db.query(Self.selectColumns + " WHERE ref = ? ORDER BY id", [.blob(refIndex(ref))])
            } else if let uniqueKeys = filter.uniqueKeys {
                rows = []
                for key in Set(uniqueKeys) {
                    rows += try db.query(Self.selectByUniqueKey,
                                         [.blob(Sodium.blindIndex(keys.index, domain: 2, key.bytes))])
                }
            } else if let cls = filter.itemClass {
                let number = Self.classNumber(cls)
                if let service = filter.equalities[.service] {
                    rows = try db.query(Self.selectColumns + " WHERE svc = ? AND cls = ? ORDER BY id",
                                        [.blob(attributeIndex(.service, service, keys: keys)), .integer(number)])
                } else if let account = filter.equalities[.account] {
                    rows = try db.query(Self.selectColumns + " WHERE acct = ? AND cls = ? ORDER BY id",
                                        [.blob(attributeIndex(.account, account, keys: keys)), .integer(number)])
                } else {
                    rows = try db.query(Self.selectColumns + " WHERE cls = ? ORDER BY id", [.integer(number)])
                }
            } else {
                rows = try db.query(Self.selectColumns + " ORDER BY id")
            }
            var found: [(id: Int64, record: ItemRecord)] = []
            found.reserveCapacity(rows.count)
            for row in rows { found.append(try record(from: row)) }
            if filter.uniqueKeys != nil, found.count > 1 { found.sort { $0.id < $1.id } }
            return found.map(\.record)
        }

        // MARK: Rekey

        func rekey(to newKey: SQLiteKey, cost: PassphraseCost) throws(SecureStoreError) {
            let newKeys = try Self.makeKeys(newKey, storedKDF: nil, cost: cost)
            try transaction(writing: true) { () throws(SecureStoreError) in
                let rows = try db.query(Self.selectColumns + " ORDER BY id")
                for row in rows {
                    let (id, record) = try record(from: row)
                    let new = self.row(for: record, keys: newKeys)
                    try db.query("UPDATE items SET ref = ?, ukey = ?, svc = ?, acct = ?, blob = ? WHERE id = ?",
                                 [.blob(new.ref), .blob(new.ukey), .blob(new.svc), .blob(new.acct), .blob(new.blob),
                                  .integer(id)])
                }
                try Self.writeMeta(db, newKeys)
            }
            keys = newKeys
        }
    }
}

struct UncheckedBox<Value>: @unchecked Sendable {   // crosses the lock boundary only; never shared
    let value: Value
    init(_ value: Value) { self.value = value }
}
