import Foundation

/// A goal's outcome.
struct Verdict: Codable {
    let backend: String
    let goal: String
    /// "PASS", "MISS", or "NOT MEASURED".
    let verdict: String
    /// The measured figure compared with the threshold (a ratio, or seconds for clear).
    let measured: Double?
    let threshold: Double
    let detail: String
}

/// Everything a run produced, as written by `--json`.
struct Results: Codable {
    let machine: MachineInfo
    let date: String
    let quick: Bool
    let counts: [Int]
    let secretServiceCounts: [Int]
    let secretSizes: [Int]
    let samples: [String: Int]
    let durationSeconds: Double
    let measurements: [Measurement]
    let cases: [CaseResult]
    let goals: [Verdict]
    /// Backends and peers that could not be measured, with the reason.
    let failures: [Failure]
    /// With --peers: the peers' figures and our speed-up over each.
    let peers: PeerResults?
}

enum Report {
    // MARK: Goals

    static func evaluate(_ entries: [BackendEntry], _ measurements: [Measurement], failures: [Failure],
                         peers: PeerResults?) -> [Verdict] {
        var verdicts: [Verdict] = []
        for entry in entries {
            let rows = measurements.filter { $0.target == entry.name && !$0.isLimit }
            let failure = failures.first { $0.backend == entry.name }
            for goal in entry.goals {
                var v = evaluate(goal, backend: entry.name, rows, all: measurements)
                if v.measured == nil, let failure {
                    v = Verdict(backend: v.backend, goal: v.goal, verdict: v.verdict, measured: nil,
                                threshold: v.threshold, detail: "not measured: \(failure.reason)")
                }
                verdicts.append(v)
            }
        }
        // The peers' goals.
        // Python keyring on the Secret Service: every operation it has (set, get, delete) at every N; the cryptfile
        // goal is about its key stretching, which only get and set pay.
        let peerGoals: [(backend: String, peer: String, goal: String, min: Double, ops: Set<String>)] = [
            ("secret-service", "python-keyring SecretService",
             "faster than Python keyring's SecretService backend (same daemon), per set, get and delete", 1,
             ["set", "get", "delete"]),
            ("sqlite", "keyrings.cryptfile", "at least 100× faster than keyrings.cryptfile per get and per set", 100,
             ["set", "get"]),
        ]
        for g in peerGoals where entries.contains(where: { $0.name == g.backend }) {
            let rows = (peers?.measurements ?? []).filter { $0.peer == g.peer && g.ops.contains($0.op) }
            let worst = rows.filter { $0.speedUp != nil }.min { ($0.speedUp ?? 0) < ($1.speedUp ?? 0) }
            guard let worst, let speedUp = worst.speedUp else {
                let why = peers == nil ? "run with --peers"
                    : (peers?.failures.first { $0.backend == g.peer || $0.backend == "peers" }?.reason
                       ?? failures.first { $0.backend == g.backend }.map { "\(g.backend) not measured: \($0.reason)" }
                       ?? "no figures")
                verdicts.append(Verdict(backend: g.backend, goal: g.goal, verdict: "NOT MEASURED", measured: nil,
                                        threshold: g.min, detail: why))
                continue
            }
            let detail = "smallest speed-up: \(worst.op) at N=\(worst.n): \(micros(worst.medianMicros)) µs vs "
                + "\(micros(worst.oursMedianMicros ?? 0)) µs (\(worst.ours ?? "?"))"
            verdicts.append(Verdict(backend: g.backend, goal: g.goal, verdict: speedUp >= g.min && speedUp > 1 ? "PASS" : "MISS",
                                    measured: speedUp, threshold: g.min, detail: detail))
        }
        return verdicts
    }

