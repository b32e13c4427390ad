import Foundation
import SecureStoreCore
import SecureStorePostgres
import CLibPQ

// The PostgreSQL backend and its raw-libpq limits. Measured only when a server is given:
//   SECURESTORE_BENCH_POSTGRES_URL (else SECURESTORE_TEST_POSTGRES_URL, as scripts/with-postgres.sh exports),
//   its password in SECURESTORE_BENCH_POSTGRES_PASSWORD (else SECURESTORE_TEST_POSTGRES_PASSWORD).
// e.g. scripts/with-postgres.sh .build/release/securestore-bench --backends postgres --counts 1000,10000

enum PostgresBenchServer {
    static let environment = ProcessInfo.processInfo.environment
    static var url: String? {
        (environment["SECURESTORE_BENCH_POSTGRES_URL"] ?? environment["SECURESTORE_TEST_POSTGRES_URL"]).flatMap {
            $0.isEmpty ? nil : $0
        }
    }
    static var passwordEnv: String? {
        for name in ["SECURESTORE_BENCH_POSTGRES_PASSWORD", "SECURESTORE_TEST_POSTGRES_PASSWORD"]
        where environment[name] != nil { return name }
        return nil
    }
    static func freshName(_ prefix: String) -> String { "\(prefix)_\(UInt64.random(in: 0...UInt64.max))" }
}

extension BackendEntry {
    /// `[postgres]` when a server is given, else nothing (the run then covers the other backends).
    static var postgresEntries: [BackendEntry] {
        guard let url = PostgresBenchServer.url else { return [] }
        return [postgres(url: url, passwordEnv: PostgresBenchServer.passwordEnv)]
    }

    static func postgres(url: String, passwordEnv: String?) -> BackendEntry {
        BackendEntry(
            name: "postgres",
            makeStore: { (_: String) throws -> any SecureStore in
                let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
                return try PostgresStore(url: url, key: .raw(key), namespace: PostgresBenchServer.freshName("bench"),
                                         passwordEnv: passwordEnv)
            },
            databaseFile: nil,
            limits: [
                LimitEntry(name: "raw libpq+XChaCha20, a transaction per call",
                           make: { (_: String) throws -> any BenchTarget in
                               try RawLibPQLimit(url: url, passwordEnv: passwordEnv, transactions: true)
                           }),
                LimitEntry(name: "raw libpq+XChaCha20, one statement",
                           make: { (_: String) throws -> any BenchTarget in
                               try RawLibPQLimit(url: url, passwordEnv: passwordEnv, transactions: false)
                           }),
            ],
            goals: [
                Goal(text: "add within 1.5× of raw libpq (a transaction per call)", kind: .ratioToLimit(.add, max: 1.5)),
                Goal(text: "lookup within 1.5× of raw libpq (a transaction per call)", kind: .ratioToLimit(.lookup, max: 1.5)),
                Goal(text: "lookup growth from N=1,000 to 100,000 within 1.5×", kind: .growth(.lookup, max: 1.5)),
                Goal(text: "add within 1.3× of one statement (the floor)",
                     kind: .ratioToNamedLimit(.add, limit: "one statement", max: 1.3)),
                Goal(text: "lookup within 1.3× of one statement (the floor)",
                     kind: .ratioToNamedLimit(.lookup, limit: "one statement", max: 1.3)),
            ])
    }
}

/// The PostgreSQL limit: libpq and libsodium called directly, on a table of its own shaped like the
/// backend's (namespace, keyed hash of (service, account) under a unique index, hash of the service, value
/// sealed with XChaCha20-Poly1305), prepared statements with binary parameters.
///
/// `transactions: true` sends a transaction per call, as the backend does when one round trip does not fit
/// (and did for every call before a lookup became one statement and an add one round trip): BEGIN, the
/// namespace's advisory lock and the uniqueness probe before each write, REPEATABLE READ READ ONLY around
/// each read, COMMIT. `false` sends one autocommitted statement per operation (the floor).
final class RawLibPQLimit: BenchTarget {
    private var conn: OpaquePointer?
    private let table: String
    private let namespace = "bench"
    private let transactions: Bool
    private let lockKey = PostgresBackend.advisoryLockKey(namespace: "bench")
    private let sealer: RawSealer

