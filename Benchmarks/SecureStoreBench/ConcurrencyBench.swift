import Foundation
import SecureStoreCore
import SecureStoreInMemory
import SecureStoreSQLite
import SecureStoreSecretService
import SecureStorePostgres

// `securestore-bench --concurrency [--only memory,sqlite,secret-service,postgres,postgres-1ms]`
//
// Throughput of 1, 4 and 16 concurrent callers of ONE store object, lookups (`item(matching:)` of one of 100
// items) and adds, through the async API (that many tasks) and through the sync API (that many threads),
// for every backend that can be reached: memory, SQLite, the Secret Service (a session bus with an unlocked
// keyring: scripts/with-keyring.sh), PostgreSQL on loopback and PostgreSQL behind Benchmarks/delay-proxy.py,
// which holds every chunk 1 ms in each direction (a server: scripts/with-postgres.sh). Prints Markdown: the
// issue's table (2,000 lookups one after another, by 16 tasks, by 16 threads) and the full table, whose last
// column checks the goal: 16 async tasks reach at least 0.8× the throughput of 16 threads.
//
// Each figure is the best of `repeats` runs, async and threads alternating, so both meet the same noise.

enum ConcurrencyBench {
    struct Subject {
        let name: String
        let make: () throws -> any SecureStore
        var lookups = 2_000
        var adds = 320
    }

    struct Row {
        let callers: Int
        var asyncLookups = 0.0, threadLookups = 0.0, asyncAdds = 0.0, threadAdds = 0.0
        /// Tasks that prefer the store's executor (its thread pool).
        var ownLookups = 0.0, ownAdds = 0.0
    }

    static let callerCounts = [1, 4, 16]
    static let repeats = 3