    private static func evaluate(_ goal: Goal, backend: String, _ rows: [Measurement], all: [Measurement]) -> Verdict {
        func verdict(_ measured: Double?, _ threshold: Double, _ detail: String, pass: (Double) -> Bool) -> Verdict {
            guard let measured else {
                return Verdict(backend: backend, goal: goal.text, verdict: "NOT MEASURED", measured: nil,
                               threshold: threshold, detail: detail)
            }
            return Verdict(backend: backend, goal: goal.text, verdict: pass(measured) ? "PASS" : "MISS",
                           measured: measured, threshold: threshold, detail: detail)
        }
        switch goal.kind {
        case .ratioToLimit(let op, let max):
            let ratios = rows.filter { $0.op == op && $0.ratio != nil }
            let worst = ratios.max { ($0.ratio ?? 0) < ($1.ratio ?? 0) }
            let sorted = ratios.compactMap(\.ratio).sorted()
            let typical = sorted.isEmpty ? "" : String(format: "; median over %d cases %.2f×", sorted.count,
                                                       sorted.count % 2 == 1 ? sorted[sorted.count / 2]
                                                           : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2)
            let detail = worst.map {
                "worst at N=\($0.n), \($0.secretBytes) B: \(micros($0.medianMicros)) vs \(micros($0.limitMedianMicros ?? 0)) µs"
                    + typical
            } ?? "no \(op.rawValue) figures"
            return verdict(worst?.ratio, max, detail) { $0 <= max }
        case .ratioToNamedLimit(let op, let limit, let max):
            var worst: (ratio: Double, row: Measurement, limit: Double)? = nil
            for row in rows where row.op == op {
                guard let other = all.first(where: {
                    $0.isLimit && $0.backend == backend && $0.target.hasSuffix(limit) && $0.op == op && $0.n == row.n
                        && $0.secretBytes == row.secretBytes
                }), other.medianMicros > 0 else { continue }
                let ratio = row.medianMicros / other.medianMicros
                if ratio > worst?.ratio ?? -1 { worst = (ratio, row, other.medianMicros) }
            }
            let detail = worst.map {
                "worst at N=\($0.row.n), \($0.row.secretBytes) B: \(micros($0.row.medianMicros)) vs \(micros($0.limit)) µs (\(limit))"
            } ?? "no \(op.rawValue) figures for \(limit)"
            return verdict(worst?.ratio, max, detail) { $0 <= max }
        case .growth(let op, let max):
            let counts = Set(rows.map(\.n)).sorted()
            guard let low = counts.first, let high = counts.last, low < high else {
                return verdict(nil, max, "needs two values of N") { _ in false }
            }
            var worst: (ratio: Double, size: Int, a: Double, b: Double)? = nil
            for size in Set(rows.map(\.secretBytes)).sorted() {
                guard let a = rows.first(where: { $0.op == op && $0.n == low && $0.secretBytes == size }),
                      let b = rows.first(where: { $0.op == op && $0.n == high && $0.secretBytes == size }),
                      a.medianMicros > 0 else { continue }
                let ratio = b.medianMicros / a.medianMicros
                if worst == nil || ratio > (worst?.ratio ?? 0) {
                    worst = (ratio, size, a.medianMicros, b.medianMicros)
                }
            }
            let detail = worst.map {
                "N=\(low): \(micros($0.a)) µs → N=\(high): \(micros($0.b)) µs (\($0.size) B)"
            } ?? "no \(op.rawValue) figures"
            return verdict(worst?.ratio, max, detail) { $0 <= max }
        case .clearUnder(let items, let seconds):
            let clears = rows.filter { $0.op == .clear && $0.n == items }
            let worst = clears.max { ($0.totalMillis ?? 0) < ($1.totalMillis ?? 0) }
            let measured = worst?.totalMillis.map { $0 / 1_000 }
            let detail = worst.map { "\(millis($0.totalMillis ?? 0)) ms at \($0.secretBytes) B" } ?? "N=\(items) not run"
            return verdict(measured, seconds, detail) { $0 < seconds }
        case .overLimit(let op, let limit):
            let rows = rows.filter { $0.op == op && $0.limitMedianMicros != nil }
            let worst = rows.max { ($0.medianMicros - ($0.limitMedianMicros ?? 0)) < ($1.medianMicros - ($1.limitMedianMicros ?? 0)) }
            let detail = worst.map {
                "worst at N=\($0.n), \($0.secretBytes) B: \(micros($0.medianMicros)) vs \(micros($0.limitMedianMicros ?? 0)) µs"
            } ?? "no \(op.rawValue) figures"
            return verdict(worst.map { $0.medianMicros - ($0.limitMedianMicros ?? 0) }, limit, detail) { $0 <= limit }
        case .clearRatio(let items, let max):
            let clears = rows.filter { $0.op == .clear && $0.n == items && $0.ratio != nil }
            let worst = clears.max { ($0.ratio ?? 0) < ($1.ratio ?? 0) }
            let detail = worst.map {
                "\(millis($0.totalMillis ?? 0)) ms at \($0.secretBytes) B; per item \(micros($0.medianMicros)) vs "
                    + "\(micros($0.limitMedianMicros ?? 0)) µs"
            } ?? "N=\(items) not run"
            return verdict(worst?.ratio, max, detail) { $0 <= max }
        }
    }

    // MARK: Markdown

