// Helpers for the async API's tests and the async probe: a store whose calls block, a ticking task, and the
// error of an async body.
import Foundation
public import SecureStoreCore
public import SecureStoreInMemory

/// The in-memory backend with every transaction made slow, as a stuck file, daemon or server makes it: a
/// store whose calls block, to show where the async API runs them.
public final class SlowBackend: StorageBackend {
    let inner = InMemoryBackend()
    public let delay: Duration
    /// The declared ``StorageBackend/concurrency`` (the in-memory backend under it takes its own lock only
    /// briefly, so sleeping transactions do run at once).
    public let concurrency: Int

    public init(delay: Duration, concurrency: Int = 1) {
        self.delay = delay
        self.concurrency = concurrency
    }

    private let hang = Locked<Duration?>(nil)
    private let observer = Locked<(@Sendable () -> Void)?>(nil)

    /// Calls `body` at the start of every transaction, on the thread that runs it.
    public func observeTransactions(_ body: @escaping @Sendable () -> Void) {
        observer.withLock { $0 = body }
    }

    /// The next transaction sleeps `duration` instead of ``delay`` (a call stuck until its deadline).
    public func hangNext(for duration: Duration) {
        hang.withLock { $0 = duration }
    }

    public var backendDescription: String { "slow memory" }
    public static var guarantees: StorageGuarantees { InMemoryBackend.guarantees }
    public var blocking: Blocking { .upTo(delay, waitingFor: "a sleep (test)") }

    public func withTransaction<T>(writing: Bool, _ body: (inout InMemoryBackend.Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        observer.withLock { $0 }?()
        let wait = hang.withLock { next in
            defer { next = nil }
            return next ?? delay
        }
        Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
        return try inner.withTransaction(writing: writing, body)
    }
}

/// The error `body` throws, or nil.
public func failure(_ body: () async throws(SecureStoreError) -> Void) async -> SecureStoreError? {
    do throws(SecureStoreError) {
        try await body()
        return nil
    } catch {
        return error
    }
}

/// Ticks every 10 ms until stopped and records the longest gap between two ticks.
public final class Ticker: Sendable {
    public init() {}

    private let state = Locked<(stop: Bool, maxGap: Duration, ticks: Int)>((false, .zero, 0))

    public func run() async {
        let clock = ContinuousClock()
        var last = clock.now
        while !state.withLock({ $0.stop }) {
            try? await Task.sleep(for: .milliseconds(10))
            let now = clock.now
            let gap = now - last
            last = now
            state.withLock { s in
                s.maxGap = max(s.maxGap, gap)
                s.ticks += 1
            }
        }
    }

    public func stop() -> (maxGap: Duration, ticks: Int) {
        state.withLock { s in
            s.stop = true
            return (s.maxGap, s.ticks)
        }
    }
}
