public import SecureStoreCore
import Foundation
public import SecureStoreCrypto

/// Records in one SQLite file, every secret and attribute sealed with XChaCha20-Poly1305 and found through
/// keyed blind indexes. See `Backends/SQLite/FORMAT.md` for the file format.
///
/// One connection for writers (and everything but copy queries), serialized by a lock (`Locked`), and up to
/// ``readerConnections`` more for copy queries (``findRecords(_:)``), opened on demand, so reads run beside
/// each other and beside a writer, as WAL allows; other processes are kept apart by SQLite's own locks (WAL,
/// `BEGIN IMMEDIATE` for writers, a busy timeout).
public final class SQLiteBackend: StorageBackend {
    /// The schema version this code writes (`PRAGMA user_version`). Version 1 to 4 files are read as they
    /// are, and upgraded to version 5 by the first writing transaction, inside it (all or nothing); a store
    /// opened for reading only is never upgraded (see FORMAT.md).
    public static let schemaVersion: Int64 = 5

    private let state: Locked<Connection>
    public let path: String
    /// How many connections copy queries may open besides the writer's (0 for a store opened read-only).
    public let readerConnections: Int
    /// The reader connections not in use, how many are open, and the key generation they were opened with.
    private let readers = Locked<Readers>(Readers())

    struct Readers {
        var idle: [Connection] = []
        var open = 0
        /// Bumped by this object's rekey and export seal: a reader of an older generation is closed.
        var generation = 0
        /// The writer's keys and schema version, for a new reader (kept here so that opening one never waits
        /// for the writer's lock, which a writer holds for its whole transaction).
        var keys: (sealer: RecordSealer, epoch: [UInt8], version: Int64, file: FileIdentity?)?
    }

    /// The default number of reader connections.
    public static let defaultReaderConnections = 2

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
    ///
    /// - Parameter readerConnections: connections copy queries may open besides the writer's (default 2, 0
    ///   to 16), so that lookups of one store object run at once and never wait for its writer.
    public init(path: String, key: StoreKey, passphraseCost: PassphraseCost = .interactive,
                busyTimeout: Duration = .seconds(10), readOnly: Bool = false,
                readerConnections: Int = SQLiteBackend.defaultReaderConnections) throws(SecureStoreError) {
        try Self.checkPath(path)
        guard (0...16).contains(readerConnections) else {
            throw .param("readerConnections", "A SQLite store has 0 to 16 reader connections.")
        }
        self.path = path
        self.busyTimeout = busyTimeout
        let ms = Int32(clamping: busyTimeout.wholeMilliseconds)
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
                diskFull = false
                self.readerConnections = readerConnections
                readers.withLock { $0.keys = (created.sealer, created.epoch, created.version, created.file?.identity) }
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
        if !readOnly { try Files.checkLocks(path, what: "store file") }
        // Writing needs the file and its folder (SQLite creates -wal and -shm next to the file).
        let folderWritable = access(folder.isEmpty ? "." : folder, W_OK | X_OK) == 0
        let readOnly = readOnly || access(path, W_OK) != 0 || !folderWritable
        var connection: Connection
        var full = false
        do throws(SecureStoreError) {
            connection = try Connection.open(path: path, key: key, cost: passphraseCost, busyMilliseconds: ms,
                                             readOnly: readOnly, checked: FileIdentity(info))
        } catch {
            if !readOnly, error.code == .io, Files.isFull(folder.isEmpty ? "." : folder) {
                // A full disk: SQLite cannot even make its shared-memory file to read (it says "disk I/O error").
                // Read without writing anything; a write then says the disk is full.
                do throws(SecureStoreError) {
                    connection = try Connection.open(path: path, key: key, cost: passphraseCost, busyMilliseconds: ms,
                                                     readOnly: true, checked: FileIdentity(info))
                } catch where error.code == .io || error.code == .notAvailable {
                    throw SecureStoreError(.io, "The disk holding \(path) is full (no space left on the device), and "
                        + "reading this store needs SQLite's shared-memory file (-shm) next to it. Free some space, "
                        + "then try again. (\(error.message))")
                }
                full = true
            } else {
                guard !folderWritable, error.code == .notAvailable || error.code == .readOnly || error.code == .io else {
                    throw error
                }
            throw SecureStoreError(error.code, "The store \(path) cannot be read: its folder \(folder) is not writable, "
                + "and SQLite needs to create files there (\((real as NSString).lastPathComponent)-shm) to read a store "
                + "whose write-ahead log (-wal) is not merged yet. Make the folder writable (chmod u+w \(folder)) and open "
                + "the store once, or copy the store files to a folder you can write. (\(error.message))")
            }
        }
        self.readOnly = readOnly || full
        diskFull = full
        self.readerConnections = readOnly || full ? 0 : readerConnections
        readers.withLock { $0.keys = (connection.sealer, connection.epoch, connection.version, connection.file?.identity) }
        state = Locked(connection)
    }