    static func markdown(_ measurements: [Measurement], _ cases: [CaseResult], _ verdicts: [Verdict],
                         failures: [Failure], peers: PeerResults?, machine: MachineInfo, command: String) -> String {
        var out = "## SecureStore benchmark\n\n"
        out += "`\(command)` — \(machine.cpuModel), \(machine.cores) cores, \(machine.swiftBuild) build, load average at start \(machine.loadAverage)\n\n"
        out += "Single operations timed one by one; median and p99 in µs; ops/s over the timed operations. "
        out += "Ratio = backend median / limit median. Clear is one timing of the whole store, shown per item "
        out += "(total in the op column).\n\n"
        out += "| backend | N | secret | op | median µs | p99 µs | ops/s | limit median µs | ratio |\n"
        out += "|---|---:|---:|---|---:|---:|---:|---:|---:|\n"
        for m in measurements where !m.isLimit {
            out += row(m, withLimit: true)
        }
        out += "\n### Limits\n\n"
        out += "| limit | N | secret | op | median µs | p99 µs | ops/s |\n|---|---:|---:|---|---:|---:|---:|\n"
        for m in measurements where m.isLimit {
            out += row(m, withLimit: false)
        }
        out += "\n### Memory and storage\n\n"
        out += "| target | N | secret | peak RSS MiB | RSS growth MiB | file bytes/item |\n|---|---:|---:|---:|---:|---:|\n"
        for c in cases {
            let perItem = c.storageBytesPerItem.map { String(format: "%.0f", $0) } ?? "—"
            out += "| \(c.target) | \(c.n) | \(size(c.secretBytes)) | "
            out += String(format: "%.1f | %.1f", Double(c.peakRSSBytes) / 1_048_576, Double(c.rssGrowthBytes) / 1_048_576)
            out += " | \(perItem) |\n"
        }
        let writeRows = measurements.filter { $0.writtenBytesPerOp != nil && [.add, .update, .delete].contains($0.op) }
        if !writeRows.isEmpty {
            out += "\n### Writes per operation\n\n"
            out += "Bytes this process passed to write calls (`wchar` of /proc/self/io: WAL frames and headers) and "
            out += "write calls, per operation; each write transaction is also one fdatasync of the WAL.\n\n"
            out += "| target | N | secret | op | KiB written/op | write calls/op |\n|---|---:|---:|---|---:|---:|\n"
            for m in writeRows {
                out += "| \(m.target) | \(m.n) | \(size(m.secretBytes)) | \(m.op.rawValue) | "
                out += String(format: "%.1f | %.1f |\n", (m.writtenBytesPerOp ?? 0) / 1024, m.writeCallsPerOp ?? 0)
            }
        }
        if let peers {
            out += "\n### Peers\n\n"
            let versions = peers.versions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            out += "Same operations, timed one by one by `Benchmarks/peers/peers.py` (\(versions)); 32-byte secrets. "
            out += "Python keyring's SecretService backend runs against the same gnome-keyring daemon and is compared "
            out += "with our secret-service rows at the same N; keyrings.cryptfile (Argon2id on every operation, so "
            out += "its N is kept small) is compared with our sqlite rows at their smallest N. "
            out += "Speed-up = peer median / our median.\n\n"
            out += "| peer | N | op | median µs | p99 µs | ops/s | ours | our median µs | speed-up |\n"
            out += "|---|---:|---|---:|---:|---:|---|---:|---:|\n"
            for p in peers.measurements {
                out += "| \(p.peer) | \(p.n) | \(p.op) | \(micros(p.medianMicros)) | \(micros(p.p99Micros)) | "
                out += String(format: "%.0f", p.opsPerSecond) + " | \(p.ours ?? "—") | "
                out += (p.oursMedianMicros.map(micros) ?? "—") + " | "
                out += (p.speedUp.map { String(format: "%.1f×", $0) } ?? "—") + " |\n"
            }
        }
        let allFailures = failures + (peers?.failures ?? [])
        if !allFailures.isEmpty {
            out += "\n### Not measured\n\n| backend / peer | reason |\n|---|---|\n"
            for f in allFailures {
                out += "| \(f.backend) | \(f.reason.replacingOccurrences(of: "|", with: "\\|")) |\n"
            }
        }
        out += "\n### Goals\n\n| backend | goal | verdict | measured | detail |\n|---|---|---|---:|---|\n"
        for v in verdicts {
            let measured = v.measured.map { String(format: "%.3f", $0) } ?? "—"
            out += "| \(v.backend) | \(v.goal) | **\(v.verdict)** | \(measured) | \(v.detail) |\n"
        }
        return out
    }

    private static func row(_ m: Measurement, withLimit: Bool) -> String {
        var op = m.op.label
        if let total = m.totalMillis { op += " — \(millis(total)) ms total" }
        var line = "| \(m.target) | \(m.n) | \(size(m.secretBytes)) | \(op) | \(micros(m.medianMicros)) | "
        line += "\(micros(m.p99Micros)) | \(String(format: "%.0f", m.opsPerSecond)) |"
        if withLimit {
            let limit = m.limitMedianMicros.map(micros) ?? "—"
            let ratio = m.ratio.map { String(format: "%.2f×", $0) } ?? "—"
            line += " \(limit) | \(ratio) |"
        }
        return line + "\n"
    }

    static func micros(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value)
            : String(format: "%.2f", value)
    }

    static func millis(_ value: Double) -> String { String(format: "%.1f", value) }

    static func size(_ bytes: Int) -> String {
        bytes % 1024 == 0 ? "\(bytes / 1024) KiB" : "\(bytes) B"
    }

    // MARK: JSON

    static func json(_ results: Results) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(results)
    }
}
