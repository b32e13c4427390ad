import SecureStoreConformance
import Foundation

/// The timed operations.
enum Op: String, Codable, CaseIterable, Sendable {
    case add, lookup, list, update, delete, clear

    var label: String {
        switch self {
        case .add: "add"
        case .lookup: "lookup (service+account)"
        case .list: "list service (all, attributes; secret-service: + secrets)"
        case .update: "update secret"
        case .delete: "delete"
        case .clear: "clear (per item)"
        }
    }
}

/// One operation's figures for one target at one N and secret size.
struct Measurement: Codable {
    let target: String
    let backend: String
    let isLimit: Bool
    let n: Int
    let secretBytes: Int
    let op: Op
    let samples: Int
    let medianMicros: Double
    let p99Micros: Double
    let opsPerSecond: Double
    /// Clear only: the one timing in milliseconds (median/p99 are then µs per item).
    let totalMillis: Double?
    /// Bytes passed to write calls per operation, and write calls per operation (targets with files).
    var writtenBytesPerOp: Double? = nil
    var writeCallsPerOp: Double? = nil
    /// Backend rows: the reference limit and backend median / limit median.
    var limitTarget: String? = nil
    var limitMedianMicros: Double? = nil
    var ratio: Double? = nil
}

/// A backend or peer that could not be measured.
struct Failure: Codable {
    let backend: String
    let reason: String
}

/// Memory and storage of one target at one N and secret size.
struct CaseResult: Codable {
    let target: String
    let backend: String
    let isLimit: Bool
    let n: Int
    let secretBytes: Int
    /// Peak resident memory of the process while this target ran (VmHWM, reset before each case when the
    /// kernel allows it; else the process's peak so far).
    let peakRSSBytes: Int
    let peakIsPerCase: Bool
    /// Resident memory after the fill minus before the target was made.
    let rssGrowthBytes: Int
    /// Database + WAL after a checkpoint (after the fill and updates, before deletes).
    let storageBytes: Int?
    let storageBytesPerItem: Double?
}

/// Runs every backend and its limits over every N and secret size.
final class Runner {
    let options: Options
    let progress = Progress()
    private(set) var measurements: [Measurement] = []
    private(set) var cases: [CaseResult] = []
    /// A scratch folder for this run (removed at the end).
    let root: String

