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
        root = Self.scratchPath
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { removeScratch() }

    /// Removes this run's scratch folder (`exit` runs no deinitializers, so main calls this itself).
    func removeScratch() { try? FileManager.default.removeItem(atPath: root) }

    /// This process's scratch folder: `$TMPDIR` (else `/var/tmp`, a real disk) + `securestore-bench-PID`.
    static var scratchPath: String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/var/tmp"
        return base + "/securestore-bench-\(getpid())"
    }

    static func removeScratchOfFailedRun() { try? FileManager.default.removeItem(atPath: scratchPath) }

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

    /// The backend and its limits, as (name, is a limit, maker).
    private func targets(_ entry: BackendEntry, suffix: String = "") -> [TargetSpec] {
        var specs = [TargetSpec(name: entry.name + suffix, isLimit: false) { folder in
            let store = try entry.makeStore(folder)
            if let makeTarget = entry.makeTarget { return makeTarget(store) }
            return StoreTarget(store, databasePath: entry.databaseFile?(folder), listWithSecrets: entry.listWithSecrets)
        }]
        for limit in entry.limits {
            specs.append(TargetSpec(name: "\(entry.name) limit: \(limit.name)" + suffix, isLimit: true, make: limit.make))
        }
        return specs
    }

    /// Interleaved (every phase alternates between the backend and its limits in chunks, so a slow spell of
    /// the disk or CPU hits all of them alike), or one target after the other.
    private func groups(_ specs: [TargetSpec], _ entry: BackendEntry) -> [[TargetSpec]] {
        entry.interleave ? [specs] : specs.map { [$0] }
    }

    private func run(_ entry: BackendEntry) throws {
        try warmUp(entry)
        let services = (0..<entry.services).map { "svc-\($0)" }
        for n in entry.counts(options) {
            let accounts = (0..<n).map { "acct-\($0)" }
            for size in options.secretSizes {
                var rows: [Measurement] = []
                for group in groups(targets(entry), entry) {
                    rows += try measure(group, backend: entry.name, n: n, size: size, accounts: accounts,
                                        services: services)
                }
                let referenceName = entry.limits.first.map { "\(entry.name) limit: \($0.name)" }
                let reference = rows.filter { $0.target == referenceName }
                for index in rows.indices where !rows[index].isLimit {
                    guard let limit = reference.first(where: { $0.op == rows[index].op }) else { continue }
                    rows[index].limitTarget = limit.target
                    rows[index].limitMedianMicros = limit.medianMicros
                    rows[index].ratio = limit.medianMicros > 0 ? rows[index].medianMicros / limit.medianMicros : nil
                }
                // Limits first, then the backend row (the tables list them so).
                measurements += rows.filter(\.isLimit) + rows.filter { !$0.isLimit }
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
        for group in groups(targets(entry, suffix: " (warm-up)"), entry) {
            _ = try measure(group, backend: entry.name, n: n, size: 32, accounts: accounts, services: services)
        }
    }

    /// Operations per turn when targets are interleaved.
    static let chunk = 25

    /// Times every operation on each target of `group` (interleaved in chunks when the group has several).
    private func measure(_ group: [TargetSpec], backend: String, n: Int, size: Int,
                         accounts: [String], services: [String]) throws -> [Measurement] {
        let title = "\(group.map(\.name).joined(separator: " + ")) N=\(n) \(Report.size(size))"
        ResidentMemory.trim()
        let perCase = ResidentMemory.resetPeak()
        var slots: [Slot] = []
        defer {
            for slot in slots {
                slot.target.close()
                try? FileManager.default.removeItem(atPath: slot.folder)
            }
        }
        for spec in group {
            let folder = root + "/" + spec.name.map { $0.isLetter || $0.isNumber ? $0 : "-" } + "-\(n)-\(size)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let before = ResidentMemory.current().resident
            let target = try spec.make(folder)
            let slot = Slot(spec: spec, folder: folder, target: target, isFileBacked: try target.storageBytes() != nil)
            slot.rssGrowth = ResidentMemory.current().resident - before
            slots.append(slot)
        }

        var generator = SplitMix64(seed: UInt64(n) &* 1_000_003 &+ UInt64(size))
        let secret = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let newSecret = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })

        /// Runs `count` timed operations on every target, `chunk` at a time per target, rotating which target
        /// goes first; returns each slot's times. `setup` runs untimed before each operation.
        func phase(_ label: String, count: Int, untimedSetup: ((Int) -> Void)? = nil,
                   _ op: (any BenchTarget, Int) throws -> Void) throws -> [[UInt64]] {
            var times = [[UInt64]](repeating: [], count: slots.count)
            for s in slots.indices { times[s].reserveCapacity(count) }
            for s in slots.indices { slots[s].markWrites() }
            var turn = 0
            var start = 0
            while start < count {
                let end = min(count, start + (slots.count > 1 ? Self.chunk : count))
                if start % 2_000 < Self.chunk || slots.count == 1 {
                    progress.say("\(title): \(label) \(start)/\(count)")
                }
                for k in 0..<slots.count {
                    let s = (k + turn) % slots.count
                    let slot = slots[s]
                    let rssBefore = label == "add" ? ResidentMemory.current().resident : 0
                    slot.resumeWrites()
                    for i in start..<end {
                        untimedSetup?(i)
                        let t0 = monotonicNanoseconds()
                        try op(slot.target, i)
                        times[s].append(monotonicNanoseconds() - t0)
                    }
                    slot.pauseWrites()
                    if label == "add" { slot.rssGrowth += ResidentMemory.current().resident - rssBefore }
                }
                turn += 1
                start = end
            }
            return times
        }

        var rows = [[Measurement]](repeating: [], count: slots.count)
        func record(_ op: Op, _ times: [[UInt64]]) {
            for s in slots.indices {
                let summary = Summary(nanoseconds: times[s])
                var m = Measurement(target: slots[s].spec.name, backend: backend, isLimit: slots[s].spec.isLimit, n: n,
                                    secretBytes: size, op: op, samples: summary.samples,
                                    medianMicros: summary.medianMicros, p99Micros: summary.p99Micros,
                                    opsPerSecond: summary.opsPerSecond, totalMillis: nil)
                (m.writtenBytesPerOp, m.writeCallsPerOp) = slots[s].writtenPerOp(times[s].count)
                rows[s].append(m)
            }
        }

        // add: fill N items. A distinct secret per item (its own buffer, made before the clock starts), so
        // memory and file figures count every secret.
        var itemSecret = secret
        record(.add, try phase("add", count: n, untimedSetup: { i in
            itemSecret = secret
            itemSecret[0] = UInt8(truncatingIfNeeded: i)
            itemSecret[itemSecret.count - 1] = UInt8(truncatingIfNeeded: i >> 8)
        }) { target, i in
            try target.add(service: services[i % services.count], account: accounts[i], secret: itemSecret)
        })

        // lookup by full uniqueness key (the same random items for every target).
        let lookups = (0..<options.lookupSamples).map { _ in Int.random(in: 0..<n, using: &generator) }
        record(.lookup, try phase("lookup", count: lookups.count) { target, k in
            let i = lookups[k]
            let got = try target.lookup(service: services[i % services.count], account: accounts[i])
            guard got == size else { throw BenchFailure("\(title): lookup returned \(got) bytes, not \(size).") }
        })

        // list every item of one service, with attributes.
        let lists = (0..<options.listSamples).map { _ in Int.random(in: 0..<min(services.count, n), using: &generator) }
        record(.list, try phase("list", count: lists.count) { target, k in
            let s = lists[k]
            let got = try target.list(service: services[s])
            let expected = (n - 1 - s) / services.count + 1
            guard got == expected else { throw BenchFailure("\(title): list found \(got) items, not \(expected).") }
        })

        // update one item's secret.
        let updates = (0..<options.writeSamples).map { _ in Int.random(in: 0..<n, using: &generator) }
        record(.update, try phase("update", count: updates.count) { target, k in
            let i = updates[k]
            try target.update(service: services[i % services.count], account: accounts[i], secret: newSecret)
        })

        // Storage after the fill and updates (a checkpoint: no operation's writes).
        var storage: [Int?] = []
        for slot in slots { storage.append(try slot.target.storageBytes()) }

        // delete distinct items (the same ones everywhere), leaving items for clear.
        var order = Array(0..<n)
        order.shuffle(using: &generator)
        let deletions = Array(order.prefix(max(1, min(options.writeSamples, n / 2))))
        record(.delete, try phase("delete", count: deletions.count) { target, k in
            let i = deletions[k]
            try target.delete(service: services[i % services.count], account: accounts[i])
        })

        // clear the whole store: one timing per target.
        progress.say("\(title): clear")
        let remaining = n - deletions.count
        for s in slots.indices {
            slots[s].markWrites()
            slots[s].resumeWrites()
            let start = monotonicNanoseconds()
            try slots[s].target.clear()
            let elapsed = monotonicNanoseconds() - start
            slots[s].pauseWrites()
            let perItem = remaining > 0 ? elapsed / UInt64(remaining) : elapsed
            var clear = Measurement(target: slots[s].spec.name, backend: backend, isLimit: slots[s].spec.isLimit, n: n,
                                    secretBytes: size, op: .clear, samples: 1,
                                    medianMicros: Double(perItem) / 1_000, p99Micros: Double(perItem) / 1_000,
                                    opsPerSecond: elapsed > 0 ? Double(remaining) * 1e9 / Double(elapsed) : 0,
                                    totalMillis: Double(elapsed) / 1e6)
            (clear.writtenBytesPerOp, clear.writeCallsPerOp) = slots[s].writtenPerOp(max(1, remaining))
            rows[s].append(clear)
        }

        let peak = ResidentMemory.current().peak
        for s in slots.indices {
            cases.append(CaseResult(target: slots[s].spec.name, backend: backend, isLimit: slots[s].spec.isLimit, n: n,
                                    secretBytes: size, peakRSSBytes: peak, peakIsPerCase: perCase && slots.count == 1,
                                    rssGrowthBytes: slots[s].rssGrowth, storageBytes: storage[s],
                                    storageBytesPerItem: storage[s].map { Double($0) / Double(n) }))
        }
        progress.say("\(title): done")
        return rows.flatMap { $0 }
    }
}

