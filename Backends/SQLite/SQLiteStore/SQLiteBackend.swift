public import SecureStore
import Foundation
package import SecureStoreCrypto

/// Records in one SQLite file, every secret and attribute sealed with XChaCha20-Poly1305 and found through
/// keyed blind indexes. See `Backends/SQLite/FORMAT.md` for the file format.
///
/// One connection, serialized by a lock (`Locked`); other processes are kept apart by SQLite's own locks (WAL,
/// `BEGIN IMMEDIATE` for writers, a busy timeout).
public final class SQLiteBackend: StorageBackend {
    /// The schema version this code writes and reads (`PRAGMA user_version`). Version 1 files (whose records
    /// cannot say "no secret") are read as they are and marked version 2 when opened for writing; their
    /// records keep their meaning (see FORMAT.md).
    public static let schemaVersion: Int64 = 2

    private let state: Locked<Connection>
    public let path: String

    /// Opens (creating when absent) the store at `path` with `key`.
    ///
    /// An existing store file, its `-wal` and `-shm` files and the key file are checked like ssh checks its
    /// keys: regular files of this user that group and others may neither read nor write (a symbolic link is
    /// followed only to such a file). A new store is built in a private temporary file and linked into place,
    /// so `path` never holds a half-made store and a file or link planted there is never written into. An
    /// existing empty file is an error (a truncated store), never a new store; an existing store whose key
    /// file is missing is an error, never a new key.
    ///
    /// - Throws: `authFailed` when the key does not open an existing store (the file is left untouched) or a
    ///   file fails the owner/mode check, `decode` when the file is not a SecureStore database (or is empty),
    ///   `notAvailable` for a newer schema, a missing key file or a folder given as a file.
    ///
    /// - Parameter readOnly: open an existing store for reading only (nothing is created or written; a write
    ///   gives `readOnly`), such as an export being imported: such a file is not required to be private. A
    ///   store file this process may not write, or one in a folder it may not write (where SQLite could not
    ///   create `-wal` or `-shm`), is opened this way by itself, so reads still work.
    public init(path: String, key: SQLiteKey, passphraseCost: PassphraseCost = .interactive,
                busyTimeout: Duration = .seconds(10), readOnly: Bool = false) throws(SecureStoreError) {
        self.path = path
        self.busyTimeout = busyTimeout
        let ms = Int32(clamping: busyTimeout.components.seconds * 1000
                       + busyTimeout.components.attoseconds / 1_000_000_000_000_000)
        var info = stat()
        let exists = stat(path, &info) == 0   // follows a link: the file it leads to is what is checked
        let statError = errno
        if !exists, statError != ENOENT {
            throw SecureStoreError(.notAvailable,
                "Could not inspect the store file \(path): \(String(cString: strerror(statError))).")
        }
        if !exists {
            var link = stat()
            if lstat(path, &link) == 0 { try Files.checkPrivate(path, what: "store file") }   // a dangling link
            if readOnly {
                throw SecureStoreError(.notAvailable, "There is no store file at \(path) to open for reading.")
            }
            if key.isPassphrase, let problem = passphraseCost.problem {   // before a file is created
                throw .param("passphraseCost", "The passphrase cost is \(problem).")
            }
            if let created = try Connection.create(path: path, key: key, cost: passphraseCost, busyMilliseconds: ms) {
                self.readOnly = false
                state = Locked(created)
                return
            }
            // Something appeared at `path` meanwhile: another process created the store (or planted a file).
            guard stat(path, &info) == 0 else {
                try Files.checkPrivate(path, what: "store file")
                throw SecureStoreError(.io, "The store file \(path) appeared and vanished while it was being created; try again.")
            }
        }
        let real = Self.realPath(path)
        let folder = (real as NSString).deletingLastPathComponent
        if readOnly {
            try Files.checkRegular(info, path: path, what: "store file")
        } else {
            try Files.checkPrivate(info, path: path, what: "store file")
            for suffix in ["-wal", "-shm"] {
                var sidecar = stat()
                if stat(real + suffix, &sidecar) == 0 {
                    try Files.checkPrivate(sidecar, path: real + suffix, what: "store's \(suffix) file")
                }
            }
        }
        guard info.st_size > 0 else {
            throw SecureStoreError(.decode, "The store file \(path) is empty (0 bytes): it holds no store. If it held "
                + "one, it was truncated: restore it from a backup. To start a new store at this path, remove the empty "
                + "file first.")
        }
        // Writing needs the file and its folder (SQLite creates -wal and -shm next to the file).
        let folderWritable = access(folder.isEmpty ? "." : folder, W_OK | X_OK) == 0
        let readOnly = readOnly || access(path, W_OK) != 0 || !folderWritable
        self.readOnly = readOnly
        do throws(SecureStoreError) {
            state = Locked(try Connection.open(path: path, key: key, cost: passphraseCost, busyMilliseconds: ms,
                                               readOnly: readOnly))
        } catch {
            guard !folderWritable, error.code == .notAvailable || error.code == .readOnly || error.code == .io else {
                throw error
            }
            throw SecureStoreError(error.code, "The store \(path) cannot be read: its folder \(folder) is not writable, "
                + "and SQLite needs to create files there (\((real as NSString).lastPathComponent)-shm) to read a store "
                + "whose write-ahead log (-wal) is not merged yet. Make the folder writable (chmod u+w \(folder)) and open "
                + "the store once, or copy the store files to a folder you can write. (\(error.message))")
        }
    }

