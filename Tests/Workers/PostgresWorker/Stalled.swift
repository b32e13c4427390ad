import Foundation
import SecureStoreCore
import SecureStorePostgres
import TestSupport

/// `securestore-postgres-worker stalled`: the async API of one PostgreSQL store (pool of 4) with one call hung
/// on a connection that a proxy stalls (a server that accepted and never answers), while other tasks make
/// lookups on the other slots and a task ticks every 10 ms on the cooperative pool; then, with a pool of 1, a
/// call that times out on the stalled connection and the call queued behind it, which runs as soon as the
/// backend's own deadline (statement timeout 2 s, + 0.2 s, + 1 s for the cancel) gives the slot back.
/// `stalled executor`: the same with every task of the store on the store's executor (its thread pool), whose
/// calls run on the thread they are on. Prints `measure NAME VALUE` lines.
enum Stalled {
    static let clock = ContinuousClock()
    static func ms(_ d: Duration) -> Int { Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000) }

    static func run(onStoreExecutor: Bool) async throws {
        guard let url = ProcessInfo.processInfo.environment["SECURESTORE_TEST_POSTGRES_URL"],
              let colon = url.range(of: ":", options: .backwards),
              let slash = url[colon.upperBound...].firstIndex(of: "/"),
              let port = UInt16(url[colon.upperBound..<slash]) else {
            throw SecureStoreError(.param, "SECURESTORE_TEST_POSTGRES_URL must be postgresql://USER@127.0.0.1:PORT/DB")
        }
        guard let proxy = StallingProxy(targetPort: port) else { throw SecureStoreError(.notAvailable, "no proxy socket") }
        defer { proxy.close() }
        let proxied = String(url[..<colon.upperBound]) + String(proxy.port) + String(url[slash...])
        func open(pool: Int) throws(SecureStoreError) -> PostgresStore {
            try PostgresStore(url: proxied, key: .raw(Data((0..<32).map { _ in UInt8.random(in: 0...255) })),
                              namespace: "stalled-\(UInt64.random(in: 0...UInt64.max))",
                              passwordEnv: "SECURESTORE_TEST_POSTGRES_PASSWORD", statementTimeout: .seconds(2),
                              poolSize: pool, rememberHost: false)
        }
        func query(_ i: Int) -> ItemQuery {
            ItemQuery(.genericPassword, [.service: "stalled", .account: .string("a\(i)")], returning: .data)
        }
        let store = try open(pool: 4)
        let executor = onStoreExecutor ? store.threadPool : nil
        for i in 0..<20 {
            try await store.add(NewItem(.genericPassword, [.service: "stalled", .account: .string("a\(i)")],
                                        data: Data("s\(i)".utf8)))
        }
        /// 3 tasks × 40 lookups at once: (answers, elapsed, longest single call).
        func lookups() async -> (ok: Int, elapsed: Duration, longest: Duration) {
            let start = clock.now
            let results = await withTaskGroup(of: (Int, Duration).self) { group in
                for t in 0..<3 {
                    group.addTask(executorPreference: executor) {
                        var ok = 0
                        var longest = Duration.zero
                        for i in 0..<40 {
                            let began = clock.now
                            if (try? await store.item(matching: query((t * 40 + i) % 20)))??.data != nil { ok += 1 }
                            longest = max(longest, clock.now - began)
                        }
                        return (ok, longest)
                    }
                }
                var all: [(Int, Duration)] = []
                for await r in group { all.append(r) }
                return all
            }
            return (results.map(\.0).reduce(0, +), clock.now - start, results.map(\.1).max() ?? .zero)
        }
        let baseline = await lookups()
        say("measure baselineOk \(baseline.ok)")
        say("measure baselineMs \(ms(baseline.elapsed))")
        say("measure baselineLongestMs \(ms(baseline.longest))")

        let ticker = Ticker()
        let ticking = Task { await ticker.run() }
        proxy.stallNextRequest()
        let hungStart = clock.now
        let hung = Task(executorPreference: executor) { () -> (String, Duration) in
            let error = await failure { () async throws(SecureStoreError) in _ = try await store.item(matching: query(0)) }
            return (error?.code.name ?? "ok", clock.now - hungStart)
        }
        for _ in 0..<200 where proxy.stalledConnections == 0 { try await Task.sleep(for: .milliseconds(10)) }
        say("measure stalled \(proxy.stalledConnections)")
        let during = await lookups()
        let othersDone = clock.now - hungStart
        let (hungCode, hungTook) = await hung.value
        let (maxGap, ticks) = ticker.stop()
        await ticking.value
        say("measure duringOk \(during.ok)")
        say("measure duringMs \(ms(during.elapsed))")
        say("measure duringLongestMs \(ms(during.longest))")
        say("measure othersDoneMs \(ms(othersDone))")
        say("measure hungCode \(hungCode)")
        say("measure hungMs \(ms(hungTook))")
        say("measure ticks \(ticks)")
        say("measure maxTickGapMs \(ms(maxGap))")
        say("measure threads \(store.threadPool?.startedThreads ?? -1)")
        say("measure poolSize \(store.threadPool?.size ?? -1)")
        let after = await lookups()
        say("measure afterOk \(after.ok)")

        // A pool of one: the call on the stalled connection times out after 300 ms (still running); the call
        // queued behind it runs once the backend's deadline ends the first one, and succeeds.
        let single = try open(pool: 1)
        let singleExecutor = onStoreExecutor ? single.threadPool : nil
        try await single.add(NewItem(.genericPassword, [.service: "stalled", .account: "a0"], data: Data("s0".utf8)))
        proxy.stallNextRequest()
        let start = clock.now
        let first = Task(executorPreference: singleExecutor) { () -> (SecureStoreError?, Duration) in
            let error = await failure { () async throws(SecureStoreError) in
                _ = try await single.item(matching: query(0), timeout: .milliseconds(300))
            }
            return (error, clock.now - start)
        }
        for _ in 0..<200 where proxy.stalledConnections == 0 { try await Task.sleep(for: .milliseconds(10)) }
        let second = await Task(executorPreference: singleExecutor) {
            await failure { () async throws(SecureStoreError) in
                guard try await single.item(matching: query(0))?.data == Data("s0".utf8) else {
                    throw SecureStoreError(.decode, "wrong answer")
                }
            }
        }.value
        let secondTook = clock.now - start
        let (firstError, firstTook) = await first.value
        say("measure timedOutCode \(firstError?.code.name ?? "ok")")
        say("measure timedOutRunning \(firstError?.message.contains("still running") == true)")
        say("measure timedOutMs \(ms(firstTook))")
        say("measure queuedCode \(second?.code.name ?? "ok") \(second?.message ?? "")")
        say("measure queuedMs \(ms(secondTook))")
        _ = try? await store.clear()
        _ = try? await single.clear()
    }
}