/// A target to make: a backend or one of its limits.
struct TargetSpec {
    let name: String
    let isLimit: Bool
    let make: (_ folder: String) throws -> any BenchTarget
}

/// One live target of a case, with its own write counters (accumulated only while its operations run).
final class Slot {
    let spec: TargetSpec
    let folder: String
    let target: any BenchTarget
    let isFileBacked: Bool
    var rssGrowth = 0
    private var written = (bytes: 0, calls: 0)
    private var since: (bytes: Int, calls: Int)? = nil

    init(spec: TargetSpec, folder: String, target: any BenchTarget, isFileBacked: Bool) {
        self.spec = spec
        self.folder = folder
        self.target = target
        self.isFileBacked = isFileBacked
    }

    /// Starts a new phase's count.
    func markWrites() { written = (0, 0) }
    func resumeWrites() { since = WriteCounters.read() }
    func pauseWrites() {
        guard let since, let now = WriteCounters.read() else { return }
        written.bytes += now.bytes - since.bytes
        written.calls += now.calls - since.calls
        self.since = nil
    }
    func writtenPerOp(_ count: Int) -> (bytes: Double?, calls: Double?) {
        guard isFileBacked, count > 0 else { return (nil, nil) }
        return (Double(written.bytes) / Double(count), Double(written.calls) / Double(count))
    }
}
