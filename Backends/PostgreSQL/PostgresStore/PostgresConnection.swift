import SecureStoreCore
import SecureStoreCrypto
import CLibPQ
import Foundation

/// A value bound to a statement; it travels in libpq's binary format (and so do results).
enum PGValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case bytes([UInt8])
    case text(String)
    case bool(Bool)
}

/// The rows a statement returned (read from libpq's result memory straight into the sealed-table layer's
/// values: integers of every width as `integer`, booleans as `integer` 0 or 1, text types as `text`, any
/// other type as `blob`) and how many rows it changed.
struct PGRows {
    var rows: [[TableValue]]
    var affected: Int
}

/// The stored rows (`id, cls, ref, ukey, blob, secret, mdat`) of one statement's result, kept in libpq's
/// memory until this object goes: ``forEach(_:)`` lends each row's columns in place, as the SQLite backend
/// lends its statement's, so a lookup copies no column and builds no row arrays. Column types are told apart
/// by the kinds ``PGRows`` uses, and only integers stand for `id` and `cls`; a row of another shape is damage,
/// with the errors `RowColumns.with` gives for the same row read through values.
final class PGRecordRows {
    private let result: OpaquePointer?

    fileprivate init(_ result: OpaquePointer?) { self.result = result }

    deinit { if let result { PQclear(result) } }

    func forEach(_ body: (RowColumns) throws(SecureStoreError) -> Void) throws(SecureStoreError) {
        guard let result, PQresultStatus(result) == PGRES_TUPLES_OK else { return }
        let count = Int(PQntuples(result))
        guard count > 0 else { return }
        typealias Connection = PostgresConnection
        guard PQnfields(result) == 7 else { throw RowColumns.damagedRow }
        let kinds = (0..<7).map { Connection.ColumnKind(result, $0) }
        guard kinds[0] == .integer, kinds[1] == .integer, kinds[2] == .bytes, kinds[3] == .bytes, kinds[4] == .bytes
        else { throw RowColumns.damagedRow }
        for r in 0..<count {
            guard let idBytes = Connection.value(result, r, 0), let clsBytes = Connection.value(result, r, 1),
                  let ref = Connection.value(result, r, 2), let ukey = Connection.value(result, r, 3),
                  let blob = Connection.value(result, r, 4)
            else { throw RowColumns.damagedRow }
            let id = try Connection.integer(idBytes), cls = try Connection.integer(clsBytes)
            let secret = Connection.value(result, r, 5), mdat = Connection.value(result, r, 6)
            if secret != nil, kinds[5] != .bytes { throw RowColumns.damagedSecret(id) }
            if mdat != nil, kinds[6] != .bytes { throw RowColumns.damagedSecret(id) }
            try body(RowColumns(id: id, cls: cls, ref: ref, ukey: ukey, blob: blob, secret: secret, mdat: mdat))
        }
    }
}

/// One libpq connection. This is the only file of the package that calls libpq.
///
/// Every statement with values is sent with parameters (never spliced into SQL), prepared once per
/// connection, in binary format both ways. Errors become ``SecureStoreError``s by SQLSTATE; their messages
/// carry the server's primary message and never a parameter value, a password or the URL's password.
///
/// Every call is bounded on the client: connecting uses `PQconnectStartParams`/`PQconnectPoll`, one host at
/// a time, each within `connectTimeout`; every statement and `COMMIT` is sent with libpq's asynchronous API
/// and awaited with `poll(2)` until `statementTimeout`. At the deadline the statement is cancelled
/// (`PQcancel`, on a thread of its own so a server that does not answer cannot hold the caller) and its
/// answer awaited for at most ``cancelGrace``; without one, the connection is abandoned. So no call waits
/// longer than its deadline plus ``cancelGrace``, whatever the server, the network or a synchronous standby do.
final class PostgresConnection: @unchecked Sendable {   // used by one caller at a time (the backend's pool)
    private let conn: OpaquePointer
    /// `host:port` of the server this connection reached, for messages.
    let endpoint: String
    /// The position of that server in the URL's host list.
    let hostIndex: Int
    /// The SQLSTATE of the last failed statement (`"40001"` …), for the caller's retry decisions.
    private(set) var lastSQLState: String?
    /// The step of the last pipeline that failed (its index in the steps; the step count for its COMMIT),
    /// nil when none did or no answer came.
    private(set) var lastFailedStep: Int?
    private var prepared: [String: String] = [:]
    /// Recently used entries of `prepared` (see ``preparedName(_:)``).
    private var recent: [(sql: String, length: Int, name: String)] = []
    /// How many statements were prepared on this connection (each gets a new name, `ss1`, `ss2`, …).
    private var statementCount = 0
    /// Round trips to the server on this connection (each a send and the wait for its answer).
    private(set) var roundTrips = 0
    private let options: Options
    /// Set when a deadline passed without an answer, or the connection broke: it is not used again.
    private var abandoned = false
    /// Whether a transaction ran on this connection before (a break shows only when it is used again).
    var wasUsed = false

    /// How long a cancelled statement's answer is awaited after its deadline before the connection is dropped.
    static let cancelGraceMilliseconds = 1_000
    /// How long after `statementTimeout` the client's deadline passes (the server's own timeout answers first).
    static let serverFirstMilliseconds = 200

    /// Connection settings that are not in the URL.
    struct Options: Sendable {
        /// The deadline of a connection attempt to one host (a URL's `connect_timeout`, in seconds, wins).
        var connectTimeoutMilliseconds: Int = 5_000
        /// The client deadline of each statement and `COMMIT`; also the session's `statement_timeout`.
        var statementTimeoutMilliseconds: Int = 10_000
        /// The session's `lock_timeout`: how long a writer waits for another writer of its namespace.
        var lockTimeoutMilliseconds: Int = 5_000
        /// Shown in `pg_stat_activity`.
        var applicationName: String = "securestore"
    }

