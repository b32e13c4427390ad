import Foundation
import Synchronization
import CSQLite

// The limits: the same work as a backend, done as directly as possible, timed in the same process.

/// The in-memory limit: a `Dictionary` keyed like the uniqueness key (service, account) behind a `Mutex`.
final class DictionaryLimit: BenchTarget {
    struct Key: Hashable, Sendable {
        let service: String
        let account: String
    }
    private let table = Mutex<[Key: Data]>([:])

    func add(service: String, account: String, secret: Data) throws {
        let key = Key(service: service, account: account)
        let added: Bool = table.withLock { table in
            if table[key] != nil { return false }
            table[key] = secret
            return true
        }
        guard added else { throw BenchFailure("Duplicate item \(service)/\(account).") }
    }

    func lookup(service: String, account: String) throws -> Int {
        let key = Key(service: service, account: account)
        let secret: Data? = table.withLock { $0[key] }
        guard let secret else { throw BenchFailure("No item \(service)/\(account).") }
        return secret.count
    }

    func list(service: String) throws -> Int {
        // No secondary index: a scan, as the backend's class scan.
        let found: [(service: String, account: String)] = table.withLock { table in
            var found: [(service: String, account: String)] = []
            for key in table.keys where key.service == service { found.append((key.service, key.account)) }
            return found
        }
        return found.count
    }

    func update(service: String, account: String, secret: Data) throws {
        let key = Key(service: service, account: account)
        let updated: Bool = table.withLock { table in
            guard table[key] != nil else { return false }
            table[key] = secret
            return true
        }
        guard updated else { throw BenchFailure("No item \(service)/\(account) to update.") }
    }

    func delete(service: String, account: String) throws {
        let key = Key(service: service, account: account)
        let removed: Data? = table.withLock { $0.removeValue(forKey: key) }
        guard removed != nil else { throw BenchFailure("No item \(service)/\(account) to delete.") }
    }

    func clear() throws {
        table.withLock { $0.removeAll() }
    }

    func storageBytes() throws -> Int? { nil }
    func close() {}
}

/// The SQLite limit: sqlite3 and libsodium called directly. One table with a unique index on a keyed
/// 32-byte BLAKE2b hash of (service, account) and an index on the service hash; each value sealed with
/// XChaCha20-Poly1305 (or stored plain); the backend's durability settings (WAL, synchronous=FULL,
/// secure_delete=ON), one transaction per write.
final class RawSQLiteLimit: BenchTarget {
    private var db: OpaquePointer?
    private let path: String
    private let sealer: RawSealer
    private var statements: [OpaquePointer] = []
    private var insertStmt: OpaquePointer?
    private var selectStmt: OpaquePointer?
    private var listStmt: OpaquePointer?
    private var updateStmt: OpaquePointer?
    private var deleteStmt: OpaquePointer?
    private var clearStmt: OpaquePointer?
    private var sealed: [UInt8] = []

    init(path: String, encrypted: Bool) throws {
        self.path = path
        sealer = try RawSealer(encrypted: encrypted)
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
                == SQLITE_OK
        else { throw BenchFailure("Cannot open \(path).") }
        sqlite3_busy_timeout(db, 10_000)
        try exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA secure_delete=ON;")
        try exec("""
            CREATE TABLE items(id INTEGER PRIMARY KEY, khash BLOB NOT NULL, svc BLOB NOT NULL, value BLOB NOT NULL);
            CREATE UNIQUE INDEX items_khash ON items(khash);
            CREATE INDEX items_svc ON items(svc);
            """)
        insertStmt = try prepare("INSERT INTO items(khash, svc, value) VALUES (?, ?, ?)")
        selectStmt = try prepare("SELECT value FROM items WHERE khash = ?")
        listStmt = try prepare("SELECT value, khash FROM items WHERE svc = ? ORDER BY id")
        updateStmt = try prepare("UPDATE items SET value = ? WHERE khash = ?")
        deleteStmt = try prepare("DELETE FROM items WHERE khash = ?")
        clearStmt = try prepare("DELETE FROM items")
    }

    deinit { close() }

