import Testing
import Foundation
import SecureStoreCore
import SecureStoreInMemory
import TestSupport

@Suite("Async API")
struct AsyncTests {
    let item = NewItem(.genericPassword, [.service: "async", .account: "alice"], data: Data("s3cret".utf8))
    let query = ItemQuery(.genericPassword, [.service: "async", .account: "alice"], returning: .data)

    @Test("the async twins add, copy, update, delete and clear like the synchronous calls")
    func roundTrip() async throws {
        for store in [try InMemoryStore() as any SecureStore,
                      try Keychain(backend: SlowBackend(delay: .milliseconds(1))) as any SecureStore] {
            try await store.add(item)
            #expect(try await store.items(matching: query).first?.data == Data("s3cret".utf8))
            #expect(try await store.update(ItemQuery(.genericPassword, [.service: "async"]), with: ItemChanges(data: Data("new".utf8))) == 1)
            #expect(try await store.password(service: "async", account: "alice") == Data("new".utf8))
            try await store.setPassword(Data("other".utf8), service: "async", account: "bob")
            #expect(try syncPassword(store, "bob") == Data("other".utf8), "the sync API sees it")
            #expect(try await store.delete(ItemQuery(.genericPassword, [.service: "async", .account: "alice"])) == 1)
            #expect(try await store.items(matching: query).isEmpty)
            #expect(try await store.item(matching: query) == nil)
            let missing = await failure { () async throws(SecureStoreError) in _ = try await store.delete(query) }
            #expect(missing?.code == .itemNotFound)
            #expect(try await store.clear() == 1)
        }
    }

    @Test("a store that never blocks runs inline; one that may block has its own pool, of its declared size")
    func whereCallsRun() throws {
        let memory = try InMemoryStore()
        #expect(memory.blocking == .never)
        #expect(memory.threadPool == nil)
        let slow = try Keychain(backend: SlowBackend(delay: .milliseconds(1)))
        #expect(slow.blocking.mayBlock)
        let pool = try #require(slow.threadPool)
        #expect(pool !== StoreThreadPool.shared, "a Keychain owns its pool")
        #expect(slow.threadPool === pool, "one pool per store")
        #expect(pool.size == 1, "a backend that does not say runs one call at a time")
        let wide = try Keychain(backend: SlowBackend(delay: .milliseconds(1), concurrency: 4))
        #expect(wide.concurrency == 4)
        #expect(wide.threadPool?.size == 4, "the pool has the backend's declared concurrency")
    }

    /// Runs a scenario of the async probe (a process of its own: the other tests of this process run
    /// synchronous work on the cooperative pool, which would delay the ticker and the timers measured here).
    static func probe(_ scenario: String) throws -> [String: String] {
        let path = try builtExecutable("securestore-async-probe")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("async-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        guard let pid = spawn(path, [scenario], environment: ProcessInfo.processInfo.environment, stdout: out.path) else {
            throw SecureStoreError(.notAvailable, "cannot start \(path)")
        }
        let status = reap(pid, timeout: .seconds(60))
        let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        var measures: [String: String] = ["status": String(status)]
        for line in text.split(separator: "\n") where line.hasPrefix("measure ") {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 3 { measures[parts[1]] = parts[2] }
        }
        return measures
    }

