import Foundation
import SecureStoreCore
import CSQLite

/// One thing whose operations are timed: a `SecureStore` backend, or a limit (the same work done directly).
///
/// Every operation checks its result, so a broken target fails the run instead of timing nothing.
protocol BenchTarget: AnyObject {
    func add(service: String, account: String, secret: Data) throws
    /// The secret's byte count.
    func lookup(service: String, account: String) throws -> Int
    /// Every item of one service, with attributes: how many.
    func list(service: String) throws -> Int
    func update(service: String, account: String, secret: Data) throws
    func delete(service: String, account: String) throws
    func clear() throws
    /// Bytes on disk (database + WAL after a checkpoint), `nil` for memory-only targets.
    func storageBytes() throws -> Int?
    /// Releases the target (closes files) before its folder is removed.
    func close()
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A `SecureStore` under benchmark: every operation is the public API a program would call.
final class StoreTarget: BenchTarget {
    private var store: (any SecureStore)?
    private let databasePath: String?
    private let listReturning: ReturnOptions

    /// - Parameter listWithSecrets: list returns attributes and secrets (the Secret Service's match-all with
    ///   secrets), else attributes only.
    init(_ store: any SecureStore, databasePath: String?, listWithSecrets: Bool = false) {
        self.store = store
        self.databasePath = databasePath
        listReturning = listWithSecrets ? [.attributes, .data] : .attributes
    }

    private func open() throws -> any SecureStore {
        guard let store else { throw BenchFailure("The store was already closed.") }
        return store
    }

    private static func key(_ service: String, _ account: String) -> [AttributeName: AttributeValue] {
        [.service: .string(service), .account: .string(account)]
    }

    func add(service: String, account: String, secret: Data) throws {
        try open().add(NewItem(.genericPassword, Self.key(service, account), data: secret))
    }

    func lookup(service: String, account: String) throws -> Int {
        let item = try open().item(matching: ItemQuery(.genericPassword, Self.key(service, account), returning: .data))
        guard let data = item?.data else { throw BenchFailure("A lookup returned no secret.") }
        return data.count
    }

    func list(service: String) throws -> Int {
        let query = ItemQuery(.genericPassword, [.service: .string(service)], limit: .all, returning: listReturning)
        let items = try open().items(matching: query)
        guard items.allSatisfy({ $0.attributes != nil }) else { throw BenchFailure("A list returned no attributes.") }
        if listReturning.contains(.data) {
            guard items.allSatisfy({ $0.data != nil }) else { throw BenchFailure("A list returned no secrets.") }
        }
        return items.count
    }

    func update(service: String, account: String, secret: Data) throws {
        let changed = try open().update(ItemQuery(.genericPassword, Self.key(service, account)),
                                        with: ItemChanges(data: secret))
        guard changed == 1 else { throw BenchFailure("An update changed \(changed) items.") }
    }

    func delete(service: String, account: String) throws {
        let deleted = try open().delete(ItemQuery(.genericPassword, Self.key(service, account)))
        guard deleted == 1 else { throw BenchFailure("A delete removed \(deleted) items.") }
    }

    func clear() throws {
        try open().clear()
    }

    func storageBytes() throws -> Int? {
        guard let databasePath else { return nil }
        return try SQLiteFile.checkpointedSize(databasePath)
    }

    func close() { store = nil }
}

/// Size of a SQLite database in WAL mode, measured the same way for the backend and the raw limit.
enum SQLiteFile {
    /// Checkpoints the WAL (TRUNCATE) through a connection of its own, then adds the database and WAL sizes.
    static func checkpointedSize(_ path: String) throws -> Int {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            sqlite3_close_v2(db)
            throw BenchFailure("Cannot open \(path) to checkpoint it.")
        }
        defer { sqlite3_close_v2(db) }
        sqlite3_busy_timeout(db, 10_000)
        let rc = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil)
        guard rc == SQLITE_OK else {
            throw BenchFailure("Checkpoint of \(path) failed: \(String(cString: sqlite3_errmsg(db)))")
        }
        return fileSize(path) + fileSize(path + "-wal")
    }

    static func fileSize(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return Int(info.st_size)
    }
}
