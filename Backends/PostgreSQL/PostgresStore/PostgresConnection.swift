import SecureStore
import CLibPQ
import Foundation

/// A value bound to a statement or read from a result; both travel in libpq's binary format.
enum PGValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case bytes([UInt8])
    case text(String)
    case bool(Bool)
}

/// The rows a statement returned and how many rows it changed.
struct PGRows {
    var rows: [[PGValue]]
    var affected: Int
}

/// One libpq connection. This is the only file of the package that calls libpq.
///
/// Every statement with values is sent with parameters (never spliced into SQL), prepared once per
/// connection, in binary format both ways. Errors become ``SecureStoreError``s by SQLSTATE; their messages
/// carry the server's primary message and never a parameter value, a password or the URL's password.
final class PostgresConnection: @unchecked Sendable {   // used only under the owning backend's lock
    private let conn: OpaquePointer
    /// `host:port` of the server this connection reached, for messages.
    let endpoint: String
    /// The SQLSTATE of the last failed statement (`"40001"` …), for the caller's retry decisions.
    private(set) var lastSQLState: String?
    private var prepared: [String: String] = [:]
    private let statementTimeoutMilliseconds: Int

    /// Connection settings that are not in the URL.
    struct Options: Sendable {
        /// libpq's `connect_timeout` per host, in seconds (libpq's minimum is 2). The URL may override it.
        var connectTimeoutSeconds: Int = 5
        /// `statement_timeout` (and `lock_timeout`) of the session.
        var statementTimeoutMilliseconds: Int = 10_000
        /// Shown in `pg_stat_activity`.
        var applicationName: String = "securestore"
    }

    private init(conn: OpaquePointer, endpoint: String, statementTimeoutMilliseconds: Int) {
        self.conn = conn
        self.endpoint = endpoint
        self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
    }

    deinit { PQfinish(conn) }

    // MARK: Connecting

    /// What a connection URL (or `key=value` string) names, without its password, for messages.
    struct Target: Sendable {
        var hosts: String
        var ports: String
        var database: String
        var user: String
        var hasPassword: Bool

        var description: String {
            let host = hosts.isEmpty ? "the local socket" : hosts
            return "\(host)\(ports.isEmpty ? "" : " port \(ports)")\(database.isEmpty ? "" : ", database \(database)")"
        }
    }

