import Testing
import Foundation
import SecureStore
import InMemoryStore
import TestSupport

/// The in-memory backend with every transaction made slow, as a stuck file, daemon or server makes it: a
/// store whose calls block, to show where the async API runs them.
final class SlowBackend: StorageBackend {
    let inner = InMemoryBackend()
    let delay: Duration

    init(delay: Duration) { self.delay = delay }

    var backendDescription: String { "slow memory" }
    var blocking: Blocking { .upTo(delay, waitingFor: "a sleep (test)") }

    func withTransaction<T>(writing: Bool, _ body: (inout InMemoryBackend.Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
        return try inner.withTransaction(writing: writing, body)
    }
}

@Suite("Async API")
struct AsyncTests {
    let item = NewItem(.genericPassword, [.service: "async", .account: "alice"], data: Data("s3cret".utf8))
    let query = ItemQuery(.genericPassword, [.service: "async", .account: "alice"], returning: .data)

    @Test("the async twins add, copy, update, delete and clear like the synchronous calls")
    func roundTrip() async throws {
        for store in [try InMemoryStore() as any SecureStore,
                      try Keychain(backend: SlowBackend(delay: .milliseconds(1))) as any SecureStore] {
            try await store.add(item)
            #expect(try await store.copyMatching(query).items.first?.data == Data("s3cret".utf8))
            #expect(try await store.update(ItemQuery(.genericPassword, [.service: "async"]), with: ItemChanges(data: Data("new".utf8))) == 1)
            #expect(try await store.password(service: "async", account: "alice") == Data("new".utf8))
            try await store.setPassword(Data("other".utf8), service: "async", account: "bob")
            #expect(try syncPassword(store, "bob") == Data("other".utf8), "the sync API sees it")
            #expect(try await store.delete(ItemQuery(.genericPassword, [.service: "async", .account: "alice"])) == 1)
            let missing = await failure { () async throws(SecureStoreError) in _ = try await store.copyMatching(query) }
            #expect(missing?.code == .itemNotFound)
            #expect(try await store.clear() == 1)
        }
    }

    @Test("a store that never blocks runs inline; one that may block has its own thread")
    func whereCallsRun() throws {
        let memory = try InMemoryStore()
        #expect(memory.blocking == .never)
        #expect(memory.storeThread == nil)
        let slow = try Keychain(backend: SlowBackend(delay: .milliseconds(1)))
        #expect(slow.blocking.mayBlock)
        let thread = try #require(slow.storeThread)
        #expect(thread !== StoreThread.shared, "a Keychain owns its thread")
        #expect(slow.storeThread === thread, "one thread per store")
    }

    @Test("many concurrent calls on a blocking store do not delay an unrelated task ticking every 10 ms")
    func cooperativePoolStaysFree() async throws {
        let store = try Keychain(backend: SlowBackend(delay: .milliseconds(100)))
        try syncAdd(store, item)
        let ticker = Ticker()
        let ticking = Task { await ticker.run() }
        let clock = ContinuousClock()
        let start = clock.now
        // 40 lookups of 100 ms each, all at once: 4 s of blocking calls, far more than the cooperative pool has
        // threads for. Each waits at most 600 ms.
        let outcomes = await withTaskGroup(of: (code: String, waited: Duration).self) { group in
            for _ in 0..<40 {
                group.addTask {
                    let began = clock.now
                    do throws(SecureStoreError) {
                        _ = try await store.copyMatching(query, timeout: .milliseconds(600))
                        return ("ok", clock.now - began)
                    } catch {
                        return (error.code.name, clock.now - began)
                    }
                }
            }
            var all: [(code: String, waited: Duration)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let (maxGap, ticks) = ticker.stop()
        await ticking.value
        print("[async] 40 lookups in \(clock.now - start): \(outcomes.filter { $0.code == "ok" }.count) answered, "
              + "\(outcomes.filter { $0.code == "notAvailable" }.count) timed out; ticker: \(ticks) ticks, longest gap \(maxGap)")
        #expect(outcomes.count == 40)
        #expect(outcomes.allSatisfy { $0.code == "ok" || $0.code == "notAvailable" }, "\(outcomes.map(\.code))")
        #expect(outcomes.contains { $0.code == "ok" })
        #expect(outcomes.contains { $0.code == "notAvailable" }, "4 s of calls cannot all finish in 600 ms")
        #expect(outcomes.allSatisfy { $0.waited < .milliseconds(1500) }, "every call answers near its timeout")
        #expect(maxGap < .milliseconds(200), "the ticker was delayed \(maxGap)")
    }

    @Test("a call that times out before it starts never runs; one that times out while running says so")
    func timeoutSemantics() async throws {
        let store = try Keychain(backend: SlowBackend(delay: .milliseconds(400)))
        // The first add runs (400 ms) and its caller stops waiting after 100 ms; the second waits behind it,
        // times out after 100 ms and is never run.
        let item = self.item
        let firstCall = Task { await failure { () async throws(SecureStoreError) in try await store.add(item, timeout: .milliseconds(100)) } }
        try await Task.sleep(for: .milliseconds(20))
        let other = NewItem(.genericPassword, [.service: "async", .account: "bob"], data: Data("b".utf8))
        let second = await failure { () async throws(SecureStoreError) in try await store.add(other, timeout: .milliseconds(100)) }
        let firstError = await firstCall.value
        #expect(firstError?.code == .notAvailable)
        #expect(firstError?.message.contains("still running") == true, "\(String(describing: firstError))")
        #expect(second?.code == .notAvailable)
        #expect(second?.message.contains("was not run, so nothing changed") == true, "\(String(describing: second))")
        try await Task.sleep(for: .milliseconds(900))   // the store's thread finishes the first add
        #expect(try syncPassword(store, "alice") == Data("s3cret".utf8), "the started add took effect")
        #expect(try syncPassword(store, "bob") == nil, "the add that never started did not")
    }

    @Test("cancelling the calling task answers at once")
    func cancellation() async throws {
        let store = try Keychain(backend: SlowBackend(delay: .milliseconds(500)))
        let clock = ContinuousClock()
        let start = clock.now
        let task = Task { () -> SecureStoreError? in
            await failure { () async throws(SecureStoreError) in _ = try await store.clear() }
        }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let error = await task.value
        #expect(error?.code == .notAvailable)
        #expect(error?.message.contains("cancelled") == true, "\(String(describing: error))")
        #expect(clock.now - start < .milliseconds(400))
    }
}

/// The synchronous API, from a synchronous context (in an async one the async twin is chosen).
func syncPassword(_ store: any SecureStore, _ account: String) throws(SecureStoreError) -> Data? {
    try store.password(service: "async", account: account)
}

func syncAdd(_ store: any SecureStore, _ item: NewItem) throws(SecureStoreError) {
    try store.add(item)
}