    static func run(_ arguments: [String]) throws -> String {
        var only: Set<String>? = nil
        if let i = arguments.firstIndex(of: "--only"), i + 1 < arguments.count {
            only = Set(arguments[i + 1].split(separator: ",").map(String.init))
        }
        var proxy: DelayProxy? = nil
        defer { proxy?.stop() }
        var subjects: [Subject] = [
            Subject(name: "memory", make: { try InMemoryStore() }),
            Subject(name: "SQLite (WAL)", make: {
                let folder = NSTemporaryDirectory() + "securestore-conc-\(UInt64.random(in: 0...UInt64.max))"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false,
                                                        attributes: [.posixPermissions: 0o700])
                return try SQLiteStore(path: folder + "/store.db", key: .raw(randomKey()))
            }),
            Subject(name: "Secret Service (gnome-keyring)", make: {
                try SecretServiceStore(namespace: "securestore-conc-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            }, lookups: 1_000, adds: 96),
        ]
        if let url = PostgresBenchServer.url {
            let passwordEnv = PostgresBenchServer.passwordEnv
            subjects.append(Subject(name: "PostgreSQL, loopback (pool of 4)", make: {
                try PostgresStore(url: url, key: .raw(randomKey()), namespace: PostgresBenchServer.freshName("conc"),
                                  passwordEnv: passwordEnv, rememberHost: false)
            }))
            if only == nil || only?.contains("postgres-1ms") == true {
                proxy = try DelayProxy(url: url, delayMilliseconds: 1)
            }
            if let proxied = proxy?.url {
                subjects.append(Subject(name: "PostgreSQL, 1 ms proxy each way (pool of 4)", make: {
                    try PostgresStore(url: proxied, key: .raw(randomKey()), namespace: PostgresBenchServer.freshName("conc"),
                                      passwordEnv: passwordEnv, rememberHost: false)
                }, lookups: 1_000, adds: 160))
            }
        }
        let keys: [String: String] = ["memory": "memory", "SQLite (WAL)": "sqlite",
                                      "Secret Service (gnome-keyring)": "secret-service",
                                      "PostgreSQL, loopback (pool of 4)": "postgres",
                                      "PostgreSQL, 1 ms proxy each way (pool of 4)": "postgres-1ms"]
        if let only { subjects = subjects.filter { only.contains(keys[$0.name] ?? $0.name) } }

        var summary = ["| store | one after another (async) | 16 async tasks | 16 async tasks on the store's executor | 16 threads, sync API |",
                       "|---|---|---|---|---|"]
        var full = ["| store | callers | lookups/s async | lookups/s threads | async/threads | adds/s async | adds/s threads | async/threads "
                    + "| lookups/s async, store's executor | ÷ threads | adds/s async, store's executor | ÷ threads |",
                    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        var notMeasured: [String] = []
        for subject in subjects {
            FileHandle.standardError.write(Data("concurrency: \(subject.name)…\n".utf8))
            let store: any SecureStore
            do { store = try subject.make() } catch {
                notMeasured.append("- \(subject.name): not measured (\(error))")
                continue
            }
            do {
                let rows = try measure(store, subject)
                for row in rows {
                    full.append("| \(subject.name) | \(row.callers) | \(Int(row.asyncLookups)) | \(Int(row.threadLookups)) | "
                        + String(format: "%.2f", row.asyncLookups / row.threadLookups) + " | \(Int(row.asyncAdds)) | "
                        + "\(Int(row.threadAdds)) | " + String(format: "%.2f", row.asyncAdds / row.threadAdds) + " | "
                        + "\(Int(row.ownLookups)) | " + String(format: "%.2f", row.ownLookups / row.threadLookups) + " | "
                        + "\(Int(row.ownAdds)) | " + String(format: "%.2f", row.ownAdds / row.threadAdds) + " |")
                }
                // The issue's table: 2,000 lookups (of 100 items) at each measured rate.
                func seconds(_ rate: Double) -> String { String(format: "%.3f s", 2_000 / rate) }
                if let one = rows.first(where: { $0.callers == 1 }), let sixteen = rows.first(where: { $0.callers == 16 }) {
                    summary.append("| \(subject.name) | \(seconds(one.asyncLookups)) | \(seconds(sixteen.asyncLookups)) "
                        + String(format: "(%.1f×)", sixteen.asyncLookups / one.asyncLookups)
                        + " | \(seconds(sixteen.ownLookups)) " + String(format: "(%.1f×)", sixteen.ownLookups / one.asyncLookups)
                        + " | \(seconds(sixteen.threadLookups)) "
                        + String(format: "(%.1f×)", sixteen.threadLookups / one.asyncLookups) + " |")
                }
            } catch {
                notMeasured.append("- \(subject.name): failed (\(error))")
            }
            _ = try? store.clear()
        }
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
        return "2,000 lookups of 100 items by `item(matching:)`, one store object (load average before: \(load)):\n\n"
            + summary.joined(separator: "\n") + "\n\nThroughput by callers (best of \(repeats); goal: async/threads ≥ 0.8 at 16 callers; on the store's executor: the tasks prefer the store's thread pool, Task(executorPreference: store.threadPool)):\n\n"
            + full.joined(separator: "\n") + "\n" + (notMeasured.isEmpty ? "" : "\n" + notMeasured.joined(separator: "\n") + "\n")
    }

    static func randomKey() -> Data { Data((0..<32).map { _ in UInt8.random(in: 0...255) }) }

    static func lookupQuery(_ k: Int) -> ItemQuery {
        ItemQuery(.genericPassword, [.service: "conc", .account: .string("i\(k % 100)")], returning: .data)
    }

    /// The rows of one store: 100 items, a warm-up (opens every connection), then each caller count.
    static func measure(_ store: any SecureStore, _ subject: Subject) throws -> [Row] {
        for i in 0..<100 {
            try store.add(NewItem(.genericPassword, [.service: "conc", .account: .string("i\(i)")],
                                  data: Data(repeating: 7, count: 32)), returning: [])
        }
        _ = try threads(16, 320) { _, i in try lookup(store, i) }
        _ = try tasks(16, 320) { _, i in try await lookupAsync(store, i) }
        var run = 0
        return try callerCounts.map { callers in
            var row = Row(callers: callers)
            for _ in 0..<repeats {
                row.asyncLookups = max(row.asyncLookups, try tasks(callers, subject.lookups) { _, i in try await lookupAsync(store, i) })
                row.threadLookups = max(row.threadLookups, try threads(callers, subject.lookups) { _, i in try lookup(store, i) })
                run += 1
                let a = run
                row.asyncAdds = max(row.asyncAdds, try tasks(callers, subject.adds) { c, i in
                    try await store.add(newItem("a\(a)-\(c)-\(i)"), returning: [], timeout: nil)
                })
                row.threadAdds = max(row.threadAdds, try threads(callers, subject.adds) { c, i in
                    try store.add(newItem("t\(a)-\(c)-\(i)"), returning: [])
                })
                row.ownLookups = max(row.ownLookups, try tasks(callers, subject.lookups, preferring: store.threadPool) { _, i in
                    try await lookupAsync(store, i)
                })
                row.ownAdds = max(row.ownAdds, try tasks(callers, subject.adds, preferring: store.threadPool) { c, i in
                    try await store.add(newItem("e\(a)-\(c)-\(i)"), returning: [], timeout: nil)
                })
            }
            return row
        }
    }

    static func newItem(_ name: String) -> NewItem {
        NewItem(.genericPassword, [.service: "conc-add", .account: .string(name)], data: Data(repeating: 9, count: 32))
    }

    static func lookup(_ store: any SecureStore, _ i: Int) throws {
        guard try store.item(matching: lookupQuery(i))?.data?.count == 32 else { throw BenchFailure("lookup \(i) found nothing") }
    }

    static func lookupAsync(_ store: any SecureStore, _ i: Int) async throws {
        guard try await store.item(matching: lookupQuery(i), timeout: nil)?.data?.count == 32 else {
            throw BenchFailure("lookup \(i) found nothing")
        }
    }

    /// `total` operations split over `callers` threads calling the sync API; operations per second.
    static func threads(_ callers: Int, _ total: Int, _ op: @escaping @Sendable (Int, Int) throws -> Void) throws -> Double {
        let each = max(1, total / callers)
        let failure = Failure()
        let group = DispatchGroup()
        let start = monotonicNanoseconds()
        for c in 0..<callers {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                for i in 0..<each {
                    do { try op(c, c * each + i) } catch {
                        failure.set(error)
                        return
                    }
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        if let error = failure.get() { throw error }
        return Double(each * callers) / seconds
    }

    /// `total` operations split over `callers` tasks calling the async API; operations per second. With
    /// `executor`, the tasks prefer it (the store's own threads: `StoreThreadPool` is a `TaskExecutor`).
    static func tasks(_ callers: Int, _ total: Int, preferring executor: (any TaskExecutor)? = nil,
                      _ op: @escaping @Sendable (Int, Int) async throws -> Void) throws -> Double {
        let each = max(1, total / callers)
        let failure = Failure()
        let done = DispatchSemaphore(value: 0)
        let elapsed = Failure.Box()
        Task.detached {
            let start = monotonicNanoseconds()
            await withTaskGroup(of: Void.self) { group in
                for c in 0..<callers {
                    group.addTask(executorPreference: executor) {
                        for i in 0..<each {
                            do { try await op(c, c * each + i) } catch {
                                failure.set(error)
                                return
                            }
                        }
                    }
                }
            }
            elapsed.set(monotonicNanoseconds() - start)
            done.signal()
        }
        done.wait()
        if let error = failure.get() { throw error }
        return Double(each * callers) / (Double(elapsed.get()) / 1e9)
    }

    /// The first error of a run.
    final class Failure: @unchecked Sendable {   // `error` only under `lock`
        private let lock = NSLock()
        private var error: (any Error)?
        func set(_ e: any Error) {
            lock.lock()
            if error == nil { error = e }
            lock.unlock()
        }
        func get() -> (any Error)? {
            lock.lock()
            defer { lock.unlock() }
            return error
        }

        final class Box: @unchecked Sendable {   // `value` only under `lock`
            private let lock = NSLock()
            private var value: UInt64 = 0
            func set(_ v: UInt64) {
                lock.lock()
                value = v
                lock.unlock()
            }
            func get() -> UInt64 {
                lock.lock()
                defer { lock.unlock() }
                return value
            }
        }
    }
}

/// Benchmarks/delay-proxy.py in front of the PostgreSQL server of `url` (postgresql://USER@HOST:PORT/DB),
/// started here and stopped by closing its stdin.
final class DelayProxy {
    let url: String
    private let process: Process
    private let input: Pipe

    init(url: String, delayMilliseconds: Int) throws {
        guard let at = url.range(of: "@"), let slash = url[at.upperBound...].firstIndex(of: "/"),
              let colon = url[at.upperBound..<slash].lastIndex(of: ":"),
              let port = Int(url[url.index(after: colon)..<slash]) else {
            throw BenchFailure("The PostgreSQL URL \(url) is not postgresql://USER@HOST:PORT/DB; no proxy row.")
        }
        let host = String(url[at.upperBound..<colon])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("delay-proxy.py").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, host, String(port), String(delayMilliseconds)]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        guard let proxyPort = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw BenchFailure("delay-proxy.py did not start (\(script)).")
        }
        self.url = String(url[..<colon]) + ":\(proxyPort)" + String(url[slash...])
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