    /// Parses `url` with libpq (so every form libpq accepts works), without connecting.
    static func parse(_ url: String) throws(SecureStoreError) -> Target {
        var error: UnsafeMutablePointer<CChar>? = nil
        guard let options = PQconninfoParse(url, &error) else {
            let message = error.map { String(cString: $0) } ?? "it cannot be parsed"
            if let error { PQfreemem(error) }
            throw .param("url", "The PostgreSQL URL is not a valid libpq connection string: \(oneLine(message))")
        }
        defer { PQconninfoFree(options) }
        var target = Target(hosts: "", ports: "", database: "", user: "", hasPassword: false)
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                let text = String(cString: value)
                switch String(cString: keyword) {
                case "host": target.hosts = text
                case "hostaddr": if target.hosts.isEmpty { target.hosts = text }
                case "port": target.ports = text
                case "dbname": target.database = text
                case "user": target.user = text
                case "password": target.hasPassword = !text.isEmpty
                default: break
                }
            }
            option += 1
        }
        return target
    }

    /// Connects to `url` (a libpq URL or `key=value` string; several hosts give failover), with `password`
    /// when given, and sets the session's timeouts.
    ///
    /// - Throws: `notAvailable` naming the host(s) and libpq's reason when no server accepts the connection
    ///   within the connect timeout; `param` for a malformed URL.
    static func connect(url: String, password: String?, options: Options) throws(SecureStoreError) -> PostgresConnection {
        let target = try parse(url)
        // Earlier keywords are defaults the URL may override; the password comes last and wins.
        var pairs: [(String, String)] = [
            ("connect_timeout", String(max(2, options.connectTimeoutSeconds))),
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "3"), ("keepalives_count", "3"),
            ("tcp_user_timeout", String(max(2, options.connectTimeoutSeconds) * 1000 + options.statementTimeoutMilliseconds)),
            ("application_name", options.applicationName),
            ("dbname", url),
        ]
        if let password { pairs.append(("password", password)) }
        let keywords: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0.0) } + [nil]
        let values: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0.1) } + [nil]
        defer {
            for p in keywords { free(p) }
            for p in values {
                if let p { memset(p, 0, strlen(p)) }   // the password copy
                free(p)
            }
        }
        let connection: OpaquePointer? = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in
                PQconnectdbParams(k.baseAddress, v.baseAddress, 1)
            }
        }
        guard let connection else {
            throw SecureStoreError(.allocate, "libpq could not allocate a connection.")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let reason = oneLine(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw SecureStoreError(.notAvailable, "PostgreSQL at \(target.description) is not available: \(reason)")
        }
        let host = PQhost(connection).map { String(cString: $0) } ?? ""
        let port = PQport(connection).map { String(cString: $0) } ?? ""
        let endpoint = (host.hasPrefix("/") || host.isEmpty ? "socket \(host)" : host) + (port.isEmpty ? "" : ":\(port)")
        let result = PostgresConnection(conn: connection, endpoint: endpoint,
                                        statementTimeoutMilliseconds: options.statementTimeoutMilliseconds)
        let ms = max(1, options.statementTimeoutMilliseconds)
        try result.execute("""
            SET statement_timeout = \(ms); SET lock_timeout = \(ms);
            SET idle_in_transaction_session_timeout = \(max(ms * 6, 60_000));
            SET client_min_messages = warning
            """)
        return result
    }

    /// Whether the connection is still usable (libpq has not seen it break).
    var isOpen: Bool { PQstatus(conn) == CONNECTION_OK }

    /// Whether a transaction is open or failed on this connection.
    var inTransaction: Bool {
        let status = PQtransactionStatus(conn)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    // MARK: Statements

    /// Runs SQL without parameters (one or several statements: `BEGIN`, `COMMIT`, DDL).
    func execute(_ sql: String) throws(SecureStoreError) {
        let result = PQexec(conn, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Commits the open transaction; throws when the server rolled it back instead (an earlier statement
    /// failed), so a caller never takes a rollback for a commit.
    func commit() throws(SecureStoreError) {
        let result = PQexec(conn, "COMMIT")
        defer { PQclear(result) }
        try check(result)
        let tag = result.flatMap { PQcmdStatus($0) }.map { String(cString: $0) } ?? ""
        guard tag == "COMMIT" else {
            throw SecureStoreError(.internalError,
                "PostgreSQL at \(endpoint) rolled the transaction back instead of committing it; nothing was changed.")
        }
    }

    /// Runs one statement with `params` bound as `$1`, `$2`, … (prepared on first use on this connection).
    @discardableResult
    func query(_ sql: String, _ params: [PGValue] = []) throws(SecureStoreError) -> PGRows {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "ss\(prepared.count + 1)"
            let types: [Oid] = params.map(Self.typeOid)
            let result = types.withUnsafeBufferPointer { PQprepare(conn, name, sql, Int32(params.count), $0.baseAddress) }
            defer { PQclear(result) }
            try check(result)
            prepared[sql] = name
        }
        // Binary parameter buffers, freed after the call.
        var buffers: [UnsafeMutableRawPointer?] = []
        var lengths: [Int32] = []
        for param in params {
            let bytes: [UInt8]?
            switch param {
            case .null: bytes = nil
            case .integer(let n): bytes = withUnsafeBytes(of: n.bigEndian) { Array($0) }
            case .bytes(let b): bytes = b
            case .text(let t): bytes = Array(t.utf8)
            case .bool(let b): bytes = [b ? 1 : 0]
            }
            if let bytes {
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes.count), alignment: 8)
                bytes.withUnsafeBytes { if let base = $0.baseAddress { buffer.copyMemory(from: base, byteCount: bytes.count) } }
                buffers.append(buffer)
                lengths.append(Int32(bytes.count))
            } else {
                buffers.append(nil)
                lengths.append(0)
            }
        }
        defer { for b in buffers { b?.deallocate() } }
        let formats = [Int32](repeating: 1, count: params.count)
        let values: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) } }
        let result = values.withUnsafeBufferPointer { v in
            lengths.withUnsafeBufferPointer { l in
                formats.withUnsafeBufferPointer { f in
                    PQexecPrepared(conn, name, Int32(params.count), v.baseAddress, l.baseAddress, f.baseAddress, 1)
                }
            }
        }
        defer { PQclear(result) }
        try check(result)
        guard let result else { return PGRows(rows: [], affected: 0) }
        return try Self.rows(result)
    }

    private static func typeOid(_ value: PGValue) -> Oid {
        switch value {
        case .null: 0
        case .integer: 20   // int8
        case .bytes: 17     // bytea
        case .text: 25      // text
        case .bool: 16      // bool
        }
    }

    private static func rows(_ result: OpaquePointer) throws(SecureStoreError) -> PGRows {
        let count = Int(PQntuples(result)), fields = Int(PQnfields(result))
        var rows: [[PGValue]] = []
        rows.reserveCapacity(count)
        for r in 0..<count {
            var row: [PGValue] = []
            row.reserveCapacity(fields)
            for c in 0..<fields {
                let (r32, c32) = (Int32(r), Int32(c))
                if PQgetisnull(result, r32, c32) != 0 { row.append(.null); continue }
                let length = Int(PQgetlength(result, r32, c32))
                let bytes: [UInt8] = PQgetvalue(result, r32, c32).map { p in
                    p.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
                } ?? []
                switch PQftype(result, c32) {
                case 20, 23, 21:   // int8, int4, int2: big-endian
                    guard [2, 4, 8].contains(bytes.count) else {
                        throw SecureStoreError(.decode, "PostgreSQL returned a malformed integer.")
                    }
                    var n = bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
                    if bytes.count < 8, let first = bytes.first, first & 0x80 != 0 {
                        n -= Int64(1) << (bytes.count * 8)
                    }
                    row.append(.integer(n))
                case 16: row.append(.bool(bytes.first == 1))
                case 25, 1043, 19, 18: row.append(.text(String(decoding: bytes, as: UTF8.self)))
                default: row.append(.bytes(bytes))
                }
            }
            rows.append(row)
        }
        let affected = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        return PGRows(rows: rows, affected: affected)
    }

    // MARK: Errors

    /// Throws the error a failed result stands for; returns for success.
    private func check(_ result: OpaquePointer?) throws(SecureStoreError) {
        if let result {
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
                lastSQLState = nil
                return
            }
        }
        let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        let primary = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
            ?? oneLine(String(cString: PQerrorMessage(conn)))
        lastSQLState = state
        if !isOpen || state?.hasPrefix("08") == true || state == "57P01" || state == "57P02" || state == "57P03" {
            throw SecureStoreError(.notAvailable,
                "The connection to PostgreSQL at \(endpoint) was lost: \(primary). The next call reconnects.")
        }
        switch state {
        case "25006":
            throw SecureStoreError(.readOnly,
                "PostgreSQL at \(endpoint) accepts no writes (\(primary)): it is a standby or read-only. For failover, list every host in the URL with target_session_attrs=read-write.")
        case "23505":
            throw SecureStoreError(.duplicateItem,
                "The item already exists: another client stored an item with the same uniqueness key.")
        case "57014":
            throw SecureStoreError(.io,
                "PostgreSQL at \(endpoint) cancelled a statement after the statement_timeout of \(statementTimeoutMilliseconds) ms.")
        case "55P03":
            throw SecureStoreError(.io,
                "A lock on PostgreSQL at \(endpoint) was not granted within \(statementTimeoutMilliseconds) ms (lock_timeout).")
        case "40001", "40P01":
            throw SecureStoreError(.io, "PostgreSQL at \(endpoint) aborted a transaction that collided with another: \(primary).")
        case "53300", "53000", "53100", "53200":
            throw SecureStoreError(.notAvailable, "PostgreSQL at \(endpoint) has no room for this request: \(primary).")
        case "42501":
            throw SecureStoreError(.notAvailable,
                "The PostgreSQL role lacks a privilege SecureStore needs at \(endpoint): \(primary).")
        default:
            throw SecureStoreError(.io, "PostgreSQL at \(endpoint) failed a statement (SQLSTATE \(state ?? "none")): \(primary).")
        }
    }
}

/// libpq's multi-line messages on one line (tabs and newlines folded, trailing space dropped).
private func oneLine(_ text: String) -> String {
    text.split(whereSeparator: { $0 == "\n" || $0 == "\t" }).map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty }.joined(separator: "; ")
}