    /// Whether the store was opened for reading only because its disk is full.
    private let diskFull: Bool

    /// Refuses, before anything is created, a store path that is no file: an empty one, and SQLite's
    /// `:memory:` (a database that lives in one connection: SQLite would give a store that forgets everything,
    /// or a file `./:memory:` that later opens as an empty database).
    package static func checkPath(_ path: String) throws(SecureStoreError) {
        guard !path.isEmpty else {
            throw .param("path", "The store path is empty; give the path of the store file (or leave \"path\" out "
                + "for the default).")
        }
        guard (path as NSString).lastPathComponent != ":memory:" else {
            throw .param("path", "The store path \(path) names SQLite's in-memory database, not a file: a store there "
                + "would keep nothing. Give a file path, or use the memory backend to keep nothing on purpose.")
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

    /// Its readers and one writer: ``readerConnections`` copy queries at once beside one writing transaction
    /// (writers, and reads inside a write, take the writer's connection one at a time).
    public var concurrency: Int { readerConnections + 1 }

    /// Test hook: caps the database at `pages` pages (`PRAGMA max_page_count`), so a test can fill the
    /// "disk" and check that SQLITE_FULL becomes errSecIO with the store intact.
    package func limitPagesForTesting(_ pages: Int) throws(SecureStoreError) {
        let outcome: Result<Void, SecureStoreError> = state.withLock { connection in
            Result { () throws(SecureStoreError) in try connection.db.exec("PRAGMA max_page_count = \(pages)") }
        }
        try outcome.get()
    }

    /// Test hook: how many writing transactions read the stored key epoch (the others knew, by the file's data
    /// version, that nothing else had committed since their last check).
    package var epochReadsForTesting: Int { state.withLock { $0.epochReads } }

    public var backendDescription: String { "sqlite \(path)" }

    /// SQLite transactions (WAL, `synchronous=FULL`), shared by the processes of this machine; the file is
    /// not for several machines (no network file systems).
    public static let guarantees = StorageGuarantees(atomicWrites: true, acrossProcesses: .full,
                                                     acrossMachines: .notShared, durableOnReturn: true,
                                                     insertionOrder: .storageSequence)

    public func withTransaction<T>(writing: Bool, _ body: (inout Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        if writing, diskFull {
            throw SecureStoreError(.io, "The disk holding \(path) is full (no space left on the device): the store was "
                + "opened for reading only and nothing was written. Free some space, then try again.")
        }
        return try state.withLock { (connection) throws(SecureStoreError) -> T in
            try connection.transaction(writing: writing) { (layout) throws(SecureStoreError) -> T in
                var txn = SealedTransaction(SealedTable(layout: layout, executor: SQLiteExecutor(db: connection.db),
                                                        sealer: connection.sealer, epoch: connection.epoch,
                                                        epochChecked: writing, writingOnlyChangedParts: writing))
                return try body(&txn)
            }
        }
    }

    /// A copy query's find without `BEGIN` and `COMMIT` when it is one statement on a schema 3 file: SQLite
    /// runs a statement outside a transaction in one of its own, which ends when the statement is reset, so
    /// its rows are one consistent snapshot, as in a transaction. The key-epoch check of an empty answer (or
    /// of a row the key cannot open) is then a second read, which can only see the same epoch or a later one:
    /// a store re-keyed by someone else still answers `authFailed`. Anything else runs in a transaction.
    ///
    /// It runs on a reader connection of its own when one is free or can be opened (``readerConnections``),
    /// so it waits neither for another copy query nor for this object's writer; else on the writer's.
    public func findRecords(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        if let (reader, generation) = checkoutReader() {
            do throws(SecureStoreError) {
                let found = try Self.find(filter, on: reader)
                checkinReader(reader, generation: generation)
                return found
            } catch {
                checkinReader(reader.db.autocommit ? reader : nil, generation: generation)
                throw error
            }
        }
        return try state.withLock { (connection) throws(SecureStoreError) -> [ItemRecord] in
            try Self.find(filter, on: connection)
        }
    }

    private static func find(_ filter: RecordFilter, on connection: Connection) throws(SecureStoreError) -> [ItemRecord] {
        if connection.version >= SQLiteBackend.schemaVersion, connection.db.autocommit {
            let table = SealedTable(layout: connection.layout, executor: SQLiteExecutor(db: connection.db),
                                    sealer: connection.sealer, epoch: connection.epoch, epochChecked: false)
            if let found = try table.findInOneStatement(filter) { return found }
        }
        return try connection.transaction(writing: false) { (layout) throws(SecureStoreError) -> [ItemRecord] in
            try SealedTable(layout: layout, executor: SQLiteExecutor(db: connection.db), sealer: connection.sealer,
                            epoch: connection.epoch, epochChecked: false).find(filter)
        }
    }

    /// An idle reader connection, else a new one while fewer than ``readerConnections`` are open (with the
    /// writer's keys and schema version, copied under its lock), else nil (use the writer's connection).
    private func checkoutReader() -> (Connection, Int)? {
        guard readerConnections > 0 else { return nil }
        typealias Keys = (sealer: RecordSealer, epoch: [UInt8], version: Int64, file: FileIdentity?)
        let taken: (Connection?, Keys?, Int)? = readers.withLock { r in
            if let idle = r.idle.popLast() { return (idle, nil, r.generation) }
            guard r.open < readerConnections, let keys = r.keys else { return nil }
            r.open += 1
            return (nil, keys, r.generation)
        }
        guard let (idle, keys, generation) = taken else { return nil }
        if let idle { return (idle, generation) }
        let opened = keys.flatMap { keys in
            try? Connection.reader(path: path, file: keys.file, busyMilliseconds: Int32(clamping: busyTimeout.wholeMilliseconds),
                                   sealer: keys.sealer, epoch: keys.epoch, version: keys.version) ?? nil
        }
        guard let opened else {
            readers.withLock { $0.open -= 1 }
            return nil
        }
        return (opened, generation)
    }

    /// Returns a reader for reuse, or closes it (nil: broken; or opened before a rekey or seal of this object).
    private func checkinReader(_ reader: Connection?, generation: Int) {
        let keep = readers.withLock { r in
            guard let reader, generation == r.generation else {
                if generation == r.generation { r.open -= 1 }
                return false
            }
            r.idle.append(reader)
            return true
        }
        if !keep { reader?.db.close() }
    }

    /// Closes every idle reader and retires the ones in use (they close when they come back): after a rekey
    /// they hold the old key; before an export's seal changes the journal mode, no other connection may be open.
    private func retireReaders() {
        let idle: [Connection] = readers.withLock { r in
            defer {
                r.idle = []
                r.open = 0
                r.generation += 1
            }
            return r.idle
        }
        for reader in idle { reader.db.close() }
    }

    /// Re-encrypts every item under `newKey` (new blind indexes and key check) in one transaction; until it
    /// commits, the old key keeps working.
    public func rekey(to newKey: StoreKey, passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        let outcome: Result<Void, SecureStoreError> = state.withLock { connection in
            let done = Result { () throws(SecureStoreError) in try connection.rekey(to: newKey, cost: passphraseCost) }
            if case .success = done {
                readers.withLock { $0.keys = (connection.sealer, connection.epoch, connection.version, connection.file?.identity) }
            }
            return done
        }
        try outcome.get()
        retireReaders()
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

    // MARK: Export files

    /// Seals the whole file (an export, FORMAT.md "Export files") and makes it one self-contained file: the
    /// seal over the key parameters and every row in id order goes into `meta` (`seal`), then the
    /// write-ahead log is merged and the journal mode set to DELETE, so the file alone holds everything (it is
    /// then linked into place by the caller). Call it once every item is in.
    package func sealWhole() throws(SecureStoreError) {
        retireReaders()
        let outcome: Result<Void, SecureStoreError> = state.withLock { connection in
            Result { () throws(SecureStoreError) in
                try connection.transaction(writing: true) { (_) throws(SecureStoreError) in
                    let seal = try connection.wholeSeal()
                    try connection.db.query("INSERT OR REPLACE INTO meta(k, v) VALUES ('seal', ?)", [.blob(seal)])
                }
                try connection.db.exec("PRAGMA journal_mode=DELETE")
            }
        }
        try outcome.get()
    }

    /// Every record of a sealed file (an export), in insertion order, read in the same snapshot as the seal is
    /// checked: `decode` when the file has no seal (made by a SecureStore before export seals, or the seal was
    /// removed) or the seal does not match (a row missing, added, changed, reordered or replayed).
    package func sealedRecords() throws(SecureStoreError) -> [ItemRecord] {
        try state.withLock { (connection) throws(SecureStoreError) -> [ItemRecord] in
            try connection.transaction(writing: false) { (layout) throws(SecureStoreError) -> [ItemRecord] in
                let stored = try connection.db.query("SELECT v FROM meta WHERE k = 'seal'")
                guard case .blob(let seal)? = stored.first?.first else {
                    throw SecureStoreError(.decode, "The file \(path) has no whole-file seal: it was not made by this "
                        + "version's export (older exports were not sealed as a whole), or it was altered. Nothing was "
                        + "imported. An older export can still be opened as a store: see FORMAT.md, Export files.")
                }
                guard connection.version >= 3, RecordSealer.sameSeal(seal, try connection.wholeSeal()) else {
                    throw SecureStoreError(.decode, "The file \(path) does not match its seal: an item was removed, "
                        + "added, changed, reordered or replayed since it was exported. Nothing was imported.")
                }
                return try SealedTable(layout: layout, executor: SQLiteExecutor(db: connection.db),
                                       sealer: connection.sealer, epoch: connection.epoch, epochChecked: false)
                    .all().map(\.record)
            }
        }
    }

    /// Test hook: SQLite's plan (`EXPLAIN QUERY PLAN`, a line per step) of each statement that finds `filter`'s
    /// candidates in this store's schema.
    func queryPlans(_ filter: RecordFilter) throws(SecureStoreError) -> [String] {
        let outcome: Result<[String], SecureStoreError> = state.withLock { connection in
            Result { () throws(SecureStoreError) -> [String] in
                let table = SealedTable(layout: connection.layout, executor: SQLiteExecutor(db: connection.db),
                                        sealer: connection.sealer, epoch: connection.epoch, epochChecked: true)
                return try table.readStatements(filter).map { (statement) throws(SecureStoreError) -> String in
                    try connection.db.query("EXPLAIN QUERY PLAN " + statement.sql, statement.parameters).map { row in
                        row.compactMap { if case .text(let t) = $0 { t } else { nil } }.joined(separator: " ")
                    }.joined(separator: "\n")
                }
            }
        }
        return try outcome.get()
    }

    // MARK: Transaction

    /// The backend's view of the `items` table inside one SQLite transaction: the shared sealed-table layer
    /// over this connection.
    public typealias Transaction = SealedTransaction
}

/// Runs the sealed-table layer's statements on this connection.
struct SQLiteExecutor: SealedTableExecutor {
    let db: SQLiteConnection

    func rows(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) -> [[TableValue]] {
        try db.query(sql, parameters)
    }

    func run(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) -> Int {
        try db.query(sql, parameters)
        return db.changes
    }

    func forEachRecordRow(_ sql: String, _ parameters: [TableValue],
                          _ body: (RowColumns) throws(SecureStoreError) -> Void) throws(SecureStoreError) {
        try db.forEachRecordRow(sql, parameters, body)
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

        /// The file's schema version as this connection last saw it, and the statements that go with it.
        private(set) var version: Int64
        private(set) var layout: SealedTableLayout

        /// The statements of the shared sealed-table layer on this file's `items` and `meta` tables (schema 5;
        /// schema 4 is read with them: its tables differ only in indexes). Every row keeps the room of a sealed
        /// modification date (``RecordSealer/noDateApart``), so a change of secret rewrites it in place.
        static let layout = SealedTableLayout(items: "items", meta: "meta", scope: nil, numbered: false,
                                              reservesDate: true)
        /// The same for a schema 3 file (no `mdat` column), which is only read.
        static let layout3 = SealedTableLayout(items: "items", meta: "meta", scope: nil, numbered: false, columns: .withSecret)
        /// The same for a schema 1 or 2 file (no `secret` column), which is only read.
        static let legacyLayout = SealedTableLayout(items: "items", meta: "meta", scope: nil, numbered: false, columns: .recordOnly)

        /// The statements of a file of schema `version`.
        static func layout(version: Int64) -> SealedTableLayout {
            version >= 4 ? layout : version == 3 ? layout3 : legacyLayout
        }

        /// The indexes of schema 5, three, each one a plan uses (`SQLiteStoreTests.queryPlans`): reference and
        /// unique key, both UNIQUE (the core checks uniqueness first; the index backs it up), and service with
        /// account, which finds a service's items, a service and account's, and an internet password's account
        /// (whose service column is the default's in every row). Every add and delete writes an entry in each;
        /// schemas 3 and 4 had a service index and an account index, one page more per write. A generic password
        /// found by account without a service reads the table's rows in id order, comparing the blind-index
        /// columns (no decryption), as a find by class alone does.
        static let indexes = """
            CREATE UNIQUE INDEX IF NOT EXISTS items_ref ON items(ref);
            CREATE UNIQUE INDEX IF NOT EXISTS items_ukey ON items(ukey);
            CREATE INDEX IF NOT EXISTS items_svc_acct ON items(svc, acct);
            """

        /// The file this connection opened, and its path: a writer checks under the write lock that the path
        /// still names this file.
        private(set) var file: (path: String, identity: FileIdentity)?

        private init(db: SQLiteConnection, sealer: RecordSealer, epoch: [UInt8], version: Int64) {
            self.db = db
            self.sealer = sealer
            self.epoch = epoch
            self.version = version
            self.layout = Self.layout(version: version)
        }

        /// Builds a new store in a private temporary file next to `path` and links it into place (`link`
        /// never replaces or follows anything at `path`). Returns nil, having changed nothing, when something
        /// is at `path` by then.
        static func create(path: String, key: StoreKey, cost: PassphraseCost, busyMilliseconds: Int32)
            throws(SecureStoreError) -> Connection?
        {
            let temporary = Files.temporaryPath(nextTo: path)
            guard try Files.createExclusive(temporary, shownAs: path) else {
                throw SecureStoreError(.io, "Could not create the store file \(path): \(temporary) is in the way.")
            }
            defer { for name in [temporary, temporary + "-wal", temporary + "-shm"] { unlink(name) } }
            let sealer: RecordSealer
            let check: [UInt8]
            do {
                let db = try SQLiteConnection(path: temporary, busyTimeoutMilliseconds: busyMilliseconds)
                defer { db.close() }
                try db.exec("PRAGMA journal_mode=WAL")
                try db.exec("BEGIN IMMEDIATE")
                do throws(SecureStoreError) {
                    try db.exec("""
                        CREATE TABLE meta(k TEXT PRIMARY KEY, v BLOB NOT NULL);
                        CREATE TABLE items(id INTEGER PRIMARY KEY, cls INTEGER NOT NULL, ref BLOB NOT NULL,
                                           ukey BLOB NOT NULL, svc BLOB, acct BLOB, blob BLOB NOT NULL, secret BLOB,
                                           mdat BLOB);
                        \(indexes)
                        PRAGMA user_version = \(SQLiteBackend.schemaVersion);
                        """)
                    (sealer, check) = try layout.createKeyCheck(SQLiteExecutor(db: db), key: key, cost: cost,
                                                                 what: "The new store")
                    try db.exec("COMMIT")
                } catch {
                    try? db.exec("ROLLBACK")
                    throw error
                }
            }
            let made = FileIdentity(temporary)
            guard try Files.linkIntoPlace(temporary, at: path, what: "store file") else { return nil }
            let db = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyMilliseconds)
            let connection = Connection(db: db, sealer: sealer, epoch: check, version: SQLiteBackend.schemaVersion)
            guard let made, FileIdentity(path) == made else {   // replaced between the link and the open
                db.close()
                throw SecureStoreError(.notAvailable, "The new store file \(path) was replaced by another program while "
                    + "this one created it; nothing was written to what is there now. Check that file, then try again.")
            }
            connection.file = (path, made)
            try connection.configure()
            return connection
        }

        /// Opens an existing store; nothing is written before the key check passed.
        /// - Parameter checked: the file the caller's owner and mode checks saw at `path`. The path must name it
        ///   right before and right after SQLite opens it: a file moved over the path meanwhile is refused, never
        ///   read (every later write would otherwise be checked against the wrong file).
        static func open(path: String, key: StoreKey, cost: PassphraseCost, busyMilliseconds: Int32,
                         readOnly: Bool = false, checked: FileIdentity) throws(SecureStoreError) -> Connection
        {
            let before = FileIdentity(path)
            let db = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyMilliseconds, readOnly: readOnly)
            guard before == checked, FileIdentity(path) == checked else {
                db.close()
                throw SecureStoreError(.notAvailable, "The store file \(path) was replaced or removed by another program "
                    + "while this one checked and opened it; nothing was read or written. Try again.")
            }
            if try !readingSchema(path, { () throws(SecureStoreError) in try hasSchema(db) }) {
                guard try readingSchema(path, { () throws(SecureStoreError) in
                    try integer(db, "SELECT count(*) FROM sqlite_master")
                }) == 0 else {
                    throw SecureStoreError(.decode,
                        "The file is a SQLite database of another program, not a SecureStore store; refusing to touch it.")
                }
                throw SecureStoreError(.decode, "The file \(path) is an empty database: it holds no SecureStore store. "
                    + "To start a new store at this path, remove the file first.")
            }
            let version = try integer(db, "PRAGMA user_version")
            try SealedTableLayout.checkSchemaVersion(version, supported: SQLiteBackend.schemaVersion, place: "store")
            // The store exists: its key file must too (never a new key for it); no key check is a wrong key.
            guard let opened = try layout.openKeyCheck(SQLiteExecutor(db: db), key: key, cost: cost,
                                                      slot: keyringSlot(path)) else {
                throw SecureStoreError(.authFailed, "The key or passphrase does not open this store.")
            }
            let connection = Connection(db: db, sealer: opened.sealer, epoch: opened.epoch, version: version)
            if !readOnly { connection.file = (path, checked) }
            try connection.configure(readOnly: readOnly)
            return connection
        }

        /// Another connection to this file for copy queries only, with the writer's keys and schema version
        /// (the file's journal mode is WAL already; a reader sets nothing and writes nothing). Nil when the path
        /// no longer names the writer's file (`file`): a reader never reads another copy moved over the path.
        static func reader(path: String, file: FileIdentity?, busyMilliseconds: Int32, sealer: RecordSealer,
                           epoch: [UInt8], version: Int64) throws(SecureStoreError) -> Connection? {
            guard let file, FileIdentity(path) == file else { return nil }
            let db = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyMilliseconds)
            guard FileIdentity(path) == file else {
                db.close()
                return nil
            }
            return Connection(db: db, sealer: sealer, epoch: epoch, version: version)
        }

        /// The kernel-keyring slot of the store at `path` (named by its real path); nil when it cannot be resolved.
        static func keyringSlot(_ path: String) -> KeyringSlot? {
            guard let real = realpath(path, nil) else { return nil }
            defer { free(real) }
            return KeyringSlot(store: "sqlite " + String(cString: real))
        }

        /// Under the write lock: the store's path still names the file this connection opened. Another copy of
        /// the store moved over the path (or the file removed) while this writer waited would otherwise take
        /// its writes into a file nobody can reach any more, and the copy's items would look lost.
        private func requireSameFile() throws(SecureStoreError) {
            guard let file else { return }
            guard FileIdentity(file.path) == file.identity else {
                throw SecureStoreError(.notAvailable, "The store file \(file.path) was replaced or removed by another "
                    + "program since this one opened it; nothing was written. Check what is at that path now, then run "
                    + "the command again.")
            }
        }

        /// Keeps the master key in the kernel keyring for `seconds` (see ``SQLiteBackend/unlock(for:)``).
        func unlock(seconds: UInt32, path: String) throws(SecureStoreError) {
            guard let slot = Self.keyringSlot(path) else {
                throw SecureStoreError(.io, "Cannot resolve the store path \(path) to name its cached key.")
            }
            try sealer.unlock(slot, check: try layout.storedCheck(SQLiteExecutor(db: db)), seconds: seconds)
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

        /// Runs `body`, a first read of the file's schema: SQLite reports a hostile schema it cannot parse as
        /// running out of memory (found by fuzzing), so that is `decode` here, naming the file.
        private static func readingSchema<T>(_ path: String, _ body: () throws(SecureStoreError) -> T)
            throws(SecureStoreError) -> T
        {
            do throws(SecureStoreError) {
                return try body()
            } catch where error.code == .allocate {
                throw SecureStoreError(.decode, "The file \(path) is not a valid SecureStore database: SQLite could not "
                    + "read its schema (\(error.message)).")
            }
        }

        private static func hasSchema(_ db: SQLiteConnection) throws(SecureStoreError) -> Bool {
            try integer(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'items')") == 2
        }

        private static func integer(_ db: SQLiteConnection, _ sql: String) throws(SecureStoreError) -> Int64 {
            if case .integer(let n)? = try db.query(sql).first?.first { return n }
            return 0
        }

        /// Runs `body` in one transaction with the statements of the file's schema. The first writing
        /// transaction on a schema 1 to 4 file upgrades it to schema 5 first, inside the same transaction.
        func transaction<T>(writing: Bool, _ body: (SealedTableLayout) throws(SecureStoreError) -> T)
            throws(SecureStoreError) -> T
        {
            // Cached prepared statements (sqlite3_exec would parse the SQL on every transaction).
            try db.query(writing ? "BEGIN IMMEDIATE" : "BEGIN")
            do throws(SecureStoreError) {
                // A writer reads the key epoch under the write lock: a store re-keyed since this connection opened
                // it fails here, before a row is sealed with the old key. A reader checks it only when a find
                // comes back empty or a row does not open (the sealed-table layer does), as PostgreSQL's do.
                if writing {
                    try requireSameFile()
                    try requireSameEpoch()
                }
                var seen = (version: version, layout: layout)
                if seen.version < SQLiteBackend.schemaVersion {
                    // An old file: another process may have upgraded it since (a file never goes back).
                    seen.version = try Self.integer(db, "PRAGMA user_version")
                    try SealedTableLayout.checkSchemaVersion(seen.version, supported: SQLiteBackend.schemaVersion,
                                                             place: "store")
                    if seen.version < SQLiteBackend.schemaVersion, writing {
                        try upgrade(from: seen.version)
                        seen.version = SQLiteBackend.schemaVersion
                    }
                    seen.layout = Self.layout(version: seen.version)
                }
                let result = try body(seen.layout)
                try db.query("COMMIT")
                (version, layout) = seen
                // The file as this writer left it: the epoch it checked, and its own commit, nobody else's.
                if writing { epochSeenAt = db.dataVersion }
                return result
            } catch {
                try? db.exec("ROLLBACK")
                epochSeenAt = nil
                throw error
            }
        }

        /// The file's data version (``SQLiteConnection/dataVersion``) when this writer last ended a transaction
        /// whose key epoch it had checked; nil when it must check again.
        private var epochSeenAt: UInt32?
        /// Test hook: how many times a writing transaction read the stored key epoch.
        private(set) var epochReads = 0

        /// Under the write lock: the stored key epoch is still this connection's (a store re-keyed by another
        /// object or process since fails here, before a row is sealed with the old key). The epoch changes only
        /// by another connection's commit, which changes the file's data version as this transaction began; when
        /// the version is the one this writer's last transaction left, nothing else committed since and the
        /// check is not read again (−6.9k of 117.6k instructions per update, −4.6k of 130.0k per add:
        /// Benchmarks/results/2026-12-07-write-path.md).
        private func requireSameEpoch() throws(SecureStoreError) {
            if let seen = epochSeenAt, seen == db.dataVersion { return }
            epochSeenAt = nil
            epochReads += 1
            try RecordSealer.requireSameEpoch(stored: try Self.layout.storedCheck(SQLiteExecutor(db: db)), opened: epoch)
        }

        /// Schema 1 to 4 to 5, inside the caller's writing transaction, all or nothing (a failure leaves the file
        /// as it was): from 1 and 2 the `secret` column (their reference and key indexes, not UNIQUE, and class
        /// index dropped); from 1 to 3 the `mdat` column and every record re-sealed in format 4 (the secret and
        /// modification date sealed apart); from every one the service and account indexes replaced by one on
        /// both; then the version. A schema 4 file's rows stay as they are.
        private func upgrade(from version: Int64) throws(SecureStoreError) {
            if version < 3 {
                try db.exec("""
                    ALTER TABLE items ADD COLUMN secret BLOB;
                    DROP INDEX IF EXISTS items_cls; DROP INDEX IF EXISTS items_ref; DROP INDEX IF EXISTS items_ukey;
                    """)
            }
            try db.exec("DROP INDEX IF EXISTS items_svc; DROP INDEX IF EXISTS items_acct")
            if version < 4 {
                try db.exec("ALTER TABLE items ADD COLUMN mdat BLOB")
                try SealedTable(layout: Self.layout(version: version), executor: SQLiteExecutor(db: db), sealer: sealer,
                                epoch: epoch, epochChecked: true).reseal(into: Self.layout, with: sealer)
            }
            do throws(SecureStoreError) {
                try db.exec(Self.indexes)
            } catch {
                guard error.code == .duplicateItem else { throw error }
                throw SecureStoreError(.decode, "The store holds two items with the same uniqueness key or reference: "
                    + "the file was altered. It was not upgraded and nothing was written.")
            }
            try db.exec("PRAGMA user_version = \(SQLiteBackend.schemaVersion)")
        }

        /// The whole-file seal of what the file holds now (``RecordSealer/wholeSeal(kdf:check:rows:)``): the
        /// stored KDF parameters and key check, and every row in id order, every column of the file's schema
        /// (schema 3: without `mdat`, so an export of schema 3 still checks).
        func wholeSeal() throws(SecureStoreError) -> [UInt8] {
            func meta(_ k: String) throws(SecureStoreError) -> [UInt8]? {
                if case .blob(let v)? = try db.query("SELECT v FROM meta WHERE k = ?", [.text(k)]).first?.first { return v }
                return nil
            }
            let schema = try Self.integer(db, "PRAGMA user_version")   // this transaction's, not the last one seen
            let columns = "id, cls, ref, ukey, svc, acct, blob, secret" + (schema >= 4 ? ", mdat" : "")
            let rows = try db.query("SELECT \(columns) FROM items ORDER BY id")
            return try sealer.wholeSeal(kdf: try meta("kdf"), check: try meta("check"), rows: rows)
        }

        // MARK: Rekey

        func rekey(to newKey: StoreKey, cost: PassphraseCost) throws(SecureStoreError) {
            let newSealer = try RecordSealer.make(newKey, storedKDF: nil, cost: cost)
            let newCheck = newSealer.makeCheck()
            try transaction(writing: true) { (layout) throws(SecureStoreError) in
                try SealedTable(layout: layout, executor: SQLiteExecutor(db: db), sealer: sealer, epoch: epoch,
                                epochChecked: true).rekey(to: newSealer, check: newCheck)
            }
            sealer = newSealer
            epoch = newCheck
        }
    }
}

/// A file's device and inode: which file a path names at one moment.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The file `path` names now (a symbolic link followed); nil when there is none.
    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The file `info` describes.
    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