    @Test("40 concurrent calls on a blocking store never delay a task ticking every 10 ms; each answers near its timeout")
    func cooperativePoolStaysFree() throws {
        let m = try Self.probe("pool")
        print("[async] \(m.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        #expect(m["status"] == "0" && m["error"] == nil, "\(m)")
        #expect(m["calls"] == "40")
        #expect(Int(m["answered"] ?? "") ?? 0 > 0, "some calls finish within 600 ms")
        #expect(Int(m["timedOut"] ?? "") ?? 0 > 0, "4 s of calls cannot all finish in 600 ms")
        #expect((Int(m["answered"] ?? "") ?? 0) + (Int(m["timedOut"] ?? "") ?? 0) == 40, "only answers or timeouts")
        #expect(Int(m["longestWaitMs"] ?? "") ?? .max < 1500, "every call answers near its timeout")
        #expect(Int(m["maxTickGapMs"] ?? "") ?? .max < 200, "the ticking task was delayed")
    }

    @Test("a call that times out before it starts never runs; one that times out while running says so")
    func timeoutSemantics() throws {
        let m = try Self.probe("timeouts")
        #expect(m["status"] == "0" && m["error"] == nil, "\(m)")
        #expect(m["firstCode"] == "notAvailable", "\(m)")
        #expect(m["firstMessage"]?.contains("still running") == true, "\(m)")
        #expect(m["secondCode"] == "notAvailable", "\(m)")
        #expect(m["secondMessage"]?.contains("was not run, so nothing changed") == true, "\(m)")
        #expect(m["firstStored"] == "true", "the started add took effect")
        #expect(m["secondStored"] == "false", "the add that never started did not")
    }

    @Test("one call hung on a store of concurrency 4: calls on the other 3 threads run at their normal pace; the ticking task is not delayed")
    func hungCallHoldsOnlyItsThread() throws {
        Self.expectOneCallHung(try Self.probe("slots"), "slots")
    }

    /// What the probe's `slots` and `executor` scenarios show alike: 120 lookups before and while one call
    /// hangs 3 s, all answered, meanwhile at their normal pace, on at most 4 threads, the ticker on time.
    static func expectOneCallHung(_ m: [String: String], _ name: String) {
        print("[async \(name)] \(m.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        #expect(m["status"] == "0" && m["error"] == nil, "\(m)")
        #expect(m["baselineOk"] == "120" && m["duringOk"] == "120", "\(m)")
        let hung = Int(m["hungMs"] ?? "") ?? 0, others = Int(m["othersDoneMs"] ?? "") ?? .max
        #expect(hung >= 2900, "the hung call ran its 3 s")
        #expect(others < hung, "the other calls did not wait for the hung one: \(m)")
        // 120 calls of 20 ms: 4 threads take 0.6 s, 3 take 0.8 s, one would take 2.4 s. Generous: under 2 s.
        #expect(Int(m["duringMs"] ?? "") ?? .max < 2000, "\(m)")
        #expect(Int(m["baselineMs"] ?? "") ?? .max < 2000, "4 threads: \(m)")
        #expect(Int(m["threads"] ?? "") ?? .max <= 4, "never more threads than the store's concurrency")
        #expect(Int(m["maxTickGapMs"] ?? "") ?? .max < 200, "the ticking task was delayed: \(m)")
    }

    @Test("tasks on the store's executor: their calls run on the store's threads; one hung call holds only its thread; cancellation and timeouts keep their meaning")
    func storeExecutor() throws {
        let m = try Self.probe("executor")
        // Every lookup counted answered on the store's own thread (the probe's check).
        Self.expectOneCallHung(m, "executor")
        // Every transaction of either store ran on one of that store's own threads.
        #expect(Int(m["own"] ?? "") ?? 0 >= 243 && m["elsewhere"] == "0", "\(m)")
        #expect(Int(m["otherOwn"] ?? "") ?? 0 >= 25 && m["otherElsewhere"] == "0", "\(m)")
        #expect(m["cancelCode"] == "notAvailable" && m["cancelMessage"]?.contains("cancelled; nothing changed") == true, "\(m)")
        #expect(m["cancelStored"] == "0", "the cancelled add never ran")
        #expect(m["timeoutCode"] == "notAvailable", "\(m)")
        #expect(Int(m["timeoutMs"] ?? "") ?? .max < 1500, "the 200 ms timeout answered before the 2 s call ended: \(m)")
    }

    @Test("cancelling the calling task answers at once")
    func cancellation() throws {
        let m = try Self.probe("cancel")
        #expect(m["status"] == "0" && m["error"] == nil, "\(m)")
        #expect(m["code"] == "notAvailable", "\(m)")
        #expect(m["message"]?.contains("cancelled") == true, "\(m)")
        #expect(Int(m["answeredMs"] ?? "") ?? .max < 400, "\(m)")
    }
}

/// The synchronous API, from a synchronous context (in an async one the async twin is chosen).
func syncPassword(_ store: any SecureStore, _ account: String) throws(SecureStoreError) -> Data? {
    try store.password(service: "async", account: account)
}

