import CSQLite

/// Rewrites a SQLite file with small pages, so the export seed is a few KiB that libFuzzer can mutate.
enum SQLiteCompaction {
    struct Failure: Error { let step: String }

    static func compact(_ path: String, pageSize: Int) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { throw Failure(step: "open") }
        defer { sqlite3_close_v2(db) }
        for sql in ["PRAGMA journal_mode=DELETE", "PRAGMA page_size=\(pageSize)", "VACUUM", "PRAGMA journal_mode=WAL"] {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw Failure(step: sql) }
        }
    }
}