    /// `path` with symbolic links resolved (SQLite puts `-wal` and `-shm` next to the file a link leads to).
    private static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether the store was opened for reading only.
    public let readOnly: Bool

    /// How long a call waits for another connection's write transaction before failing.
    public let busyTimeout: Duration

    /// A call waits for other processes' (or connections') write transactions, up to the busy timeout, and
    /// for the disk (each write transaction ends with an fdatasync).
    public var blocking: Blocking {
        .upTo(busyTimeout, waitingFor: "another connection's write transaction on the file (the busy timeout), "
              + "then the disk (one fdatasync per write)")
    }

    /// Test hook: caps the database at `pages` pages (`PRAGMA max_page_count`), so a test can fill the
    /// "disk" and check that SQLITE_FULL becomes errSecIO with the store intact.
    package func limitPagesForTesting(_ pages: Int) throws(SecureStoreError) {
        let outcome: Result<Void, SecureStoreError> = state.withLock { connection in
            Result { () throws(SecureStoreError) in try connection.db.exec("PRAGMA max_page_count = \(pages)") }
        }
        try outcome.get()
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
        // A cached key of the old generation no longer opens the store (its binding differs): drop it.
        Self.lock(path: path)
    }

    /// Keeps this passphrase store's master key in the kernel's session keyring for `duration` (1 second to
    /// 24 hours), so opening it with ``StoreKey/unlocked(orPassphrase:)`` in later processes of this login
    /// skips Argon2id. Replaces an earlier unlock of the same store.
    ///
    /// Who can read the cached key: processes of the same user that possess the session keyring (root too).
    /// - Throws: `param` for a key-file store or a duration out of range; `notAvailable` where the kernel
    ///   keyring cannot be used.
    public func unlock(for duration: Duration) throws(SecureStoreError) {
        let seconds = duration.components.seconds + (duration.components.attoseconds > 0 ? 1 : 0)
        guard seconds >= 1, seconds <= Int64(KeyringSlot.maxSeconds) else {
            throw .param("duration", "An unlock lasts 1 second to \(KeyringSlot.maxSeconds / 3600) hours.")
        }
        let outcome: Result<Void, SecureStoreError> = state.withLock { connection in
            Result { () throws(SecureStoreError) in try connection.unlock(seconds: UInt32(seconds), path: path) }
        }
        try outcome.get()
    }