    private init(conn: OpaquePointer, endpoint: String, hostIndex: Int, options: Options) {
        self.conn = conn
        self.endpoint = endpoint
        self.hostIndex = hostIndex
        self.options = options
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
        /// Every keyword the URL sets, in libpq's order (the password, if any, is never kept here).
        var settings: [(String, String)] = []

        var description: String {
            let host = hosts.isEmpty ? "the local socket" : hosts
            return "\(host)\(ports.isEmpty ? "" : " port \(ports)")\(database.isEmpty ? "" : ", database \(database)")"
        }

        /// One entry per host of the URL: its `host`, `hostaddr` and `port` settings (libpq's pairing rules: one
        /// port serves every host).
        var endpoints: [[(String, String)]] {
            func list(_ key: String) -> [String] {
                guard let value = settings.first(where: { $0.0 == key })?.1, !value.isEmpty else { return [] }
                return value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
            let hosts = list("host"), addresses = list("hostaddr"), ports = list("port")
            let count = max(1, hosts.count, addresses.count)
            return (0..<count).map { i in
                var out: [(String, String)] = []
                if i < hosts.count, !hosts[i].isEmpty { out.append(("host", hosts[i])) }
                if i < addresses.count, !addresses[i].isEmpty { out.append(("hostaddr", addresses[i])) }
                let port = ports.count == 1 ? ports[0] : (i < ports.count ? ports[i] : "")
                if !port.isEmpty { out.append(("port", port)) }
                return out
            }
        }
    }

    /// Parses `url` with libpq (so every form libpq accepts works), without connecting.
    static func parse(_ url: String) throws(SecureStoreError) -> Target {
        try LibPQ.require()
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
                let name = String(cString: keyword)
                switch name {
                case "host": target.hosts = text
                case "hostaddr": if target.hosts.isEmpty { target.hosts = text }
                case "port": target.ports = text
                case "dbname": target.database = text
                case "user": target.user = text
                case "password": target.hasPassword = !text.isEmpty
                default: break
                }
                if name != "password" { target.settings.append((name, text)) }
            }
            option += 1
        }
        for (name, text) in target.settings {
            if let allowed = enumeratedSettings[name], !allowed.contains(text) {
                throw .param("url", "The PostgreSQL URL sets \(name)=\(oneLine(text)), which libpq does not know; use one "
                    + "of: \(allowed.joined(separator: ", ")). Fix the url in your config (retrying cannot help).")
            }
        }
        return target
    }

    /// The settings libpq takes from a fixed list of values. libpq's parser accepts any value and refuses a
    /// wrong one only when it connects, which would report a bad config as an unreachable server (exit 6,
    /// "retry") instead of a config to fix (exit 2).
    static let enumeratedSettings: [String: [String]] = [
        "sslmode": ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"],
        "target_session_attrs": ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"],
        "gssencmode": ["disable", "prefer", "require"],
        "channel_binding": ["disable", "prefer", "require"],
        "load_balance_hosts": ["disable", "random"],
        "sslnegotiation": ["postgres", "direct"],
    ]

    /// Connects to one of `target`'s hosts (several give failover), trying the host at `preferred` first,
    /// then the others in the URL's order, each within the connect deadline; with `password` when given.
    /// Sets the session's timeouts.
    ///
    /// - Throws: `readOnly` when every server that answered is a standby or read-only and the URL asks for
    ///   `target_session_attrs=read-write`; `notAvailable` naming each host and libpq's reason otherwise.
    static func connect(target: Target, password: String?, options: Options, preferred: Int? = nil)
        throws(SecureStoreError) -> PostgresConnection
    {
        try LibPQ.require()
        let endpoints = target.endpoints
        var order = Array(endpoints.indices)
        if let preferred, order.contains(preferred) { order.removeAll { $0 == preferred }; order.insert(preferred, at: 0) }
        var perHost = options.connectTimeoutMilliseconds
        if let text = target.settings.first(where: { $0.0 == "connect_timeout" })?.1, let seconds = Int(text), seconds > 0 {
            perHost = max(2, seconds) * 1000   // libpq's own rule: at least 2 s
        }
        // Earlier keywords are defaults the URL may override (its own settings follow).
        var base: [(String, String)] = [
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "3"), ("keepalives_count", "3"),
            ("tcp_user_timeout", String(perHost + options.statementTimeoutMilliseconds)),
            ("application_name", options.applicationName),
        ]
        let perHostKeys: Set<String> = ["host", "hostaddr", "port", "connect_timeout"]
        for (key, value) in target.settings where !perHostKeys.contains(key) {
            base.removeAll { $0.0 == key }
            base.append((key, value))
        }
        var reasons: [String] = []
        var readOnlySeen = false
        // One host at a time, so libpq applies target_session_attrs to each; `prefer-standby` (which libpq
        // resolves across its host list) becomes a pass asking for a standby, then one taking any server.
        var passes: [(index: Int, attrs: String?)] = order.map { ($0, nil) }
        if target.settings.first(where: { $0.0 == "target_session_attrs" })?.1 == "prefer-standby" {
            passes = order.map { ($0, "standby") } + order.map { ($0, "any") }
        }
        for (index, attrs) in passes {
            var pairs = base + endpoints[index]
            if let attrs {
                pairs.removeAll { $0.0 == "target_session_attrs" }
                pairs.append(("target_session_attrs", attrs))
            }
            if let password { pairs.append(("password", password)) }
            let name = endpoints[index].filter { $0.0 != "port" }.map(\.1).first ?? "the local socket"
            let port = endpoints[index].first { $0.0 == "port" }?.1
            let label = name + (port.map { ":\($0)" } ?? "")
            switch attempt(pairs, deadline: Deadline(milliseconds: perHost)) {
            case .success(let connection):
                let host = PQhost(connection).map { String(cString: $0) } ?? ""
                let port = PQport(connection).map { String(cString: $0) } ?? ""
                let endpoint = (host.hasPrefix("/") || host.isEmpty ? "socket \(host)" : host) + (port.isEmpty ? "" : ":\(port)")
                let result = PostgresConnection(conn: connection, endpoint: endpoint, hostIndex: index, options: options)
                let ms = max(1, options.statementTimeoutMilliseconds)
                do throws(SecureStoreError) {
                    try result.execute("""
                        SET statement_timeout = \(ms); SET lock_timeout = \(max(1, options.lockTimeoutMilliseconds));
                        SET idle_in_transaction_session_timeout = \(max(ms * 6, 60_000));
                        SET client_min_messages = warning
                        """)
                } catch {
                    reasons.append("\(label): \(error.message)")
                    continue
                }
                return result
            case .failure(let failure):
                let reason = failure.reason
                // libpq's words for a server that target_session_attrs=read-write or primary turned down.
                if reason.contains("session is read-only") || reason.contains("server is in hot standby mode") {
                    readOnlySeen = true
                }
                reasons.append("\(label): \(reason)")
            }
        }
        if readOnlySeen {
            throw SecureStoreError(.readOnly,
                "No PostgreSQL server at \(target.description) accepts writes: \(reasons.joined(separator: "; ")). The reachable ones are standbys or read-only.")
        }
        throw SecureStoreError(.notAvailable,
            "PostgreSQL at \(target.description) is not available: \(reasons.joined(separator: "; ")).")
    }

    /// One connection attempt (one host; libpq tries each of its addresses) within `deadline`.
    private static func attempt(_ pairs: [(String, String)], deadline: Deadline) -> Result<OpaquePointer, AttemptFailure> {
        let keywords: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0.0) } + [nil]
        let values: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0.1) } + [nil]
        defer {
            for p in keywords { free(p) }
            for p in values {
                if let p { memset(p, 0, strlen(p)) }   // the password copy
                free(p)
            }
        }
        let started: OpaquePointer? = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in
                PQconnectStartParams(k.baseAddress, v.baseAddress, 0)
            }
        }
        guard let connection = started else { return .failure(AttemptFailure("libpq could not allocate a connection")) }
        if PQstatus(connection) == CONNECTION_BAD {
            let reason = oneLine(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            return .failure(AttemptFailure(reason))
        }
        var state = PGRES_POLLING_WRITING
        while true {
            switch state {
            case PGRES_POLLING_OK:
                PQsetNoticeProcessor(connection, { _, _ in }, nil)   // warnings are read from results, never printed
                PQsetnonblocking(connection, 1)
                return .success(connection)
            case PGRES_POLLING_FAILED:
                let reason = oneLine(String(cString: PQerrorMessage(connection)))
                PQfinish(connection)
                return .failure(AttemptFailure(reason.isEmpty ? "the connection failed" : reason))
            default:
                let events = state == PGRES_POLLING_READING ? Int16(POLLIN) : Int16(POLLOUT)
                if !wait(socket: PQsocket(connection), events: events, until: deadline) {
                    PQfinish(connection)
                    return .failure(AttemptFailure("no answer within the connect timeout of \(deadline.total) ms"))
                }
                state = PQconnectPoll(connection)
            }
        }
    }

    struct AttemptFailure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Whether the connection is still usable (libpq has not seen it break, no deadline was missed).
    var isOpen: Bool { !abandoned && PQstatus(conn) == CONNECTION_OK }

    /// Whether the server said at connect time that it takes writes (not a hot standby, not read-only by
    /// default); servers before 14 do not say whether they are standbys.
    var acceptsWrites: Bool {
        func parameter(_ name: String) -> String? { PQparameterStatus(conn, name).map { String(cString: $0) } }
        return parameter("in_hot_standby") != "on" && parameter("default_transaction_read_only") != "on"
    }

    /// Whether an idle connection is still there. Every call reads its answers to the end, so an idle
    /// connection has nothing to read unless the server spoke on its own: it ended the session (restart,
    /// failover, `pg_terminate_backend`: a FATAL message, then the socket closes) or reported a changed
    /// setting (a standby promoted). Either way the connection is abandoned (checked without waiting), so the
    /// pool replaces it before a call sends anything on it: a call whose first round trip carries COMMIT
    /// could not tell a connection that was already dead from a COMMIT lost on the way.
    func stillConnected() -> Bool {
        guard isOpen else { return false }
        var fd = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
        guard fd.fd >= 0 else { return false }
        if poll(&fd, 1, 0) != 0 {
            abandoned = true
            return false
        }
        return true
    }

    /// Whether a transaction is open or failed on this connection.
    var inTransaction: Bool {
        let status = PQtransactionStatus(conn)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    // MARK: Waiting

    /// A point in time `milliseconds` from now, on the monotonic clock.
    struct Deadline {
        let end: UInt64
        let total: Int
        init(milliseconds: Int) {
            total = milliseconds
            end = Deadline.now() + UInt64(max(0, milliseconds)) * 1_000_000
        }
        static func now() -> UInt64 {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        }
        /// Milliseconds left, rounded up; 0 when passed.
        var remaining: Int32 {
            let now = Deadline.now()
            return now >= end ? 0 : Int32(clamping: (end - now + 999_999) / 1_000_000)
        }
    }

    /// Waits until `socket` is ready for `events` or `deadline` passes; false on the deadline.
    private static func wait(socket: Int32, events: Int16, until deadline: Deadline) -> Bool {
        guard socket >= 0 else { return true }   // libpq reports the broken socket on its next call
        while true {
            let left = deadline.remaining
            if left == 0 { return false }
            var fd = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&fd, 1, left)
            if ready > 0 { return true }
            if ready == 0 { return false }
            if errno != EINTR { return true }
        }
    }

    /// What waiting for a statement's answer came to.
    private enum Answer {
        /// The statement's results: the first failed one, else the last one (the caller clears it).
        case done(OpaquePointer?)
        case timedOut
        case lost
    }

    /// Sends everything libpq buffered, reading what arrives meanwhile, until `deadline`; nil once all is sent.
    private func flush(socket: Int32, until deadline: Deadline) -> Answer? {
        while true {
            let flushed = PQflush(conn)
            if flushed == 0 { return nil }
            if flushed < 0 { return .lost }
            if !Self.wait(socket: socket, events: Int16(POLLIN | POLLOUT), until: deadline) { return .timedOut }
            if PQconsumeInput(conn) == 0 { return .lost }
        }
    }

    /// Sends everything libpq buffered and reads every result of the statement sent, until `deadline`.
    private func collect(_ deadline: Deadline) -> Answer {
        let socket = PQsocket(conn)
        if let failed = flush(socket: socket, until: deadline) { return failed }
        var chosen: OpaquePointer? = nil
        while true {
            while PQisBusy(conn) != 0 {
                if !Self.wait(socket: socket, events: Int16(POLLIN), until: deadline) {
                    if let chosen { PQclear(chosen) }
                    return .timedOut
                }
                if PQconsumeInput(conn) == 0 {
                    if let chosen { PQclear(chosen) }
                    return .lost
                }
            }
            guard let result = PQgetResult(conn) else { break }
            if let current = chosen {
                if Self.succeeded(current) {
                    PQclear(current)
                    chosen = result
                } else {
                    PQclear(result)   // a later result after a failure
                }
            } else {
                chosen = result
            }
        }
        if chosen == nil, PQstatus(conn) != CONNECTION_OK { return .lost }
        return .done(chosen)
    }

    private static func succeeded(_ result: OpaquePointer) -> Bool {
        let status = PQresultStatus(result)
        return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY
    }

    /// Asks the server to cancel the running statement, on a thread of its own (PQcancel blocks on a new
    /// connection to the server, which may not answer either).
    private func requestCancel() {
        guard let cancel = PQgetCancel(conn) else { return }
        let box = CancelBox(cancel: cancel)
        let thread = Thread {
            var buffer = [CChar](repeating: 0, count: 256)
            _ = PQcancel(box.cancel, &buffer, Int32(buffer.count))
            PQfreeCancel(box.cancel)
        }
        thread.start()
    }

    /// What kind of statement runs, for the outcome of a missed deadline: a statement, a `COMMIT`, or a
    /// pipeline of statements outside a transaction block, which the server commits at its sync (an
    /// implicit transaction: the answer to its last statement comes before that commit).
    private enum Kind { case statement, commit, committedAtSync }

    /// Sends with `send` and returns the statement's result (nil for none), bounded by the statement deadline;
    /// `collect` reads the answer (by default: one statement's results).
    private func roundTrip(_ kind: Kind, _ send: () -> Int32, collect: ((Deadline) -> Answer)? = nil)
        throws(SecureStoreError) -> OpaquePointer?
    {
        let collect = collect ?? { self.collect($0) }
        roundTrips += 1
        guard !abandoned else {
            throw SecureStoreError(.notAvailable, "The connection to PostgreSQL at \(endpoint) was abandoned. The next call reconnects.")
        }
        if send() == 0 {
            abandoned = true
            // Nothing reached the server: a COMMIT not sent leaves the transaction to be rolled back.
            throw lost(oneLine(String(cString: PQerrorMessage(conn))))
        }
        let limit = options.statementTimeoutMilliseconds
        // The server's own statement_timeout (the same limit) normally answers first; the client's deadline
        // comes a moment later, for what the server does not time out (a synchronous-replication wait, a
        // server or network that stopped answering).
        switch collect(Deadline(milliseconds: limit + Self.serverFirstMilliseconds)) {
        case .done(let result):
            return result
        case .lost:
            abandoned = true
            if kind == .commit { throw commitUnknown("the connection was lost while COMMIT was in flight") }
            if kind == .committedAtSync { throw commitUnknown("the connection was lost while the statements and their commit were in flight") }
            throw lost(oneLine(String(cString: PQerrorMessage(conn))))
        case .timedOut:
            requestCancel()
            // A cancel request may arrive late and hit the next statement: this connection is not reused.
            abandoned = true
            switch collect(Deadline(milliseconds: Self.cancelGraceMilliseconds)) {
            case .done(let result):
                // COMMIT answered after the cancel: the server committed locally and stopped waiting for its
                // synchronous standby (it says so in a WARNING). Anything else is the statement's own answer
                // (a cancelled one is 57014: nothing changed; a COMMIT that failed rolled back).
                if kind == .commit, let result, Self.succeeded(result),
                   PQcmdStatus(result).map({ String(cString: $0) }) == "COMMIT" {
                    PQclear(result)
                    throw committedUnconfirmed("the synchronous standby did not confirm it within the client deadline of \(limit) ms")
                }
                // Statements committed at the sync answered with success after the cancel: every statement
                // ran, so the cancel found the server waiting in that commit (the same WARNING).
                if kind == .committedAtSync, let result, Self.succeeded(result) {
                    PQclear(result)
                    throw committedUnconfirmed("the synchronous standby did not confirm it within the client deadline of \(limit) ms")
                }
                return result
            case .timedOut, .lost:
                abandoned = true
                if kind == .commit {
                    throw commitUnknown("PostgreSQL did not answer COMMIT within \(limit) ms, nor its cancellation")
                }
                if kind == .committedAtSync {
                    throw commitUnknown("PostgreSQL did not answer the statements and their commit within \(limit) ms, nor their cancellation")
                }
                throw SecureStoreError(.notAvailable,
                    "PostgreSQL at \(endpoint) did not answer within the client deadline of \(limit) ms, nor a cancel request; the connection was dropped and the next call reconnects.")
            }
        }
    }

    private func lost(_ reason: String) -> SecureStoreError {
        let reason = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
        return SecureStoreError(.notAvailable,
            "The connection to PostgreSQL at \(endpoint) was lost: \(reason.isEmpty ? "no answer" : reason). The next call reconnects.")
    }

    /// The server committed, but its synchronous standby did not confirm the commit in time.
    private func committedUnconfirmed(_ why: String) -> SecureStoreError {
        SecureStoreError(.outcomeUnknown,
            "outcome unknown: committed on the primary, not confirmed by a synchronous standby (\(why); PostgreSQL at \(endpoint)). Check whether the change is there before retrying.")
    }

    /// COMMIT was sent and no answer says whether it happened.
    private func commitUnknown(_ why: String) -> SecureStoreError {
        SecureStoreError(.outcomeUnknown,
            "outcome unknown: the change may or may not have been committed (\(why); PostgreSQL at \(endpoint)). Check whether the change is there before retrying.")
    }

    // MARK: Statements

    /// Runs SQL without parameters (one or several statements: `BEGIN`, DDL) in one round trip; returns the
    /// rows of the last statement.
    @discardableResult
    func execute(_ sql: String) throws(SecureStoreError) -> PGRows {
        let result = try roundTrip(.statement) { PQsendQuery(conn, sql) }
        defer { if let result { PQclear(result) } }
        try check(result)
        guard let result else { return PGRows(rows: [], affected: 0) }
        return try Self.rows(result)
    }

    /// Commits the open transaction; throws when the server rolled it back instead (an earlier statement
    /// failed), so a caller never takes a rollback for a commit, and `outcomeUnknown` when the commit may
    /// have happened without being confirmed (the deadline passed during a synchronous-replication wait, or
    /// the connection broke while COMMIT was in flight). `COMMIT` is a prepared statement too: the first one
    /// on a connection is prepared in the same round trip (a pipeline), the later ones only executed.
    func commit() throws(SecureStoreError) {
        guard let name = preparedName("COMMIT") else {
            _ = try pipeline([], commit: true)
            return
        }
        let result = try roundTrip(.commit) { sendPrepared(name, []) }
        defer { if let result { PQclear(result) } }
        do throws(SecureStoreError) {
            try check(result)
        } catch {
            // The server ended the session during COMMIT (shutdown, failover): it may have committed first.
            if error.code == .notAvailable { throw commitUnknown("the server ended the session during COMMIT: \(error.message)") }
            throw error
        }
        let tag = result.flatMap { PQcmdStatus($0) }.map { String(cString: $0) } ?? ""
        guard tag == "COMMIT" else {
            throw SecureStoreError(.internalError,
                "PostgreSQL at \(endpoint) rolled the transaction back instead of committing it; nothing was changed.")
        }
    }

    /// Runs one statement with `params` bound as `$1`, `$2`, … (prepared on first use on this connection).
    @discardableResult
    func query(_ sql: String, _ params: [PGValue] = []) throws(SecureStoreError) -> PGRows {
        let result = try execute(sql, params)
        defer { if let result { PQclear(result) } }
        guard let result else { return PGRows(rows: [], affected: 0) }
        return try Self.rows(result)
    }

    /// ``query(_:_:)`` for a statement that returns stored rows (`id, cls, ref, ukey, blob, secret, mdat`): the
    /// rows stay in libpq's result, lent to the caller column by column (``PGRecordRows``), none copied.
    func recordRows(_ sql: String, _ params: [PGValue]) throws(SecureStoreError) -> PGRecordRows {
        PGRecordRows(try execute(sql, params))
    }

    /// Sends `sql` (prepared on its first use on this connection) with `params`; its successful result, which
    /// the caller clears.
    private func execute(_ sql: String, _ params: [PGValue]) throws(SecureStoreError) -> OpaquePointer? {
        let name: String
        if let known = preparedName(sql) {
            name = known
        } else {
            statementCount += 1
            name = "ss\(statementCount)"
            let types: [Oid] = params.map(Self.typeOid)
            let result = try roundTrip(.statement) {
                types.withUnsafeBufferPointer { PQsendPrepare(conn, name, sql, Int32(params.count), $0.baseAddress) }
            }
            defer { if let result { PQclear(result) } }
            try check(result)
            prepared[sql] = name
        }
        let result = try roundTrip(.statement) { sendPrepared(name, params) }
        do throws(SecureStoreError) {
            try check(result)
        } catch {
            if let result { PQclear(result) }
            throw error
        }
        return result
    }

    /// Queues the prepared statement `name` with `params` in binary (libpq copies them before returning).
    /// The values are laid out in one temporary buffer (on the stack when small), not one allocation each.
    private func sendPrepared(_ name: String, _ params: [PGValue]) -> Int32 {
        var total = 0
        for param in params {
            switch param {
            case .null: break
            case .integer: total += 8
            case .bytes(let b): total += b.count
            case .text(let t): total += t.utf8.count
            case .bool: total += 1
            }
        }
        let count = params.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, total)) { storage in
            withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: max(1, count)) { values in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: max(1, 2 * count)) { ints in
                    guard let base = storage.baseAddress else { return 0 }
                    var offset = 0
                    func place(_ bytes: UnsafeRawBufferPointer, _ i: Int) {
                        if let from = bytes.baseAddress, bytes.count > 0 {
                            UnsafeMutableRawPointer(base + offset).copyMemory(from: from, byteCount: bytes.count)
                        }
                        values[i] = UnsafeRawPointer(base + offset).assumingMemoryBound(to: CChar.self)
                        ints[i] = Int32(bytes.count)
                        offset += bytes.count
                    }
                    for (i, param) in params.enumerated() {
                        ints[count + i] = 1   // binary
                        switch param {
                        case .null:
                            values[i] = nil
                            ints[i] = 0
                        case .integer(let n): withUnsafeBytes(of: n.bigEndian) { place($0, i) }
                        case .bytes(let b): b.withUnsafeBytes { place($0, i) }
                        case .text(let t):
                            var text = t
                            text.withUTF8 { place(UnsafeRawBufferPointer($0), i) }
                        case .bool(let b): withUnsafeBytes(of: UInt8(b ? 1 : 0)) { place($0, i) }
                        }
                    }
                    let lengths = ints.baseAddress, formats = ints.baseAddress.map { $0 + count }
                    return name.withCString { statement in
                        PQsendQueryPrepared(conn, statement, Int32(count), values.baseAddress, lengths, formats, 1)
                    }
                }
            }
        }
    }

    /// The name of `sql` if it was prepared on this connection. The statements come from constants, so the
    /// same `String` storage comes back every call: a few recent ones are compared first (a pointer
    /// comparison when it is the same string) before the dictionary hashes the whole text.
    private func preparedName(_ sql: String) -> String? {
        let length = sql.utf8.count
        for entry in recent where entry.length == length && entry.sql == sql { return entry.name }
        guard let name = prepared[sql] else { return nil }
        if recent.count >= 8 { recent.removeFirst() }
        recent.append((sql, length, name))
        return name
    }

    // MARK: Pipeline

    /// One statement of a pipeline: SQL with `params` bound as `$1`, `$2`, ….
    struct Step {
        let sql: String
        let params: [PGValue]
    }

    /// Runs `steps`, then COMMIT when `commit`, in one round trip (libpq pipeline mode, PostgreSQL 14 and
    /// later on the client; any server of the v3 protocol): statements not prepared yet on this connection
    /// are prepared in the same pipeline. The server runs them in order and skips the rest after a failure.
    /// Returns each step's rows; throws the first failure's error (then the transaction failed and the caller
    /// rolls it back). With `commit`, the outcome rules of ``commit()`` apply: `outcomeUnknown` when COMMIT
    /// may have happened unconfirmed, `internalError` when the server rolled back instead.
    ///
    /// With `committedAtSync` (and no transaction open) the steps are one implicit transaction, which the
    /// server commits when it reaches the sync, without `BEGIN` and `COMMIT`: a failed step rolls it all
    /// back (its error, nothing changed); every step's success followed by the sync's answer is the commit.
    /// The outcome rules of a COMMIT apply to that commit: `outcomeUnknown` when the connection breaks with
    /// no failure from the server, or when the steps succeed only after the deadline's cancel (the server
    /// was waiting for its synchronous standby), or nothing answers at all.
    func pipeline(_ steps: [Step], commit: Bool, committedAtSync: Bool = false) throws(SecureStoreError) -> [PGRows] {
        guard PQenterPipelineMode(conn) == 1 else {
            throw SecureStoreError(.internalError,
                "libpq could not enter pipeline mode on the connection to \(endpoint): \(oneLine(String(cString: PQerrorMessage(conn)))).")
        }
        defer { if !abandoned { PQexitPipelineMode(conn) } }
        // What is queued: per query, whether its rows are a step's (else a PREPARE or the COMMIT), and the
        // step it belongs to (the step count for the COMMIT).
        var queries: [Int?] = []
        var owners: [Int] = []
        lastFailedStep = nil
        var newNames: [(sql: String, name: String)] = []
        let collected = PipelineAnswer()
        defer { collected.clear() }
        let result = try roundTrip(commit ? .commit : committedAtSync ? .committedAtSync : .statement, { () -> Int32 in
            // COMMIT is a prepared statement too (the server parses it once per connection); its rows are
            // nobody's.
            let all = commit ? steps + [Step(sql: "COMMIT", params: [])] : steps
            for (index, step) in all.enumerated() {
                var name = preparedName(step.sql) ?? newNames.first(where: { $0.sql == step.sql })?.name
                if name == nil {
                    statementCount += 1
                    let fresh = "ss\(statementCount)"
                    let types: [Oid] = step.params.map(Self.typeOid)
                    let sent = types.withUnsafeBufferPointer {
                        PQsendPrepare(conn, fresh, step.sql, Int32(step.params.count), $0.baseAddress)
                    }
                    guard sent == 1 else { return 0 }
                    queries.append(nil)
                    owners.append(index)
                    newNames.append((step.sql, fresh))
                    name = fresh
                }
                guard let name, sendPrepared(name, step.params) == 1 else { return 0 }
                queries.append(index < steps.count ? index : nil)
                owners.append(index)
            }
            return PQpipelineSync(conn)
        }, collect: { (deadline) -> Answer in self.collectPipeline(queries.count, into: collected, until: deadline) })
        // `result` is the first failed result, else the last one (COMMIT's, with `commit`).
        defer { if let result { PQclear(result) } }
        do throws(SecureStoreError) {
            try check(result)
        } catch {
            lastFailedStep = collected.failedAt.flatMap { $0 < owners.count ? owners[$0] : nil }
            if commit, error.code == .notAvailable, collected.failedAt == queries.count - 1 {
                throw commitUnknown("the server ended the session during COMMIT: \(error.message)")
            }
            throw error
        }
        for (sql, name) in newNames { prepared[sql] = name }
        if commit {
            let tag = result.flatMap { PQcmdStatus($0) }.map { String(cString: $0) } ?? ""
            guard tag == "COMMIT" else {
                throw SecureStoreError(.internalError,
                    "PostgreSQL at \(endpoint) rolled the transaction back instead of committing it; nothing was changed.")
            }
        }
        var out = [PGRows](repeating: PGRows(rows: [], affected: 0), count: steps.count)
        for (position, step) in queries.enumerated() {
            guard let step else { continue }
            // The last query's result is `result` itself (handed out by the collector).
            let own = position == collected.failedAt ? result : collected.results[position]
            if let own { out[step] = try Self.rows(own) }
        }
        return out
    }

    /// The results of a pipeline's queries as they are read (each query's first result; nil for none).
    private final class PipelineAnswer {
        var results: [OpaquePointer?] = []
        /// The query whose result was handed out as the answer (the first failed one, else the last).
        var failedAt: Int? = nil
        var current: OpaquePointer? = nil
        /// An error the server sent after the last query's answer, before the sync's: the commit of an
        /// implicit transaction failed (it rolled back).
        var afterLast: OpaquePointer? = nil
        var synced = false
        /// How many queries the pipeline sent.
        var expected = 0

        func clear() {
            for case let result? in results { PQclear(result) }
            results = []
            if let current { PQclear(current) }
            current = nil
            if let afterLast { PQclear(afterLast) }
            afterLast = nil
        }
    }

    /// Reads the results of `queries` pipelined queries and the sync that ends them, until `deadline` (again
    /// after a missed deadline: it goes on where it stopped). The answer is the first failed result, else the
    /// last query's; it leaves `answer` (the caller clears it), the others stay there.
    private func collectPipeline(_ queries: Int, into answer: PipelineAnswer, until deadline: Deadline) -> Answer {
        answer.expected = queries
        let socket = PQsocket(conn)
        if let failed = flush(socket: socket, until: deadline) { return failed }
        while !answer.synced {
            while PQisBusy(conn) != 0 {
                if !Self.wait(socket: socket, events: Int16(POLLIN), until: deadline) { return .timedOut }
                if PQconsumeInput(conn) == 0 { return broken(answer) }
            }
            let result = PQgetResult(conn)
            if answer.results.count == queries {
                // After the last query: the sync.
                guard let result else {
                    if PQstatus(conn) != CONNECTION_OK { return broken(answer) }
                    continue
                }
                if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                    answer.synced = true
                } else if answer.afterLast == nil, !Self.succeeded(result) {
                    answer.afterLast = result
                    continue
                }
                PQclear(result)
                continue
            }
            if let result {
                if answer.current == nil { answer.current = result } else { PQclear(result) }
                continue
            }
            if PQstatus(conn) != CONNECTION_OK { return broken(answer) }
            answer.results.append(answer.current)
            answer.current = nil
        }
        let position = answer.results.firstIndex { result in
            result.map { !Self.succeeded($0) } ?? false
        } ?? (queries - 1)
        if answer.results.indices.contains(position), answer.results[position].map(Self.succeeded) ?? true,
           let failed = answer.afterLast {
            // Every query succeeded, and the commit at the sync failed.
            answer.afterLast = nil
            answer.failedAt = queries
            return .done(failed)
        }
        guard position >= 0 else { return .done(nil) }
        answer.failedAt = position
        let chosen = answer.results[position]
        answer.results[position] = nil
        return .done(chosen)
    }

    /// The answer of a pipeline whose connection broke while it was read: an error the server itself sent
    /// for one of its queries (it carries a SQLSTATE; a session the server ends — restart, failover,
    /// `pg_terminate_backend` — says so first), after which the server ran none of the later queries, so a
    /// COMMIT behind it did not happen; else lost (libpq's own "connection closed" says nothing of that).
    private func broken(_ answer: PipelineAnswer) -> Answer {
        func fromServer(_ result: OpaquePointer?) -> Bool {
            guard let result, !Self.succeeded(result) else { return false }
            return PQresultErrorField(result, Int32(UInt8(ascii: "C"))) != nil
        }
        if let position = answer.results.firstIndex(where: fromServer) {
            answer.failedAt = position
            let chosen = answer.results[position]
            answer.results[position] = nil
            return .done(chosen)
        }
        if fromServer(answer.current) {
            answer.failedAt = answer.results.count
            let chosen = answer.current
            answer.current = nil
            return .done(chosen)
        }
        // What libpq read for the current query before it saw the break.
        if answer.current == nil, answer.results.count < answer.expected, PQisBusy(conn) == 0, let result = PQgetResult(conn) {
            if fromServer(result) {
                answer.failedAt = answer.results.count
                return .done(result)
            }
            PQclear(result)
        }
        return .lost
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
        // Rows changed: the command tag's count (a statement without rows).
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            return PGRows(rows: [], affected: PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0)
        }
        var rows: [[TableValue]] = []
        guard count > 0 else { return PGRows(rows: rows, affected: 0) }
        rows.reserveCapacity(count)
        let kinds = (0..<fields).map { ColumnKind(result, $0) }
        for r in 0..<count {
            var row: [TableValue] = []
            row.reserveCapacity(fields)
            for c in 0..<fields {
                guard let bytes = value(result, r, c) else { row.append(.null); continue }
                switch kinds[c] {
                case .integer: row.append(.integer(try integer(bytes)))
                case .boolean: row.append(.integer(bytes.first == 1 ? 1 : 0))
                case .text: row.append(.text(String(decoding: bytes, as: UTF8.self)))
                case .bytes: row.append(.blob([UInt8](bytes)))
                }
            }
            rows.append(row)
        }
        return PGRows(rows: rows, affected: count)
    }

    /// How a result column's values are read, by its type: integers of every width as integers, booleans as
    /// 0 or 1, text types as text, any other type as bytes.
    fileprivate enum ColumnKind {
        case integer, boolean, text, bytes

        init(_ result: OpaquePointer, _ column: Int) {
            switch PQftype(result, Int32(column)) {
            case 20, 23, 21: self = .integer   // int8, int4, int2: big-endian
            case 16: self = .boolean
            case 25, 1043, 19, 18: self = .text
            default: self = .bytes
            }
        }
    }

    /// A value in the result's own memory (valid until PQclear), read in place; nil for NULL.
    fileprivate static func value(_ result: OpaquePointer, _ row: Int, _ column: Int) -> UnsafeRawBufferPointer? {
        let (r, c) = (Int32(row), Int32(column))
        if PQgetisnull(result, r, c) != 0 { return nil }
        let start = PQgetvalue(result, r, c).map { UnsafeRawPointer($0) }
        return UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : Int(PQgetlength(result, r, c)))
    }

    /// A big-endian integer of 2, 4 or 8 bytes.
    fileprivate static func integer(_ bytes: UnsafeRawBufferPointer) throws(SecureStoreError) -> Int64 {
        guard bytes.count == 2 || bytes.count == 4 || bytes.count == 8 else {
            throw SecureStoreError(.decode, "PostgreSQL returned a malformed integer.")
        }
        var n = bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
        if bytes.count < 8, bytes[0] & 0x80 != 0 { n -= Int64(1) << (bytes.count * 8) }
        return n
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
                "PostgreSQL at \(endpoint) cancelled a statement after the statement_timeout of \(options.statementTimeoutMilliseconds) ms; nothing was changed.")
        case "55P03":
            throw SecureStoreError(.io,
                "A lock on PostgreSQL at \(endpoint) was not granted within the lock_timeout of \(options.lockTimeoutMilliseconds) ms; nothing was changed.")
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

