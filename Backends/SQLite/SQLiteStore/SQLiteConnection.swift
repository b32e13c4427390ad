import SecureStoreCore
import SecureStoreCrypto
import Foundation
internal import CSQLite

/// A value bound to or read from a statement (the sealed-table layer's value).
typealias SQLValue = TableValue

/// The one file that talks to sqlite3: one connection, cached prepared statements, SQLite result codes
/// mapped to ``SecureStoreError``. Not thread-safe by itself; ``SQLiteBackend`` serializes all use.
final class SQLiteConnection {
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// The statements used last, looked up before `statements`: a write runs three or more (`BEGIN`, the
    /// probe, …, `COMMIT`) whose SQL is the same string each time (constants of the layout), and comparing a string with
    /// itself is one check of its storage, where the dictionary SipHashes the whole SQL text.
    private var recent: [(sql: String, stmt: OpaquePointer)] = []
    let path: String

    /// Whether no transaction is open (SQLite's autocommit mode): a statement then runs in one of its own.
    var autocommit: Bool { sqlite3_get_autocommit(db) != 0 }

    /// Opens an existing database file read-write (the caller creates the file with the right mode), or
    /// read-only.
    ///
    /// Read-only: when the file has no (or an empty) `-wal` file, nobody has it open for writing, and it is
    /// opened `immutable` — no lock, no `-wal` or `-shm` file is created, so it works on a read-only mount and
    /// leaves nothing next to an imported export. Otherwise a plain read-only connection reads the live WAL.
    init(path: String, busyTimeoutMilliseconds: Int32, readOnly: Bool = false) throws(SecureStoreError) {
        self.path = path
        var handle: OpaquePointer?
        let rc: Int32
        var walSize = stat()
        if readOnly, stat(path + "-wal", &walSize) != 0 || walSize.st_size == 0 {
            let uri = "file:" + Self.uriPath(path) + "?mode=ro&immutable=1"
            rc = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        } else {
            rc = sqlite3_open_v2(path, &handle, (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX, nil)
        }
        db = handle
        guard rc == SQLITE_OK else {
            let error = SQLiteConnection.error(rc, handle, context: "open the store")
            sqlite3_close_v2(handle)
            db = nil
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        // A hostile file (an import, a planted store) must not make SQLite build huge values or statements:
        // no value this library writes exceeds ~1.6 MiB (a 1 MiB secret inside a record of older schemas,
        // attribute values of at most 16 KiB each), and its statements are a few KiB. Beyond these a file's
        // content is damage (decode), not a reason to allocate gigabytes.
        sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, Self.maxValueBytes)
        sqlite3_limit(handle, SQLITE_LIMIT_SQL_LENGTH, Self.maxStatementBytes)
    }

    /// The largest string or blob SQLite builds on this connection (`SQLITE_LIMIT_LENGTH`).
    static let maxValueBytes: Int32 = 8 << 20
    /// The longest SQL text it parses, the file's own schema included (`SQLITE_LIMIT_SQL_LENGTH`).
    static let maxStatementBytes: Int32 = 1 << 20

    /// `path` for a `file:` URI: every byte outside a safe set percent-encoded.
    private static func uriPath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                 UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    deinit { close() }

    /// Finalizes every statement and closes the connection (idempotent; nothing works afterwards).
    func close() {
        for (_, stmt) in statements { sqlite3_finalize(stmt) }
        statements = [:]
        recent = []
        sqlite3_close_v2(db)
        db = nil
    }

    /// Runs SQL without results (may hold several statements).
    func exec(_ sql: String) throws(SecureStoreError) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw SQLiteConnection.error(rc, db, context: "run \(Self.verb(sql))") }
    }

    /// Runs one statement with `values` bound; returns every row.
    @discardableResult
    func query(_ sql: String, _ values: [SQLValue] = []) throws(SecureStoreError) -> [[SQLValue]] {
        let stmt = try prepared(sql)
        return try withBindings(stmt, values) { () throws(SecureStoreError) in try rows(stmt, sql) }
    }

    /// Every row of `stmt`, stepped to its end.
    private func rows(_ stmt: OpaquePointer, _ sql: String) throws(SecureStoreError) -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw SQLiteConnection.error(rc, db, context: Self.verb(sql)) }
            var row: [SQLValue] = []
            let columns = sqlite3_column_count(stmt)
            for c in 0..<columns {
                switch sqlite3_column_type(stmt, c) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(stmt, c)))
                case SQLITE_NULL: row.append(.null)
                case SQLITE_TEXT:
                    if let text = sqlite3_column_text(stmt, c) {
                        row.append(.text(String(cString: text)))
                    } else {
                        row.append(.text(""))
                    }
                default:
                    let count = Int(sqlite3_column_bytes(stmt, c))
                    if count > 0, let p = sqlite3_column_blob(stmt, c) {
                        row.append(.blob(Array(UnsafeRawBufferPointer(start: p, count: count))))
                    } else {
                        row.append(.blob([]))
                    }
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// Runs one statement selecting `id, cls, ref, ukey, blob, secret, mdat` and calls `body` with each row's
    /// columns in SQLite's own memory (valid until the next step): no row arrays, no column copies.
    func forEachRecordRow(_ sql: String, _ values: [SQLValue], _ body: (RowColumns) throws(SecureStoreError) -> Void)
        throws(SecureStoreError) {
        let stmt = try prepared(sql)
        try withBindings(stmt, values) { () throws(SecureStoreError) in try forEachRecordRow(stmt, sql, body) }
    }

    private func forEachRecordRow(_ stmt: OpaquePointer, _ sql: String, _ body: (RowColumns) throws(SecureStoreError) -> Void)
        throws(SecureStoreError) {
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw SQLiteConnection.error(rc, db, context: Self.verb(sql)) }
            guard sqlite3_column_count(stmt) == 7, sqlite3_column_type(stmt, 0) == SQLITE_INTEGER,
                  sqlite3_column_type(stmt, 1) == SQLITE_INTEGER
            else { throw RowColumns.damagedRow }
            let id = sqlite3_column_int64(stmt, 0)
            // Blobs only; a text or number where a blob belongs is damage (SQLite would convert it silently).
            func blob(_ c: Int32) -> UnsafeRawBufferPointer? {
                guard sqlite3_column_type(stmt, c) == SQLITE_BLOB else { return nil }
                let pointer = sqlite3_column_blob(stmt, c)   // before _bytes, as SQLite's documentation asks
                return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(stmt, c)))
            }
            guard let ref = blob(2), let ukey = blob(3), let sealed = blob(4) else { throw RowColumns.damagedRow }
            func optionalBlob(_ c: Int32) throws(SecureStoreError) -> UnsafeRawBufferPointer? {
                switch sqlite3_column_type(stmt, c) {
                case SQLITE_NULL: return nil
                case SQLITE_BLOB: return blob(c)
                default: throw RowColumns.damagedSecret(id)
                }
            }
            let secret = try optionalBlob(5), mdat = try optionalBlob(6)
            try body(RowColumns(id: id, cls: sqlite3_column_int64(stmt, 1), ref: ref, ukey: ukey, blob: sealed,
                                secret: secret, mdat: mdat))
        }
    }

    /// Runs `body` with `values` bound to `stmt`, then resets the statement and clears its bindings.
    ///
    /// Blobs are bound in place (`SQLITE_STATIC`: SQLite reads them where they are instead of copying each
    /// into an allocation of its own): their bytes are laid out in one temporary buffer (on the stack when
    /// small), which lives until the bindings are cleared, before `body` returns or throws.
    private func withBindings<R>(_ stmt: OpaquePointer, _ values: [SQLValue],
                                 _ body: () throws(SecureStoreError) -> R) throws(SecureStoreError) -> R {
        var total = 0
        for case .blob(let bytes) in values { total += bytes.count }
        return try withUnsafeTemporaryAllocation(byteCount: max(1, total), alignment: 1) {
            (storage) throws(SecureStoreError) -> R in
            defer {
                sqlite3_reset(stmt)
                sqlite3_clear_bindings(stmt)   // before `storage` ends: no binding points into it after
            }
            try bind(stmt, values, into: storage)
            return try body()
        }
    }

    private func bind(_ stmt: OpaquePointer, _ values: [SQLValue], into storage: UnsafeMutableRawBufferPointer)
        throws(SecureStoreError) {
        var offset = 0
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(stmt, index)
            case .integer(let n): rc = sqlite3_bind_int64(stmt, index, n)
            case .blob(let bytes) where bytes.isEmpty:
                rc = sqlite3_bind_zeroblob(stmt, index, 0)   // an empty blob, not NULL
            case .blob(let bytes):
                let place = UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + bytes.count)])
                place.copyBytes(from: bytes)
                offset += bytes.count
                rc = sqlite3_bind_blob(stmt, index, place.baseAddress, Int32(bytes.count), nil)   // nil: SQLITE_STATIC
            case .text(let s): rc = sqlite3_bind_text(stmt, index, s, -1, csqlite_transient())
            }
            guard rc == SQLITE_OK else { throw SQLiteConnection.error(rc, db, context: "bind a value") }
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(db)) }

    /// The main database's data version (`SQLITE_FCNTL_DATA_VERSION`, a plain read of the pager's counter):
    /// it changes with every commit to the file, this connection's own at its commit and any other
    /// connection's or process's when this one next starts a transaction; nil when SQLite cannot tell.
    var dataVersion: UInt32? {
        var version: UInt32 = 0
        guard sqlite3_file_control(db, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK else { return nil }
        return version
    }

    private func prepared(_ sql: String) throws(SecureStoreError) -> OpaquePointer {
        let length = sql.utf8.count   // O(1) for native strings: other statements are passed over by length
        for entry in recent where entry.sql.utf8.count == length && entry.sql == sql { return entry.stmt }
        if let stmt = statements[sql] {
            remember(sql, stmt)
            return stmt
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw SQLiteConnection.error(rc, db, context: "prepare \(Self.verb(sql))")
        }
        statements[sql] = stmt
        remember(sql, stmt)
        return stmt
    }

    /// Keeps `stmt` among the last eight statements used (the oldest goes).
    private func remember(_ sql: String, _ stmt: OpaquePointer) {
        if recent.count == 8 { recent.removeFirst() }
        recent.append((sql, stmt))
    }

    private static func verb(_ sql: String) -> String {
        String(sql.prefix(while: { $0 != "(" }).prefix(40))
    }

    /// A ``SecureStoreError`` for a SQLite result code. SQL text and error messages of SQLite never contain
    /// item values (they are always bound), so they may appear in messages.
    static func error(_ rc: Int32, _ db: OpaquePointer?, context: String) -> SecureStoreError {
        let detail = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
        if detail.contains("unsupported file format") || detail.contains("malformed") {
            // A damaged header or schema, whatever the code (found by fuzzing: `SQLITE_ERROR`, and
            // `SQLITE_TOOBIG` while a hostile schema was parsed, surfaced as internal errors).
            return SecureStoreError(.decode, "The store file is not a valid SecureStore database (damaged, or not a database this SQLite can read): \(detail).")
        }
        switch rc & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return SecureStoreError(.io, "The store is busy: another process kept it locked for too long (\(context)). Try again.")
        case SQLITE_FULL:
            return SecureStoreError(.io, "The disk is full (or the store reached its size limit); the store could not \(context). Nothing of this call was saved; free some space and try again.")
        case SQLITE_IOERR:
            return SecureStoreError(.io, "An I/O error occurred while trying to \(context): \(detail).")
        case SQLITE_READONLY:
            // No SQL text in the message: what failed is a write, whatever the statement.
            return SecureStoreError(.readOnly, "The store is open for reading only (the file or its folder cannot be written); nothing was written.")
        case SQLITE_NOTADB, SQLITE_CORRUPT, SQLITE_TOOBIG:
            // TOOBIG: the core keeps every value far below SQLite's 1 GB limit, so only a file's own content (a
            // hostile schema or row, found by fuzzing) can be too big.
            return SecureStoreError(.decode, "The store file is not a valid SecureStore database (damaged or not a database): \(detail).")
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH:
            return SecureStoreError(.notAvailable, "The store file cannot be opened: \(detail).")
        case SQLITE_CONSTRAINT:
            // Only the UNIQUE indexes on the key and reference indexes constrain rows, and the core checks both
            // first: a second item with one of them is what the core itself reports, a duplicate.
            return SecureStoreError(.duplicateItem,
                "The store already holds an item with the same uniqueness key or reference; nothing was written.")
        case SQLITE_NOMEM:
            return SecureStoreError(.allocate, "SQLite ran out of memory while trying to \(context).")
        default:
            return SecureStoreError(.internalError, "SQLite failed to \(context): \(detail) (code \(rc)).")
        }
    }
}