    /// Drops the master key an unlock cached for the store at `path`; whether there was one. Needs no key.
    @discardableResult
    public static func lock(path: String) -> Bool {
        Connection.keyringSlot(path)?.drop() ?? false
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
            let row = connection.sealer.seal(record)
            try connection.db.query(
                "INSERT INTO items(cls, ref, ukey, svc, acct, blob) VALUES (?, ?, ?, ?, ?, ?)",
                [.integer(row.cls), .blob(row.ref), .blob(row.ukey), .blob(row.svc), .blob(row.acct), .blob(row.blob)])
        }

        public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
            let row = connection.sealer.seal(record)
            // Only the columns whose blind index changed are written: SQLite rewrites the entry of every index
            // whose column is in the SET list, even when the value is the same (an update of the secret alone
            // touches the blob and no index).
            let current = try connection.db.query("SELECT cls, ukey, svc, acct FROM items WHERE ref = ?", [.blob(row.ref)])
            guard current.count == 1, current[0].count == 4 else {
                throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
            }
            let old = current[0]
            var columns = "blob = ?"
            var values: [SQLValue] = [.blob(row.blob)]
            if case .integer(let cls) = old[0], cls == row.cls {} else {
                columns += ", cls = ?"
                values.append(.integer(row.cls))
            }
            for (index, name, new) in [(1, "ukey", row.ukey), (2, "svc", row.svc), (3, "acct", row.acct)] {
                if case .blob(let stored) = old[index], stored == new { continue }
                columns += ", \(name) = ?"
                values.append(.blob(new))
            }
            values.append(.blob(row.ref))
            try connection.db.query("UPDATE items SET " + columns + " WHERE ref = ?", values)
            guard connection.db.changes == 1 else {
                throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
            }
        }

        public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
            for ref in refs {
                try connection.db.query("DELETE FROM items WHERE ref = ?", [.blob(connection.sealer.refIndex(ref))])
            }
        }

        public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
            // Every class: one unconditioned DELETE, which SQLite runs as a truncation of the table and its
            // indexes (no per-row index maintenance).
            if classes == Set(ItemClass.allCases) {
                try connection.db.query("DELETE FROM items")
                return connection.db.changes
            }
            var removed = 0
            for cls in classes.sorted(by: { $0.rawValue < $1.rawValue }) {
                try connection.db.query("DELETE FROM items WHERE cls = ?", [.integer(RecordSealer.classNumber(cls))])
                removed += connection.db.changes
            }
            return removed
        }
    }
}

// MARK: Connection

extension SQLiteBackend {
    /// The connection and the keys that open its rows; used only under the backend's mutex.
    final class Connection: @unchecked Sendable {   // only ever used under the backend's lock
        let db: SQLiteConnection
        private(set) var sealer: RecordSealer
        /// The key-check value the store held when this connection opened it (or after its own rekey): the key
        /// epoch every transaction checks.
        private(set) var epoch: [UInt8]

        static let selectColumns = "SELECT id, cls, ref, ukey, blob FROM items"
        static let selectByUniqueKey = selectColumns + " WHERE ukey = ? ORDER BY id"
        static let selectCheck = "SELECT v FROM meta WHERE k = 'check'"

        private init(db: SQLiteConnection, sealer: RecordSealer, epoch: [UInt8]) {
            self.db = db
            self.sealer = sealer
            self.epoch = epoch
        }

