import Foundation
import SecureStoreCore
@testable import SecureStoreSQLite
import CSQLite
import TestSupport

/// A fresh temporary folder, removed by `cleanUp()`.
struct Scratch {
    let dir: URL
    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("securestore-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    var db: String { dir.appendingPathComponent("store.db").path }
    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
    func cleanUp() { try? FileManager.default.removeItem(at: dir) }
}

/// The secret of the generic password with this service and account (nil when absent; throws when unreadable).
func secret(_ store: SQLiteStore, _ service: String, _ account: String) throws(SecureStoreError) -> Data? {
    try store.items(matching: ItemQuery(.genericPassword, generic(service, account), returning: .data)).first?.data
}

/// Direct SQL on a store file, bypassing the backend (for tampering and integrity checks).
final class RawDB {
    var db: OpaquePointer?
    init(_ path: String) {
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    }
    deinit { sqlite3_close_v2(db) }

    func rows(_ sql: String) -> [[Data]] {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(stmt) }
        var out: [[Data]] = []
        while sqlite3_step(stmt) == SQLITE_ROW {
            var row: [Data] = []
            for c in 0..<sqlite3_column_count(stmt) {
                let n = Int(sqlite3_column_bytes(stmt, c))
                if let p = sqlite3_column_blob(stmt, c), n > 0 { row.append(Data(bytes: p, count: n)) } else { row.append(Data()) }
            }
            out.append(row)
        }
        return out
    }

    func text(_ sql: String) -> String {
        rows(sql).first?.first.flatMap { String(data: $0, encoding: .utf8) } ?? ""
    }

    /// The first column of the first row as an integer (0 when there is none).
    func integer(_ sql: String) -> Int64 {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK else { return 0 }
        defer { sqlite3_finalize(stmt) }
        return sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0
    }

    @discardableResult
    func exec(_ sql: String) -> Int32 { sqlite3_exec(db, sql, nil, nil, nil) }

    func setBlob(id: Int64, _ blob: Data) {
        set("blob", id: id, blob)
    }

    /// Sets `column` of the row `id` to `value`.
    func set(_ column: String, id: Int64, _ value: Data) {
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(db, "UPDATE items SET \(column) = ? WHERE id = ?", -1, &stmt, nil)
        _ = value.withUnsafeBytes { sqlite3_bind_blob(stmt, 1, $0.baseAddress, Int32($0.count), csqlite_transient()) }
        sqlite3_bind_int64(stmt, 2, id)
        sqlite3_step(stmt)
        sqlite3_finalize(stmt)
    }

    /// Flips the bits `mask` of the byte `fromEnd` bytes before the end of `column` in the row `id` (a sealed
    /// part damaged in place); false when there is no such byte.
    @discardableResult
    func flip(_ column: String, id: Int64, fromEnd: Int, mask: UInt8 = 0x10) -> Bool {
        guard var value = rows("SELECT \(column) FROM items WHERE id = \(id)").first?.first, value.count >= fromEnd,
              fromEnd > 0 else { return false }
        value[value.count - fromEnd] ^= mask
        set(column, id: id, value)
        return true
    }
}

/// The worker executable built next to the test bundle.
func workerPath() -> String? { builtExecutablePath("securestore-sqlite-worker") }

/// A running worker process with its stdout collected.
final class Worker {
    let process = Process()
    let pipe = Pipe()
    init(_ arguments: [String], environment: [String: String]? = nil) throws {
        guard let path = workerPath() else {
            throw SecureStoreError(.notAvailable, "securestore-sqlite-worker not built; run swift build --build-tests")
        }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = pipe
        try process.run()
    }

    /// Waits for the process to end; returns its output lines.
    func finish() -> [String] {
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
