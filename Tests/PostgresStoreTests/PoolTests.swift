import Testing
import Foundation
import TestSupport
import SecureStoreCore
import SecureStorePostgres

@Suite("PostgreSQL store, concurrent callers", .requires(.postgres))
struct PostgresPoolTests {
    @Test("16 threads on one store object with a pool of 4: every add lands once, racing adds of one item succeed once, reads see them")
    func concurrentCallers() throws {
        let ns = Server.freshNamespace("pool"), key = randomKey()
        let store = try PostgresStore(url: Server.url(), key: .raw(key), namespace: ns, passwordEnv: Server.passwordEnv,
                                      poolSize: 4)
        #expect(store.backend.poolSize == 4)
        let outcomes = Locked<[String]>([])
        let group = DispatchGroup()
        for t in 0..<16 {
            group.enter()
            Thread {
                defer { group.leave() }
                var lines: [String] = []
                for i in 0..<15 {
                    let name = "t\(t)-\(i)"
                    do throws(SecureStoreError) {
                        try store.add(NewItem(.genericPassword, generic("pool", name), data: Data(name.utf8)), returning: [])
                        let read = try store.items(matching: ItemQuery(.genericPassword, generic("pool", name), returning: .data))
                        lines.append(read.first?.data == Data(name.utf8) ? "ok" : "wrong \(name)")
                    } catch {
                        lines.append("err \(name) \(error)")
                    }
                    do throws(SecureStoreError) {
                        try store.add(NewItem(.genericPassword, generic("pool", "shared-\(i)"), data: Data("s".utf8)), returning: [])
                        lines.append("shared")
                    } catch {
                        lines.append(error.code == .duplicateItem ? "dup" : "err shared \(error)")
                    }
                }
                outcomes.withLock { $0 += lines }
            }.start()
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        let lines = outcomes.withLock { $0 }
        #expect(lines.filter { $0 == "ok" }.count == 16 * 15, "\(lines.filter { $0.hasPrefix("err") || $0.hasPrefix("wrong") }.prefix(3))")
        #expect(lines.filter { $0 == "shared" }.count == 15)
        #expect(lines.filter { $0 == "dup" }.count == 15 * 15)
        let all = try store.items(matching: ItemQuery(.genericPassword, [.service: .string("pool")], limit: .all, returning: .attributes))
        #expect(all.count == 16 * 15 + 15)
    }

    @Test("one async call hung on a stalled connection: the other 3 slots keep serving at their pace, the ticking task is not delayed; a timed-out call's slot comes back at the backend's deadline (plain tasks, and tasks on the store's executor)",
          arguments: [false, true])
    func hungCallHoldsOnlySlot(onStoreExecutor: Bool) throws {
        _ = try Server.url()
        let worker = try builtExecutable("securestore-postgres-worker")
        let outcome = try run(worker, onStoreExecutor ? ["stalled", "executor"] : ["stalled"], timeout: .seconds(120))
        var m: [String: String] = ["status": String(outcome.status)]
        for line in String(decoding: outcome.output, as: UTF8.self).split(separator: "\n") where line.hasPrefix("measure ") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            if parts.count == 3 { m[parts[1]] = parts[2] }
        }
        print("[postgres stalled\(onStoreExecutor ? ", store's executor" : "")] \(m.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        #expect(m["status"] == "0" && m["error"] == nil, "\(m)")
        #expect(m["stalled"] == "1", "the proxy stalled one connection: \(m)")
        #expect(m["baselineOk"] == "120" && m["duringOk"] == "120" && m["afterOk"] == "120", "\(m)")
        // The hung call ends at the backend's deadline: statement timeout 2 s + 0.2 s, then 1 s for the cancel;
        // a read is then run again once on a new connection (so it usually answers), a write says notAvailable.
        #expect(m["hungCode"] == "ok" || m["hungCode"] == "notAvailable", "\(m)")
        let hung = Int(m["hungMs"] ?? "") ?? 0
        #expect(hung >= 2000 && hung < 8000, "\(m)")
        #expect((Int(m["othersDoneMs"] ?? "") ?? .max) < hung, "the other calls did not wait for the hung one: \(m)")
        // Their normal time is the baseline's; a busy machine may slow either run, so the bound is generous.
        let baseline = Int(m["baselineMs"] ?? "") ?? 0, during = Int(m["duringMs"] ?? "") ?? .max
        #expect(during < max(3 * baseline, 1500), "3 slots instead of 4, no more: \(m)")
        #expect((Int(m["threads"] ?? "") ?? .max) <= 4 && m["poolSize"] == "4", "\(m)")
        #expect((Int(m["maxTickGapMs"] ?? "") ?? .max) < 200, "the ticking task was delayed: \(m)")
        // Pool of one: the call with a 300 ms timeout answers then (still running); the call behind it runs as
        // soon as the backend's deadline ends the first, and succeeds.
        #expect(m["timedOutCode"] == "notAvailable" && m["timedOutRunning"] == "true", "\(m)")
        if onStoreExecutor {
            // A task on the store's executor runs only on one of the store's threads: with the pool's only
            // thread held by the stalled call, the timed-out task continues when that call's deadline gives the
            // thread back (AsyncAndBlocking.md says so), not at its own 300 ms.
            let timedOut = Int(m["timedOutMs"] ?? "") ?? .max
            #expect(timedOut >= 2000 && timedOut < 8000, "\(m)")
        } else {
            #expect((Int(m["timedOutMs"] ?? "") ?? .max) < 1500, "\(m)")
        }
        #expect(m["queuedCode"]?.hasPrefix("ok") == true, "\(m)")
        let queued = Int(m["queuedMs"] ?? "") ?? .max
        #expect(queued >= 2000 && queued < 8000, "the slot came back at the deadline: \(m)")
    }

    @Test("pool size and timeouts out of range are refused as param errors")
    func badSettings() throws {
        let url = try Server.url()
        for (pool, statement) in [(0, 10), (65, 10), (4, 0)] {
            let error = failure { () throws(SecureStoreError) in
                _ = try PostgresStore(url: url, key: .raw(randomKey()), namespace: Server.freshNamespace(),
                                      passwordEnv: Server.passwordEnv, statementTimeout: .seconds(statement), poolSize: pool)
            }
            #expect(error?.code == .param, "\(String(describing: error))")
        }
    }
}