        /// Builds a new store in a private temporary file next to `path` and links it into place (`link`
        /// never replaces or follows anything at `path`). Returns nil, having changed nothing, when something
        /// is at `path` by then.
        static func create(path: String, key: SQLiteKey, cost: PassphraseCost, busyMilliseconds: Int32)
            throws(SecureStoreError) -> Connection?
        {
            let suffix = Sodium.random(6).map { String(format: "%02x", $0) }.joined()
            let temporary = path + ".creating-" + suffix
            guard try Files.createExclusive(temporary, shownAs: path) else {
                throw SecureStoreError(.io, "Could not create the store file \(path): \(temporary) is in the way.")
            }
            defer { for name in [temporary, temporary + "-wal", temporary + "-shm"] { unlink(name) } }
            let sealer = try RecordSealer.make(key, storedKDF: nil, cost: cost, creatingKeyFile: true)
            let check = sealer.makeCheck()
            do {
                let db = try SQLiteConnection(path: temporary, busyTimeoutMilliseconds: busyMilliseconds)
                defer { db.close() }
                try db.exec("PRAGMA journal_mode=WAL")
                try db.exec("BEGIN IMMEDIATE")
                do throws(SecureStoreError) {
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
                    try writeMeta(db, sealer, check: check)
                    try db.exec("COMMIT")
                } catch {
                    try? db.exec("ROLLBACK")
                    throw error
                }
            }
            guard link(temporary, path) == 0 else {
                let code = errno
                if code == EEXIST { return nil }
                throw SecureStoreError(code == EACCES || code == EROFS ? .readOnly : .io,
                                       "Could not create the store file \(path): \(String(cString: strerror(code))).")
            }
            let db = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyMilliseconds)
            let connection = Connection(db: db, sealer: sealer, epoch: check)
            try connection.configure()
            return connection
        }

