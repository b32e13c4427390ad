import Testing
import Foundation
import TestSupport
import SecureStoreCore

/// The primary + hot standby scenarios: each runs `securestore-postgres-worker pair SCENARIO` under its own
/// scripts/with-postgres-pair.sh (a throwaway primary, `pg_basebackup -R` into a standby, both on 127.0.0.1),
/// so stopping and promoting servers disturbs no other test. Skipped, saying why, without PostgreSQL 15.
enum PairHarness {
    static let bin = ProcessInfo.processInfo.environment["SECURESTORE_POSTGRES_BIN"] ?? "/usr/lib/postgresql/15/bin"
    static let available = ["initdb", "pg_ctl", "postgres", "pg_basebackup", "psql"].allSatisfy {
        FileManager.default.isExecutableFile(atPath: "\(bin)/\($0)")
    }
    static let reason: Comment = "PostgreSQL 15 server binaries are not in \(bin) (scripts/deps.sh installs them)"

    /// The scenario's output lines, keyed by their first word (the last line of each key wins; "err" lines
    /// are collected separately).
    static func scenario(_ scenario: String) throws -> (facts: [String: [String]], errors: [String], all: [String]) {
        let script = packageRoot.appendingPathComponent("scripts/with-postgres-pair.sh").path
        let worker = try builtExecutable("securestore-postgres-worker")
        _ = try builtExecutable("securestore")
        let outcome = try run(script, [worker, "pair", scenario], removing: ["SECURESTORE_IN_POSTGRES", "XDG_RUNTIME_DIR"],
                              timeout: .seconds(120))
        let lines = String(decoding: outcome.output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(outcome.status == 0, "\(lines)")
        var facts: [String: [String]] = [:]
        var errors: [String] = []
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
            guard let first = parts.first else { continue }
            if first == "err" { errors.append(line) } else { facts[first] = Array(parts.dropFirst()) }
        }
        #expect(facts["fatal"] == nil, "\(lines)")
        return (facts, errors, lines)
    }
}

@Suite("PostgreSQL primary and standby", .serialized, .enabled(if: PairHarness.available || TestService.requireAll, PairHarness.reason))
struct PostgresPairTests {
    func number(_ facts: [String: [String]], _ key: String, _ index: Int = 0) -> Int? {
        facts[key].flatMap { $0.count > index ? Int($0[index]) : nil }
    }

    @Test("failover by killing the primary and promoting the standby: no acknowledged write lost, every call bounded")
    func failover() throws {
        let (facts, errors, lines) = try PairHarness.scenario("failover")
        #expect(facts["kill"] == ["0"] && facts["promote"] == ["0"], "\(lines)")
        #expect((number(facts, "acked") ?? 0) >= 40, "\(lines)")
        #expect(number(facts, "lost") == 0, "every acknowledged add is on the new primary: \(lines)")
        #expect((number(facts, "after-kill-acked") ?? 0) >= 20, "adds succeed again after the promotion: \(lines)")
        #expect((number(facts, "maxms") ?? .max) < 3000 + 1000 + 2000, "no call waits past its deadline: \(lines)")
        for line in errors {
            let code = line.split(separator: " ").dropFirst(2).first.map(String.init) ?? ""
            #expect(["notAvailable", "readOnly", "outcomeUnknown"].contains(code), "\(line)")
        }
    }

    @Test("synchronous standby down: add answers outcomeUnknown within its deadline, the item is there; lock waits are named")
    func synchronousStandbyDown() throws {
        let (facts, _, lines) = try PairHarness.scenario("syncdown")
        #expect(facts["standby-stop"] == ["0"], "\(lines)")
        let add = facts["add"] ?? []
        #expect(add.first == "outcomeUnknown", "\(lines)")
        let addMs = add.count > 1 ? Int(add[1]) ?? .max : .max
        #expect(addMs >= 1900 && addMs < 2000 + 1000 + 500, "the 2 s deadline plus the cancel grace: \(lines)")
        #expect(add.count > 2 && add[2].contains("outcome unknown: committed on the primary, not confirmed by a synchronous standby"),
                "\(lines)")
        #expect(facts["present"] != nil && lines.contains("present x1 true"), "the unconfirmed item is on the primary: \(lines)")
        let lock = facts["lock"] ?? []
        #expect(lock.first == "io", "\(lines)")
        #expect(lock.count > 2 && lock[2].contains("Another writer of namespace") && lock[2].contains("holds its lock"), "\(lines)")
        #expect(lock.count > 1 && (Int(lock[1]) ?? .max) < 1000 + 1500, "bounded by the 1 s lock timeout: \(lines)")
        let cli = facts["cli-add"] ?? []
        #expect(cli.first == "8", "the CLI's outcome-unknown exit code: \(lines)")
        #expect(cli.count > 1 && (Int(cli[1]) ?? .max) < 2000 + 1000 + 1500, "\(lines)")
        #expect(lines.contains("present cli true"), "\(lines)")
    }

    @Test("a config naming only the standby: reads work, writes give the read-only exit code 7")
    func standbyOnly() throws {
        let (facts, _, lines) = try PairHarness.scenario("standby")
        #expect(facts["standby-add"] == ["7"], "\(lines)")
        #expect(facts["standby-get"] == ["0"], "\(lines)")
        #expect(facts["standby-rw-get"] == ["7"], "target_session_attrs=read-write on a standby alone is read-only too: \(lines)")
        #expect(facts["prefer-standby-add"] == ["7"], "prefer-standby lands on the standby although the primary is first: \(lines)")
        #expect(facts["prefer-standby-get"] == ["0"], "\(lines)")
    }

    @Test("a dead first host (accepts, never answers) costs one connect timeout, then no wait: every later CLI call takes a fraction of the first (a ratio, not a wall-clock bound)")
    func deadFirstHost() throws {
        let (facts, _, lines) = try PairHarness.scenario("deadhost")
        #expect(facts["first"]?.first == "0", "\(lines)")
        let next = lines.filter { $0.hasPrefix("next ") }.map { $0.split(separator: " ").map(String.init) }
        #expect(next.count == 5, "\(lines)")
        // The first call waits out the 2 s connect timeout once; later ones go to the remembered host at once:
        // each well under the timeout, and their median under a third of the first call. A ratio, not a bound in
        // seconds: a loaded machine or a sanitizer build stretches every process start alike (a fixed 0.2 s
        // failed CI at 0.28–0.35 s); the timing itself belongs to the benchmark.
        var times: [Int] = []
        for call in next {
            #expect(call.count == 3 && call[1] == "0", "\(lines)")
            let ms = call.count == 3 ? Int(call[2]) ?? .max : .max
            #expect(ms < 2000, "shorter than the connect timeout, so it never waited for the dead host: \(lines)")
            times.append(ms)
        }
        let firstMs = (facts["first"]?.last).flatMap { Int($0) } ?? 0
        #expect(firstMs >= 2000, "the first call waited out the connect timeout: \(lines)")
        #expect(times.count == 5 && times.sorted()[2] * 3 < firstMs, "later calls a fraction of the first (\(firstMs) ms): \(times)")
        #expect(facts["memory"] == ["600"] && facts["memory-folder"] == ["700"], "\(lines)")
    }
}