    init(options: Options) throws {
        self.options = options
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/var/tmp"
        root = base + "/securestore-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Backends (or peers) that could not be measured, with the reason.
    private(set) var failures: [Failure] = []

    func run(_ entries: [BackendEntry]) throws {
        for entry in entries {
            do {
                try run(entry)
            } catch {
                // A backend that needs a service (a session bus with a keyring) is reported, not fatal.
                guard entry.needsService else { throw error }
                progress.finish()
                failures.append(Failure(backend: entry.name, reason: "\(error)"))
                FileHandle.standardError.write(Data("securestore-bench: \(entry.name) not measured: \(error)\n".utf8))
            }
        }
        progress.finish()
    }

    func recordFailure(_ failure: Failure) { failures.append(failure) }

    private func run(_ entry: BackendEntry) throws {
        try warmUp(entry)
        let services = (0..<entry.services).map { "svc-\($0)" }
        for n in entry.counts(options) {
            let accounts = (0..<n).map { "acct-\($0)" }
            for size in options.secretSizes {
                var backendRows = try measure(target: entry.name, backend: entry.name, isLimit: false,
                                              n: n, size: size, accounts: accounts, services: services) { folder in
                    StoreTarget(try entry.makeStore(folder), databasePath: entry.databaseFile?(folder),
                                listWithSecrets: entry.listWithSecrets)
                }
                var reference: [Measurement] = []
                for (i, limit) in entry.limits.enumerated() {
                    let rows = try measure(target: "\(entry.name) limit: \(limit.name)", backend: entry.name,
                                           isLimit: true, n: n, size: size, accounts: accounts,
                                           services: services, make: limit.make)
                    if i == 0 { reference = rows }
                    measurements += rows
                }
                for index in backendRows.indices {
                    guard let limit = reference.first(where: { $0.op == backendRows[index].op }) else { continue }
                    backendRows[index].limitTarget = limit.target
                    backendRows[index].limitMedianMicros = limit.medianMicros
                    backendRows[index].ratio = limit.medianMicros > 0
                        ? backendRows[index].medianMicros / limit.medianMicros : nil
                }
                measurements += backendRows
            }
        }
    }

    /// One small untimed pass over every target, so the first timed case does not pay for cold code,
    /// page faults and the first files.
    private func warmUp(_ entry: BackendEntry) throws {
        let n = entry.warmUpItems
        let accounts = (0..<n).map { "acct-\($0)" }
        let services = (0..<entry.services).map { "svc-\($0)" }
        let casesBefore = cases.count
        defer { cases.removeSubrange(casesBefore...) }
        _ = try measure(target: entry.name + " (warm-up)", backend: entry.name, isLimit: false, n: n, size: 32,
                        accounts: accounts, services: services) { folder in
            StoreTarget(try entry.makeStore(folder), databasePath: entry.databaseFile?(folder),
                        listWithSecrets: entry.listWithSecrets)
        }
        for limit in entry.limits {
            _ = try measure(target: "\(entry.name) limit: \(limit.name) (warm-up)", backend: entry.name,
                            isLimit: true, n: n, size: 32, accounts: accounts, services: services, make: limit.make)
        }
    }

    private func measure(target name: String, backend: String, isLimit: Bool, n: Int, size: Int,
                         accounts: [String], services: [String],
                         make: (_ folder: String) throws -> any BenchTarget) throws -> [Measurement] {
        let folder = root + "/" + name.map { $0.isLetter || $0.isNumber ? $0 : "-" } + "-\(n)-\(size)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        ResidentMemory.trim()
        let perCase = ResidentMemory.resetPeak()
        let before = ResidentMemory.current().resident
        let target = try make(folder)
        defer { target.close() }
        let isFileBacked = try target.storageBytes() != nil

        var generator = SplitMix64(seed: UInt64(n) &* 1_000_003 &+ UInt64(size))
        let secret = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let newSecret = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let title = "\(name) N=\(n) \(size) B"
        var rows: [Measurement] = []
        var writes = WriteCounters.read()
        /// Write counters since the last call, per operation (only for targets with files).
        func written(_ count: Int) -> (bytes: Double?, calls: Double?) {
            let now = WriteCounters.read()
            defer { writes = now }
            guard isFileBacked, count > 0, let before = writes, let now else { return (nil, nil) }
            return (Double(now.bytes - before.bytes) / Double(count), Double(now.calls - before.calls) / Double(count))
        }
        func record(_ op: Op, _ times: [UInt64], total: Double? = nil) {
            let s = Summary(nanoseconds: times)
            var m = Measurement(target: name, backend: backend, isLimit: isLimit, n: n, secretBytes: size, op: op,
                                samples: s.samples, medianMicros: s.medianMicros, p99Micros: s.p99Micros,
                                opsPerSecond: s.opsPerSecond, totalMillis: total)
            (m.writtenBytesPerOp, m.writeCallsPerOp) = written(times.count)
            rows.append(m)
        }

        // add: fill N items.
        var times = [UInt64](repeating: 0, count: n)
        for i in 0..<n {
            if i % 2_000 == 0 { progress.say("\(title): add \(i)/\(n)") }
            // A distinct secret per item (its own buffer, made before the clock starts), so memory and file
            // figures count every secret.
            var itemSecret = secret
            itemSecret[0] = UInt8(truncatingIfNeeded: i)
            itemSecret[itemSecret.count - 1] = UInt8(truncatingIfNeeded: i >> 8)
            let start = monotonicNanoseconds()
            try target.add(service: services[i % services.count], account: accounts[i], secret: itemSecret)
            times[i] = monotonicNanoseconds() - start
        }
        record(.add, times)
        let afterFill = ResidentMemory.current().resident

        // lookup by full uniqueness key.
        progress.say("\(title): lookup")
        times = []
        for _ in 0..<options.lookupSamples {
            let i = Int.random(in: 0..<n, using: &generator)
            let start = monotonicNanoseconds()
            let got = try target.lookup(service: services[i % services.count], account: accounts[i])
            times.append(monotonicNanoseconds() - start)
            guard got == size else { throw BenchFailure("\(title): lookup returned \(got) bytes, not \(size).") }
        }
        record(.lookup, times)

        // list every item of one service, with attributes.
        progress.say("\(title): list")
        times = []
        for _ in 0..<options.listSamples {
            let s = Int.random(in: 0..<min(services.count, n), using: &generator)
            let start = monotonicNanoseconds()
            let got = try target.list(service: services[s])
            times.append(monotonicNanoseconds() - start)
            let expected = (n - 1 - s) / services.count + 1
            guard got == expected else { throw BenchFailure("\(title): list found \(got) items, not \(expected).") }
        }
        record(.list, times)

        // update one item's secret.
        progress.say("\(title): update")
        times = []
        for _ in 0..<options.writeSamples {
            let i = Int.random(in: 0..<n, using: &generator)
            let start = monotonicNanoseconds()
            try target.update(service: services[i % services.count], account: accounts[i], secret: newSecret)
            times.append(monotonicNanoseconds() - start)
        }
        record(.update, times)

        let storage = try target.storageBytes()
        _ = written(0)   // the checkpoint's writes are no operation's

        // delete distinct items.
        progress.say("\(title): delete")
        var order = Array(0..<n)
        order.shuffle(using: &generator)
        let deletions = max(1, min(options.writeSamples, n / 2))   // leave items for clear
        times = []
        for i in order.prefix(deletions) {
            let start = monotonicNanoseconds()
            try target.delete(service: services[i % services.count], account: accounts[i])
            times.append(monotonicNanoseconds() - start)
        }
        record(.delete, times)

        // clear the whole store: one timing.
        progress.say("\(title): clear")
        let remaining = n - deletions
        let start = monotonicNanoseconds()
        try target.clear()
        let elapsed = monotonicNanoseconds() - start
        let perItem = remaining > 0 ? elapsed / UInt64(remaining) : elapsed
        var clear = Measurement(target: name, backend: backend, isLimit: isLimit, n: n, secretBytes: size, op: .clear,
                                samples: 1, medianMicros: Double(perItem) / 1_000, p99Micros: Double(perItem) / 1_000,
                                opsPerSecond: elapsed > 0 ? Double(remaining) * 1e9 / Double(elapsed) : 0,
                                totalMillis: Double(elapsed) / 1e6)
        (clear.writtenBytesPerOp, clear.writeCallsPerOp) = written(max(1, remaining))
        rows.append(clear)

        cases.append(CaseResult(target: name, backend: backend, isLimit: isLimit, n: n, secretBytes: size,
                                peakRSSBytes: ResidentMemory.current().peak, peakIsPerCase: perCase,
                                rssGrowthBytes: afterFill - before, storageBytes: storage,
                                storageBytesPerItem: storage.map { Double($0) / Double(n) }))
        progress.say("\(title): done")
        return rows
    }
}