        /// Opens an existing store; nothing is written before the key check passed.
        static func open(path: String, key: SQLiteKey, cost: PassphraseCost, busyMilliseconds: Int32,
                         readOnly: Bool = false) throws(SecureStoreError) -> Connection
        {
            let db = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyMilliseconds, readOnly: readOnly)
            if try !hasSchema(db) {
                guard try integer(db, "SELECT count(*) FROM sqlite_master") == 0 else {
                    throw SecureStoreError(.decode,
                        "The file is a SQLite database of another program, not a SecureStore store; refusing to touch it.")
                }
                throw SecureStoreError(.decode, "The file \(path) is an empty database: it holds no SecureStore store. "
                    + "To start a new store at this path, remove the file first.")
            }
            let version = try integer(db, "PRAGMA user_version")
            guard version <= SQLiteBackend.schemaVersion else {
                throw SecureStoreError(.notAvailable,
                    "The store was written by a newer SecureStore (schema \(version); this one reads up to \(SQLiteBackend.schemaVersion)). Upgrade SecureStore.")
            }
            guard version >= 1 else {
                throw SecureStoreError(.decode, "The store file has an unknown schema version \(version).")
            }
            let check = try meta(db, "check")
            // The store exists: its key file must too (never a new key for it).
            let sealer = try RecordSealer.open(key, storedKDF: try meta(db, "kdf"), check: check, cost: cost,
                                               slot: keyringSlot(path), creatingKeyFile: false)
            let connection = Connection(db: db, sealer: sealer, epoch: check ?? [])
            try connection.configure(readOnly: readOnly)
            if version < SQLiteBackend.schemaVersion, !readOnly {
                // The upgrade from 1: only the version changes (records of both versions are read).
                try db.exec("PRAGMA user_version = \(SQLiteBackend.schemaVersion)")
            }
            return connection
        }

        /// The kernel-keyring slot of the store at `path` (named by its real path); nil when it cannot be resolved.
        static func keyringSlot(_ path: String) -> KeyringSlot? {
            guard let real = realpath(path, nil) else { return nil }
            defer { free(real) }
            return KeyringSlot(store: "sqlite " + String(cString: real))
        }

        /// Keeps the master key in the kernel keyring for `seconds` (see ``SQLiteBackend/unlock(for:)``).
        func unlock(seconds: UInt32, path: String) throws(SecureStoreError) {
            guard let slot = Self.keyringSlot(path) else {
                throw SecureStoreError(.io, "Cannot resolve the store path \(path) to name its cached key.")
            }
            try sealer.unlock(slot, check: try Self.meta(db, "check"), seconds: seconds)
        }

        /// Connection settings (none of them writes to the file once it is in WAL mode; a read-only
        /// connection leaves the journal mode as it is).
        private func configure(readOnly: Bool = false) throws(SecureStoreError) {
            if readOnly { return }
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

        /// Writes the KDF parameters and `check` (the new key epoch).
        private static func writeMeta(_ db: SQLiteConnection, _ sealer: RecordSealer, check: [UInt8]) throws(SecureStoreError) {
            try db.query("DELETE FROM meta WHERE k = 'kdf'")
            if let kdf = sealer.kdfParameters {
                try db.query("INSERT INTO meta(k, v) VALUES ('kdf', ?)", [.blob(kdf)])
            }
            try db.query("INSERT OR REPLACE INTO meta(k, v) VALUES ('check', ?)", [.blob(check)])
        }

        func transaction<T>(writing: Bool, _ body: () throws(SecureStoreError) -> T) throws(SecureStoreError) -> T {
            // Cached prepared statements (sqlite3_exec would parse the SQL on every transaction).
            try db.query(writing ? "BEGIN IMMEDIATE" : "BEGIN")
            do throws(SecureStoreError) {
                // The key epoch, read under the transaction's lock (the write lock for a writer): a store re-keyed
                // since this connection opened it fails here, before a row is sealed or opened with the old key.
                // One indexed read of a tiny row on a cached statement.
                let stored: [UInt8]? = if case .blob(let b)? = try db.query(Self.selectCheck).first?.first { b } else { nil }
                try RecordSealer.requireSameEpoch(stored: stored, opened: epoch)
                let result = try body()
                try db.query("COMMIT")
                return result
            } catch {
                try? db.exec("ROLLBACK")
                throw error
            }
        }

        // MARK: Rows

        /// Decrypts one `selectColumns` row.
        private func record(from row: [SQLValue], sealer: RecordSealer? = nil) throws(SecureStoreError)
            -> (id: Int64, record: ItemRecord)
        {
            guard row.count == 5, case .integer(let id) = row[0], case .integer(let cls) = row[1],
                  case .blob(let ref) = row[2], case .blob(let ukey) = row[3], case .blob(let blob) = row[4]
            else {
                throw SecureStoreError(.decode, "A stored item has a damaged row: the file was altered or corrupted.")
            }
            return (id, try (sealer ?? self.sealer).open(cls: cls, ref: ref, ukey: ukey, blob: blob, id: id))
        }

        func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
            var rows: [[SQLValue]]
            if let ref = filter.persistentRef {
                rows = try db.query(Self.selectColumns + " WHERE ref = ? ORDER BY id", [.blob(sealer.refIndex(ref))])
            } else if let uniqueKeys = filter.uniqueKeys {
                rows = []
                for key in Set(uniqueKeys) {
                    rows += try db.query(Self.selectByUniqueKey,
                                         [.blob(sealer.uniqueKeyIndex(key))])
                }
            } else if let cls = filter.itemClass {
                let number = RecordSealer.classNumber(cls)
                if let service = filter.equalities[.service] {
                    rows = try db.query(Self.selectColumns + " WHERE svc = ? AND cls = ? ORDER BY id",
                                        [.blob(sealer.attributeIndex(.service, service)), .integer(number)])
                } else if let account = filter.equalities[.account] {
                    rows = try db.query(Self.selectColumns + " WHERE acct = ? AND cls = ? ORDER BY id",
                                        [.blob(sealer.attributeIndex(.account, account)), .integer(number)])
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
            let newSealer = try RecordSealer.make(newKey, storedKDF: nil, cost: cost)
            let newCheck = newSealer.makeCheck()
            try transaction(writing: true) { () throws(SecureStoreError) in
                let rows = try db.query(Self.selectColumns + " ORDER BY id")
                for row in rows {
                    let (id, record) = try record(from: row)
                    let new = newSealer.seal(record)
                    try db.query("UPDATE items SET ref = ?, ukey = ?, svc = ?, acct = ?, blob = ? WHERE id = ?",
                                 [.blob(new.ref), .blob(new.ukey), .blob(new.svc), .blob(new.acct), .blob(new.blob),
                                  .integer(id)])
                }
                try Self.writeMeta(db, newSealer, check: newCheck)
            }
            sealer = newSealer
            epoch = newCheck
        }
    }
}

struct UncheckedBox<Value>: @unchecked Sendable {   // crosses the lock boundary only; never shared
    let value: Value
    init(_ value: Value) { self.value = value }
}
