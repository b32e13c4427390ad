import Foundation
import SecureStoreCore
import TestSupport

// The async API in a process of its own, so that no other test's synchronous work occupies the cooperative
// pool while it is measured. Prints `measure NAME VALUE` lines.
//
//   securestore-async-probe pool      40 concurrent lookups (600 ms timeout) on a store whose calls take 100 ms,
//                                     while a task ticks every 10 ms
//   securestore-async-probe timeouts  a call that times out while running, and one that times out before it starts
//   securestore-async-probe cancel    a call whose task is cancelled
//   securestore-async-probe slots     a store of concurrency 4 (calls of 20 ms) with one call hung for 3 s: 120
//                                     lookups from 3 tasks meanwhile, while a task ticks every 10 ms
//   securestore-async-probe executor  the same from tasks that prefer the store's executor (its thread pool), whose
//                                     calls run on the thread they are on; with a call of another store, a
//                                     cancelled task and a timeout among them

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
func ms(_ d: Duration) -> Int { Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000) }

let item = NewItem(.genericPassword, [.service: "async", .account: "alice"], data: Data("s3cret".utf8))
let query = ItemQuery(.genericPassword, [.service: "async", .account: "alice"], returning: .data)
let clock = ContinuousClock()

func pool() async throws {
    let store = try Keychain(backend: SlowBackend(delay: .milliseconds(100)))
    try await store.add(item)
    let ticker = Ticker()
    let ticking = Task { await ticker.run() }
    let start = clock.now
    // 40 lookups of 100 ms each at once: 4 s of blocking calls, far more than the pool has threads for.
    let outcomes = await withTaskGroup(of: (code: String, waited: Duration).self) { group in
        for _ in 0..<40 {
            group.addTask {
                let began = clock.now
                do throws(SecureStoreError) {
                    _ = try await store.items(matching: query, timeout: .milliseconds(600))
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
    say("measure calls \(outcomes.count)")
    say("measure answered \(outcomes.filter { $0.code == "ok" }.count)")
    say("measure timedOut \(outcomes.filter { $0.code == "notAvailable" }.count)")
    say("measure longestWaitMs \(ms(outcomes.map(\.waited).max() ?? .zero))")
    say("measure allMs \(ms(clock.now - start))")
    say("measure ticks \(ticks)")
    say("measure maxTickGapMs \(ms(maxGap))")
}

func timeouts() async throws {
    let store = try Keychain(backend: SlowBackend(delay: .milliseconds(400)))
    // The first add runs (400 ms); its caller stops waiting after 100 ms. The second waits behind it, times
    // out after 100 ms and is never run.
    let firstCall = Task { await failure { () async throws(SecureStoreError) in try await store.add(item, timeout: .milliseconds(100)) } }
    try await Task.sleep(for: .milliseconds(20))
    let other = NewItem(.genericPassword, [.service: "async", .account: "bob"], data: Data("b".utf8))
    let second = await failure { () async throws(SecureStoreError) in try await store.add(other, timeout: .milliseconds(100)) }
    let first = await firstCall.value
    say("measure firstCode \(first?.code.name ?? "ok")")
    say("measure firstMessage \(first?.message ?? "")")
    say("measure secondCode \(second?.code.name ?? "ok")")
    say("measure secondMessage \(second?.message ?? "")")
    try await Task.sleep(for: .milliseconds(900))   // the store's thread finishes the first add
    let alice = try await store.password(service: "async", account: "alice")
    let bob = try await store.password(service: "async", account: "bob")
    say("measure firstStored \(alice != nil)")
    say("measure secondStored \(bob != nil)")
}

func cancel() async throws {
    let store = try Keychain(backend: SlowBackend(delay: .milliseconds(500)))
    let start = clock.now
    let task = Task { () -> SecureStoreError? in
        await failure { () async throws(SecureStoreError) in _ = try await store.clear() }
    }
    try await Task.sleep(for: .milliseconds(50))
    task.cancel()
    let error = await task.value
    say("measure code \(error?.code.name ?? "ok")")
    say("measure message \(error?.message ?? "")")
    say("measure answeredMs \(ms(clock.now - start))")
}

/// 3 tasks × 40 lookups of `store` (each task preferring `executor`; `alsoEach`: run every 10th lookup too),
/// the ones that answered with `check` true, and how long they took.
func lookups(_ store: Keychain<SlowBackend>, preferring executor: (any TaskExecutor)?,
             check: @escaping @Sendable () -> Bool = { true }, alsoEach: (@Sendable () async -> Void)? = nil)
    async -> (ok: Int, elapsed: Duration)
{
    let start = clock.now
    let ok = await withTaskGroup(of: Int.self) { group in
        for _ in 0..<3 {
            group.addTask(executorPreference: executor) {
                var ok = 0
                for i in 0..<40 {
                    if (try? await store.item(matching: query)) != nil, check() { ok += 1 }
                    if i % 10 == 0 { await alsoEach?() }
                }
                return ok
            }
        }
        return await group.reduce(0, +)
    }
    return (ok, clock.now - start)
}

/// The lookups before and while one call of `store` (from a task preferring `executor`) hangs for 3 s, while a
/// task ticks every 10 ms; prints what the `slots` and `executor` scenarios measure alike.
func oneCallHung(_ store: Keychain<SlowBackend>, preferring executor: (any TaskExecutor)?,
                 _ lookups: () async -> (ok: Int, elapsed: Duration)) async throws {
    let baseline = await lookups()
    let ticker = Ticker()
    let ticking = Task { await ticker.run() }
    store.backend.hangNext(for: .seconds(3))
    let hungStart = clock.now
    let hung = Task(executorPreference: executor) { () -> Duration in
        _ = try? await store.item(matching: query)
        return clock.now - hungStart
    }
    try await Task.sleep(for: .milliseconds(50))
    let during = await lookups()
    let othersDone = clock.now - hungStart
    let hungTook = await hung.value
    let (maxGap, ticks) = ticker.stop()
    await ticking.value
    say("measure baselineOk \(baseline.ok)")
    say("measure baselineMs \(ms(baseline.elapsed))")
    say("measure duringOk \(during.ok)")
    say("measure duringMs \(ms(during.elapsed))")
    say("measure othersDoneMs \(ms(othersDone))")
    say("measure hungMs \(ms(hungTook))")
    say("measure threads \(store.threadPool?.startedThreads ?? -1)")
    say("measure ticks \(ticks)")
    say("measure maxTickGapMs \(ms(maxGap))")
}

func slots() async throws {
    let store = try Keychain(backend: SlowBackend(delay: .milliseconds(20), concurrency: 4))
    try await store.add(item)
    try await oneCallHung(store, preferring: nil) { await lookups(store, preferring: nil) }
}

func executor() async throws {
    let store = try Keychain(backend: SlowBackend(delay: .milliseconds(20), concurrency: 4))
    let other = try Keychain(backend: SlowBackend(delay: .milliseconds(1)))
    guard let pool = store.threadPool, let otherPool = other.threadPool else { throw SecureStoreError(.internalError, "no pool") }
    // Where each store's transactions run: on one of its own threads, or elsewhere.
    let placed = Locked((own: 0, elsewhere: 0, otherOwn: 0, otherElsewhere: 0))
    store.backend.observeTransactions {
        let own = pool.isCurrentThread
        placed.withLock { if own { $0.own += 1 } else { $0.elsewhere += 1 } }
    }
    other.backend.observeTransactions {
        let own = otherPool.isCurrentThread
        placed.withLock { if own { $0.otherOwn += 1 } else { $0.otherElsewhere += 1 } }
    }
    try await store.add(item)
    try await other.add(item)
    // Every lookup answered on the store's thread; a call of another store from there goes to that store's threads.
    try await oneCallHung(store, preferring: pool) {
        await lookups(store, preferring: pool, check: { pool.isCurrentThread },
                      alsoEach: { _ = try? await other.item(matching: query) })
    }
    // A task cancelled before its call: the call never runs.
    let cancelled = await Task(executorPreference: pool) { () -> SecureStoreError? in
        withUnsafeCurrentTask { $0?.cancel() }
        return await failure { () async throws(SecureStoreError) in
            try await store.add(NewItem(.genericPassword, [.service: "async", .account: "cancelled"], data: Data("c".utf8)))
        }
    }.value
    // A timeout still bounds the wait of a task on the store's executor (its call is handed to a thread).
    store.backend.hangNext(for: .seconds(2))
    let timeoutStart = clock.now
    let timedOut = await Task(executorPreference: pool) { () -> SecureStoreError? in
        await failure { () async throws(SecureStoreError) in _ = try await store.item(matching: query, timeout: .milliseconds(200)) }
    }.value
    let timeoutTook = clock.now - timeoutStart
    try await Task.sleep(for: .seconds(2))   // the hung call ends
    let cancelledStored = try await store.items(matching: ItemQuery(.genericPassword, [.service: "async", .account: "cancelled"])).count
    let p = placed.withLock { $0 }
    say("measure own \(p.own)")
    say("measure elsewhere \(p.elsewhere)")
    say("measure otherOwn \(p.otherOwn)")
    say("measure otherElsewhere \(p.otherElsewhere)")
    say("measure cancelCode \(cancelled?.code.name ?? "ok")")
    say("measure cancelMessage \(cancelled?.message ?? "")")
    say("measure cancelStored \(cancelledStored)")
    say("measure timeoutCode \(timedOut?.code.name ?? "ok")")
    say("measure timeoutMs \(ms(timeoutTook))")
}

let scenario = CommandLine.arguments.dropFirst().first ?? "pool"
let done = DispatchSemaphore(value: 0)
// Detached: top-level code runs on the main actor, whose thread waits on the semaphore below.
Task.detached {
    do {
        switch scenario {
        case "timeouts": try await timeouts()
        case "cancel": try await cancel()
        case "slots": try await slots()
        case "executor": try await executor()
        default: try await pool()
        }
    } catch {
        say("measure error \(error)")
    }
    done.signal()
}
done.wait()