    /// `table`: a table several instances share (the concurrency rows); by default one of its own.
    init(url: String, passwordEnv: String?, transactions: Bool, table shared: String? = nil) throws {
        self.transactions = transactions
        sealer = try RawSealer()
        var pairs: [(String, String)] = [("connect_timeout", "5"), ("dbname", url)]
        if let passwordEnv, let password = ProcessInfo.processInfo.environment[passwordEnv] {
            pairs.append(("password", password))
        }
        let keywords: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0.0) } + [nil]
        let values: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0.1) } + [nil]
        defer { for p in keywords + values { free(p) } }
        conn = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in PQconnectdbParams(k.baseAddress, v.baseAddress, 1) }
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            throw BenchFailure("libpq could not connect: \(String(cString: PQerrorMessage(conn)))")
        }
        table = shared ?? PostgresBenchServer.freshName("bench_raw")
        try exec("""
            SET client_min_messages = warning;
            CREATE TABLE IF NOT EXISTS \(table)(id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, namespace text NOT NULL,
                                  khash bytea NOT NULL, svc bytea NOT NULL, value bytea NOT NULL,
                                  UNIQUE (namespace, khash));
            CREATE INDEX IF NOT EXISTS \(table)_svc ON \(table)(namespace, svc);
            """)
    }

    deinit { close() }

    func close() {
        if conn != nil {
            try? exec("DROP TABLE IF EXISTS \(table)")
            PQfinish(conn)
        }
        conn = nil
        sealer.wipe()
    }

    private func exec(_ sql: String) throws {
        let result = PQexec(conn, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw BenchFailure("libpq could not run \(sql.prefix(40)): \(String(cString: PQerrorMessage(conn)))")
        }
    }

    private var names: [String: String] = [:]

    private func execute(_ sql: String, _ params: [[UInt8]], _ rows: (OpaquePointer) throws -> Void) throws -> Int {
        guard let name = names[sql] else { throw BenchFailure("Statement not prepared: \(sql)") }
        let lengths = params.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: params.count)
        let buffers: [UnsafeMutablePointer<CChar>?] = params.map { bytes in
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, bytes.count))
            bytes.withUnsafeBytes { if let base = $0.baseAddress { UnsafeMutableRawPointer(p).copyMemory(from: base, byteCount: bytes.count) } }
            return p
        }
        defer { for b in buffers { b?.deallocate() } }
        let values = buffers.map { UnsafePointer($0) }
        let result = values.withUnsafeBufferPointer { v in
            lengths.withUnsafeBufferPointer { l in
                formats.withUnsafeBufferPointer { f in
                    PQexecPrepared(conn, name, Int32(params.count), v.baseAddress, l.baseAddress, f.baseAddress, 1)
                }
            }
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard let result, status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw BenchFailure("libpq statement failed (\(sql.prefix(40))): \(String(cString: PQerrorMessage(conn)))")
        }
        try rows(result)
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    private func prepareOnce(_ sql: String, _ types: [Oid]) throws {
        guard names[sql] == nil else { return }
        let name = "s\(names.count)"
        let result = types.withUnsafeBufferPointer { PQprepare(conn, name, sql, Int32(types.count), $0.baseAddress) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw BenchFailure("libpq could not prepare \(sql): \(String(cString: PQerrorMessage(conn)))")
        }
        names[sql] = name
    }

    /// One statement: prepared on first use, then executed.
    @discardableResult
    private func run(_ sql: String, _ params: [[UInt8]], types: [Oid], _ rows: (OpaquePointer) throws -> Void = { _ in })
        throws -> Int
    {
        try prepareOnce(sql, types)
        return try execute(sql, params, rows)
    }

    // MARK: Hashes and sealing (shared with RawSQLiteLimit)

    private func hash(_ parts: [String]) -> [UInt8] { sealer.hash(parts) }

    private func seal(_ secret: Data, service: String, account: String, ad: [UInt8]) -> [UInt8] {
        sealer.seal(secret, service: service, account: account, ad: ad)
    }

    /// Opens the value at (row, column); returns the secret's length.
    private func open(_ result: OpaquePointer, row: Int32, column: Int32, ad: [UInt8]) throws -> Int {
        let count = Int(PQgetlength(result, row, column))
        guard let raw = PQgetvalue(result, row, column) else { throw BenchFailure("An empty value.") }
        return try sealer.open(UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: count, ad: ad)
    }

    private func bytes(_ row: OpaquePointer, _ r: Int32, _ c: Int32) -> [UInt8] {
        let n = Int(PQgetlength(row, r, c))
        guard let p = PQgetvalue(row, r, c) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    // MARK: Operations

    private static let text: Oid = 25, bytea: Oid = 17
    private var ns: [UInt8] { Array(namespace.utf8) }

    private func write<T>(_ body: () throws -> T) throws -> T {
        guard transactions else { return try body() }
        try exec("BEGIN; SELECT pg_advisory_xact_lock(\(lockKey))")
        do {
            let result = try body()
            try exec("COMMIT")
            return result
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    private func read<T>(_ body: () throws -> T) throws -> T {
        guard transactions else { return try body() }
        try exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let result = try body()
            try exec("COMMIT")
            return result
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    /// The backend's uniqueness probe / find before a write (its row, if any, is opened as the core would).
    private func probe(_ khash: [UInt8]) throws -> Int {
        var found = 0
        try run("SELECT id, value FROM \(table) WHERE namespace = $1 AND khash = $2", [ns, khash],
                types: [Self.text, Self.bytea]) { result in
            found = Int(PQntuples(result))
            for r in 0..<Int32(found) { _ = try open(result, row: r, column: 1, ad: khash) }
        }
        return found
    }

    func add(service: String, account: String, secret: Data) throws {
        let khash = hash([service, account])
        try write {
            if transactions, try probe(khash) != 0 { throw BenchFailure("Duplicate item \(service)/\(account).") }
            try run("INSERT INTO \(table)(namespace, khash, svc, value) VALUES ($1, $2, $3, $4)",
                    [ns, khash, hash([service]), seal(secret, service: service, account: account, ad: khash)],
                    types: [Self.text, Self.bytea, Self.bytea, Self.bytea])
        }
    }

    func lookup(service: String, account: String) throws -> Int {
        let khash = hash([service, account])
        return try read {
            var length: Int?
            try run("SELECT value FROM \(table) WHERE namespace = $1 AND khash = $2", [ns, khash],
                    types: [Self.text, Self.bytea]) { result in
                if PQntuples(result) > 0 { length = try open(result, row: 0, column: 0, ad: khash) }
            }
            guard let length else { throw BenchFailure("No item \(service)/\(account).") }
            return length
        }
    }

    func list(service: String) throws -> Int {
        try read {
            var count = 0
            try run("SELECT value, khash FROM \(table) WHERE namespace = $1 AND svc = $2 ORDER BY id", [ns, hash([service])],
                    types: [Self.text, Self.bytea]) { result in
                count = Int(PQntuples(result))
                for r in 0..<Int32(count) { _ = try open(result, row: r, column: 0, ad: bytes(result, r, 1)) }
            }
            return count
        }
    }

    func update(service: String, account: String, secret: Data) throws {
        let khash = hash([service, account])
        let changed = try write {
            if transactions, try probe(khash) != 1 { throw BenchFailure("No item \(service)/\(account) to update.") }
            return try run("UPDATE \(table) SET value = $3 WHERE namespace = $1 AND khash = $2",
                           [ns, khash, seal(secret, service: service, account: account, ad: khash)],
                           types: [Self.text, Self.bytea, Self.bytea])
        }
        guard changed == 1 else { throw BenchFailure("No item \(service)/\(account) to update.") }
    }

    func delete(service: String, account: String) throws {
        let khash = hash([service, account])
        let removed = try write {
            if transactions, try probe(khash) != 1 { throw BenchFailure("No item \(service)/\(account) to delete.") }
            return try run("DELETE FROM \(table) WHERE namespace = $1 AND khash = $2", [ns, khash],
                           types: [Self.text, Self.bytea])
        }
        guard removed == 1 else { throw BenchFailure("No item \(service)/\(account) to delete.") }
    }

    func clear() throws {
        _ = try write { try run("DELETE FROM \(table) WHERE namespace = $1", [ns], types: [Self.text]) }
    }

    func storageBytes() throws -> Int? { nil }
}

/// Throughput of concurrent callers: T threads (1, 4, 16) each adding its own items, then looking them up,
/// through one `PostgresStore` (its connection pool) and through T raw libpq connections sending the same
/// statements (`RawLibPQLimit(transactions: true)`, one shared table). Writers of a namespace are serialized
/// by its advisory lock in both. `securestore-bench --postgres-concurrency` prints the Markdown rows.
enum PostgresConcurrencyBench {
    static func run(threads: [Int] = [1, 4, 16], poolSizes: [Int] = [PostgresBackend.defaultPoolSize, 16],
                    adds: Int = 1_600, lookups: Int = 6_400) throws -> String {
        guard let url = PostgresBenchServer.url else {
            throw BenchFailure("No server: set SECURESTORE_BENCH_POSTGRES_URL or run under scripts/with-postgres.sh")
        }
        let passwordEnv = PostgresBenchServer.passwordEnv
        var lines = ["| threads | target | add ops/s | lookup ops/s |", "|---:|---|---:|---:|"]
        for t in threads {
            for pool in poolSizes {
                let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
                let store = try PostgresStore(url: url, key: .raw(key), namespace: PostgresBenchServer.freshName("conc"),
                                              passwordEnv: passwordEnv, poolSize: pool, rememberHost: false)
                let (a, l) = try measure(threads: t, adds: adds, lookups: lookups) { _ in
                    ({ (name: String) throws in
                        _ = try store.add(NewItem(.genericPassword, [.service: .string("conc"), .account: .string(name)],
                                                  data: Data(repeating: 7, count: 32)), returning: [])
                    }, { (name: String) throws in
                        guard try store.items(matching: ItemQuery(.genericPassword, [.service: .string("conc"), .account: .string(name)],
                                                               returning: .data)).first?.data?.count == 32 else {
                            throw BenchFailure("lookup of \(name) failed")
                        }
                    })
                }
                _ = try? store.clear()
                lines.append("| \(t) | PostgresStore, pool \(pool) | \(a) | \(l) |")
            }
            let table = PostgresBenchServer.freshName("bench_conc")
            let raws = try (0..<t).map { _ in try RawLibPQLimit(url: url, passwordEnv: passwordEnv, transactions: true, table: table) }
            let (a, l) = try measure(threads: t, adds: adds, lookups: lookups) { i in
                let raw = raws[i]
                return ({ (name: String) throws in try raw.add(service: "conc", account: name, secret: Data(repeating: 7, count: 32)) },
                        { (name: String) throws in
                            guard try raw.lookup(service: "conc", account: name) == 32 else { throw BenchFailure("lookup of \(name) failed") }
                        })
            }
            for raw in raws { raw.close() }
            lines.append("| \(t) | raw libpq, \(t) connection\(t == 1 ? "" : "s"), a transaction per call | \(a) | \(l) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    typealias Operation = (String) throws -> Void

    /// Runs `adds` adds then `lookups` lookups split over `threads` threads; each thread's operations come
    /// from `make(threadIndex)`. Returns (add ops/s, lookup ops/s).
    static func measure(threads: Int, adds: Int, lookups: Int, _ make: (Int) -> (add: Operation, lookup: Operation))
        throws -> (Int, Int)
    {
        let operations = (0..<threads).map(make)
        let failures = NSLock()
        nonisolated(unsafe) var firstFailure: (any Error)?
        func phase(_ perThread: Int, _ body: @escaping @Sendable (Int, Int) throws -> Void) -> Double {
            let group = DispatchGroup()
            let start = monotonicNanoseconds()
            for t in 0..<threads {
                group.enter()
                let thread = Thread {
                    defer { group.leave() }
                    for i in 0..<perThread {
                        do { try body(t, i) } catch {
                            failures.lock()
                            if firstFailure == nil { firstFailure = error }
                            failures.unlock()
                            return
                        }
                    }
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
            group.wait()
            return Double(monotonicNanoseconds() - start) / 1e9
        }
        let box = OperationsBox(operations)
        let addsPerThread = max(1, adds / threads), lookupsPerThread = max(1, lookups / threads)
        let addSeconds = phase(addsPerThread) { t, i in try box.operations[t].add("t\(t)-\(i)") }
        if let firstFailure { throw firstFailure }
        let lookupSeconds = phase(lookupsPerThread) { t, i in try box.operations[t].lookup("t\(t)-\(i % addsPerThread)") }
        if let firstFailure { throw firstFailure }
        return (Int(Double(addsPerThread * threads) / addSeconds), Int(Double(lookupsPerThread * threads) / lookupSeconds))
    }

    /// The per-thread operations handed to the threads (each thread uses only its own entry).
    final class OperationsBox: @unchecked Sendable {
        let operations: [(add: Operation, lookup: Operation)]
        init(_ operations: [(add: Operation, lookup: Operation)]) { self.operations = operations }
    }
}