/// A cancel handle handed to the thread that sends the cancel request (which frees it); nobody else uses it.
private struct CancelBox: @unchecked Sendable {
    let cancel: OpaquePointer
}

// MARK: libpq, loaded at first use

/// libpq, opened when the backend is first used (``LibPQ/require()``) rather than linked: a program that never
/// uses PostgreSQL never maps libpq and the Kerberos, GnuTLS and LDAP libraries it brings. A missing libpq
/// is the backend's `notAvailable` error. The functions below have libpq's names and types, so the calls in
/// this file read as plain libpq calls; they go through the pointers looked up once.
enum LibPQ {
    /// The library file opened, and the Debian package that installs it.
    static let soname = "libpq.so.5"
    static let debianPackage = "libpq5"

    private static let loaded = load(soname: soname)

    /// Opens `soname` and looks up every function the backend calls (tests pass a missing name).
    static func load(soname: String) -> LoadedFunctions<ss_libpq> {
        LoadedFunctions(soname: soname, for: "postgres", debianPackage: debianPackage, count: ss_libpq_count(),
                        name: { String(cString: ss_libpq_name($0)) })
    }

    /// Loads the library once; its `notAvailable` error (every time) when it cannot be loaded.
    static func require() throws(SecureStoreError) {
        try loaded.require()
    }