    func close() {
        for stmt in statements { sqlite3_finalize(stmt) }
        statements = []
        if db != nil { sqlite3_close_v2(db) }
        db = nil
        sealer.wipe()
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw failure("run \(sql.prefix(30))") }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil) == SQLITE_OK,
              let stmt
        else { throw failure("prepare \(sql)") }
        statements.append(stmt)
        return stmt
    }

    private func failure(_ what: String) -> BenchFailure {
        BenchFailure("sqlite3 could not \(what): \(String(cString: sqlite3_errmsg(db)))")
    }

    private func hash(_ parts: [String]) -> [UInt8] { sealer.hash(parts) }

    private func seal(_ secret: Data, service: String, account: String, ad: [UInt8]) -> [UInt8] {
        sealer.seal(secret, service: service, account: account, ad: ad)
    }

    /// Opens column 0 of the current row; returns the secret's length.
    private func open(_ stmt: OpaquePointer?, ad: [UInt8]?) throws -> Int {
        let count = Int(sqlite3_column_bytes(stmt, 0))
        guard let blob = sqlite3_column_blob(stmt, 0) else { throw BenchFailure("An empty value.") }
        return try sealer.open(blob.assumingMemoryBound(to: UInt8.self), count: count, ad: ad)
    }

    // MARK: Operations

    private func bind(_ stmt: OpaquePointer?, _ index: Int32, _ bytes: [UInt8]) {
        sqlite3_bind_blob(stmt, index, bytes, Int32(bytes.count), csqlite_transient())
    }

    /// Steps a write statement to completion (autocommit: one transaction, synced at commit).
    private func run(_ stmt: OpaquePointer?, _ what: String) throws -> Int {
        defer {
            sqlite3_reset(stmt)
            sqlite3_clear_bindings(stmt)
        }
        guard sqlite3_step(stmt) == SQLITE_DONE else { throw failure(what) }
        return Int(sqlite3_changes(db))
    }

    func add(service: String, account: String, secret: Data) throws {
        let khash = hash([service, account])
        bind(insertStmt, 1, khash)
        bind(insertStmt, 2, hash([service]))
        bind(insertStmt, 3, seal(secret, service: service, account: account, ad: khash))
        _ = try run(insertStmt, "insert")
    }

    func lookup(service: String, account: String) throws -> Int {
        let khash = hash([service, account])
        bind(selectStmt, 1, khash)
        defer {
            sqlite3_reset(selectStmt)
            sqlite3_clear_bindings(selectStmt)
        }
        guard sqlite3_step(selectStmt) == SQLITE_ROW else { throw BenchFailure("No item \(service)/\(account).") }
        return try open(selectStmt, ad: khash)
    }

    func list(service: String) throws -> Int {
        bind(listStmt, 1, hash([service]))
        defer {
            sqlite3_reset(listStmt)
            sqlite3_clear_bindings(listStmt)
        }
        var count = 0
        while true {
            let rc = sqlite3_step(listStmt)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw failure("list") }
            count += 1
            _ = try openListed()
        }
        return count
    }

    /// A listed row: column 0 the value, column 1 its key hash (the AD it was sealed with).
    private func openListed() throws -> Int {
        let adBytes = Int(sqlite3_column_bytes(listStmt, 1))
        guard let adPointer = sqlite3_column_blob(listStmt, 1) else { throw BenchFailure("A row without key hash.") }
        let ad = Array(UnsafeRawBufferPointer(start: adPointer, count: adBytes))
        return try open(listStmt, ad: ad)
    }

    func update(service: String, account: String, secret: Data) throws {
        let khash = hash([service, account])
        bind(updateStmt, 1, seal(secret, service: service, account: account, ad: khash))
        bind(updateStmt, 2, khash)
        guard try run(updateStmt, "update") == 1 else { throw BenchFailure("No item \(service)/\(account) to update.") }
    }

    func delete(service: String, account: String) throws {
        bind(deleteStmt, 1, hash([service, account]))
        guard try run(deleteStmt, "delete") == 1 else { throw BenchFailure("No item \(service)/\(account) to delete.") }
    }

    func clear() throws {
        _ = try run(clearStmt, "clear")
    }

    func storageBytes() throws -> Int? {
        try SQLiteFile.checkpointedSize(path)
    }
}