    /// The looked-up functions; only reached after ``require()`` succeeded.
    fileprivate static var functions: UnsafePointer<ss_libpq> { loaded.functions }
}

@discardableResult private func PQcancel(_ cancel: OpaquePointer!, _ errbuf: UnsafeMutablePointer<CChar>!, _ errbufsize: Int32) -> Int32 { LibPQ.functions.pointee.PQcancel(cancel, errbuf, errbufsize) }
private func PQclear(_ res: OpaquePointer!) { LibPQ.functions.pointee.PQclear(res) }
@discardableResult private func PQcmdStatus(_ res: OpaquePointer!) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.pointee.PQcmdStatus(res) }
@discardableResult private func PQcmdTuples(_ res: OpaquePointer!) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.pointee.PQcmdTuples(res) }
@discardableResult private func PQconnectPoll(_ conn: OpaquePointer!) -> PostgresPollingStatusType { LibPQ.functions.pointee.PQconnectPoll(conn) }
@discardableResult private func PQconnectStartParams(_ keywords: UnsafePointer<UnsafePointer<CChar>?>!, _ values: UnsafePointer<UnsafePointer<CChar>?>!, _ expand_dbname: Int32) -> OpaquePointer! { LibPQ.functions.pointee.PQconnectStartParams(keywords, values, expand_dbname) }
private func PQconninfoFree(_ connOptions: UnsafeMutablePointer<PQconninfoOption>!) { LibPQ.functions.pointee.PQconninfoFree(connOptions) }
@discardableResult private func PQconninfoParse(_ conninfo: UnsafePointer<CChar>!, _ errmsg: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>!) -> UnsafeMutablePointer<PQconninfoOption>! { LibPQ.functions.pointee.PQconninfoParse(conninfo, errmsg) }
@discardableResult private func PQconsumeInput(_ conn: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQconsumeInput(conn) }
@discardableResult private func PQenterPipelineMode(_ conn: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQenterPipelineMode(conn) }
@discardableResult private func PQerrorMessage(_ conn: OpaquePointer!) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.pointee.PQerrorMessage(conn) }
@discardableResult private func PQescapeLiteral(_ conn: OpaquePointer!, _ str: UnsafePointer<CChar>!, _ len: Int) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.pointee.PQescapeLiteral(conn, str, len) }
@discardableResult private func PQexitPipelineMode(_ conn: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQexitPipelineMode(conn) }
private func PQfinish(_ conn: OpaquePointer!) { LibPQ.functions.pointee.PQfinish(conn) }
@discardableResult private func PQflush(_ conn: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQflush(conn) }
private func PQfreeCancel(_ cancel: OpaquePointer!) { LibPQ.functions.pointee.PQfreeCancel(cancel) }
private func PQfreemem(_ ptr: UnsafeMutableRawPointer!) { LibPQ.functions.pointee.PQfreemem(ptr) }
@discardableResult private func PQftype(_ res: OpaquePointer!, _ field_num: Int32) -> Oid { LibPQ.functions.pointee.PQftype(res, field_num) }
@discardableResult private func PQgetCancel(_ conn: OpaquePointer!) -> OpaquePointer! { LibPQ.functions.pointee.PQgetCancel(conn) }
@discardableResult private func PQgetResult(_ conn: OpaquePointer!) -> OpaquePointer! { LibPQ.functions.pointee.PQgetResult(conn) }
@discardableResult private func PQgetisnull(_ res: OpaquePointer!, _ tup_num: Int32, _ field_num: Int32) -> Int32 { LibPQ.functions.pointee.PQgetisnull(res, tup_num, field_num) }
@discardableResult private func PQgetlength(_ res: OpaquePointer!, _ tup_num: Int32, _ field_num: Int32) -> Int32 { LibPQ.functions.pointee.PQgetlength(res, tup_num, field_num) }
@discardableResult private func PQgetvalue(_ res: OpaquePointer!, _ tup_num: Int32, _ field_num: Int32) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.pointee.PQgetvalue(res, tup_num, field_num) }
@discardableResult private func PQhost(_ conn: OpaquePointer!) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.pointee.PQhost(conn) }
@discardableResult private func PQisBusy(_ conn: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQisBusy(conn) }
@discardableResult private func PQnfields(_ res: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQnfields(res) }
@discardableResult private func PQntuples(_ res: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQntuples(res) }
@discardableResult private func PQparameterStatus(_ conn: OpaquePointer!, _ paramName: UnsafePointer<CChar>!) -> UnsafePointer<CChar>! { LibPQ.functions.pointee.PQparameterStatus(conn, paramName) }
@discardableResult private func PQpipelineSync(_ conn: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQpipelineSync(conn) }
@discardableResult private func PQport(_ conn: OpaquePointer!) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.pointee.PQport(conn) }
@discardableResult private func PQresultErrorField(_ res: OpaquePointer!, _ fieldcode: Int32) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.pointee.PQresultErrorField(res, fieldcode) }
@discardableResult private func PQresultStatus(_ res: OpaquePointer!) -> ExecStatusType { LibPQ.functions.pointee.PQresultStatus(res) }
@discardableResult private func PQsendPrepare(_ conn: OpaquePointer!, _ stmtName: UnsafePointer<CChar>!, _ query: UnsafePointer<CChar>!, _ nParams: Int32, _ paramTypes: UnsafePointer<Oid>!) -> Int32 { LibPQ.functions.pointee.PQsendPrepare(conn, stmtName, query, nParams, paramTypes) }
@discardableResult private func PQsendQuery(_ conn: OpaquePointer!, _ query: UnsafePointer<CChar>!) -> Int32 { LibPQ.functions.pointee.PQsendQuery(conn, query) }
@discardableResult private func PQsendQueryParams(_ conn: OpaquePointer!, _ command: UnsafePointer<CChar>!, _ nParams: Int32, _ paramTypes: UnsafePointer<Oid>!, _ paramValues: UnsafePointer<UnsafePointer<CChar>?>!, _ paramLengths: UnsafePointer<Int32>!, _ paramFormats: UnsafePointer<Int32>!, _ resultFormat: Int32) -> Int32 { LibPQ.functions.pointee.PQsendQueryParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat) }
@discardableResult private func PQsendQueryPrepared(_ conn: OpaquePointer!, _ stmtName: UnsafePointer<CChar>!, _ nParams: Int32, _ paramValues: UnsafePointer<UnsafePointer<CChar>?>!, _ paramLengths: UnsafePointer<Int32>!, _ paramFormats: UnsafePointer<Int32>!, _ resultFormat: Int32) -> Int32 { LibPQ.functions.pointee.PQsendQueryPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat) }
@discardableResult private func PQsetNoticeProcessor(_ conn: OpaquePointer!, _ proc: PQnoticeProcessor!, _ arg: UnsafeMutableRawPointer!) -> PQnoticeProcessor! { LibPQ.functions.pointee.PQsetNoticeProcessor(conn, proc, arg) }
@discardableResult private func PQsetnonblocking(_ conn: OpaquePointer!, _ arg: Int32) -> Int32 { LibPQ.functions.pointee.PQsetnonblocking(conn, arg) }
@discardableResult private func PQsocket(_ conn: OpaquePointer!) -> Int32 { LibPQ.functions.pointee.PQsocket(conn) }
@discardableResult private func PQstatus(_ conn: OpaquePointer!) -> ConnStatusType { LibPQ.functions.pointee.PQstatus(conn) }
@discardableResult private func PQtransactionStatus(_ conn: OpaquePointer!) -> PGTransactionStatusType { LibPQ.functions.pointee.PQtransactionStatus(conn) }
