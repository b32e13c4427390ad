public import Foundation

/// How long one call of a store may block the thread that makes it.
///
/// Every ``SecureStore`` operation is synchronous, as `SecItem` is. A store says here whether its calls
/// wait for anything outside the process (a file lock, a daemon, a server) and for how long at most, so
/// that callers, and the async API, know what a call costs. The async twins of the operations
/// (``SecureStore/items(matching:timeout:)`` and the others) run a store that may block on a thread the
/// store owns, never on the caller's task thread.
public struct Blocking: Sendable, Hashable, CustomStringConvertible {
    /// Whether a call may wait for something outside this process.
    public let mayBlock: Bool
    /// The longest one wait of a call may last with this store's settings, when there is such a bound. A
    /// call may wait more than once (``waitsFor`` says for what and how often).
    public let bound: Duration?
    /// What a call waits for, in words.
    public let waitsFor: String

    public init(mayBlock: Bool, bound: Duration?, waitsFor: String) {
        self.mayBlock = mayBlock
        self.bound = bound
        self.waitsFor = waitsFor
    }

    /// Never waits for anything outside the process (in-memory work under a lock).
    public static let never = Blocking(mayBlock: false, bound: .zero, waitsFor: "nothing outside the process")

    /// Each wait lasts at most `bound`.
    public static func upTo(_ bound: Duration, waitingFor waitsFor: String) -> Blocking {
        Blocking(mayBlock: true, bound: bound, waitsFor: waitsFor)
    }

    /// A store that does not say: treated as one that may block without bound.
    public static let unknown = Blocking(mayBlock: true, bound: nil, waitsFor: "unknown (the store does not say)")

    public var description: String {
        guard mayBlock else { return "never blocks" }
        guard let bound else { return "may block without a known bound, waiting for \(waitsFor)" }
        return "may block, each wait up to \(bound), waiting for \(waitsFor)"
    }
}

/// A thread a store owns for its blocking calls: the async API queues each call here (first in, first out)
/// and suspends the caller's task until it answers, so a stuck file, daemon or server never holds a thread
/// of Swift's cooperative pool.
///
/// The thread starts on the first call and ends when the `StoreThread` is released and its queue is empty.
public final class StoreThread: Sendable {
    private let queue: JobQueue

    /// - Parameter name: the thread's name (shown by debuggers and `top -H`).
    public init(name: String) {
        queue = JobQueue(name: name)
    }

    deinit {
        queue.close()
    }

    /// The thread shared by stores that do not own one (a ``SecureStore`` that is not a ``Keychain``).
    public static let shared = StoreThread(name: "securestore-shared")

    /// Runs `body` on this thread and returns its result, without blocking the calling task's thread.
    ///
    /// - Parameters:
    ///   - timeout: the longest the caller waits. When it passes before `body` started, `body` never runs
    ///     and nothing changes; when `body` is already running, it finishes on this thread but its result is
    ///     dropped (a write may then still take effect). Either way the call answers `notAvailable` saying
    ///     which. `nil`: wait for `body` (its own bounds, ``Blocking``, still apply).
    ///   - what: the operation and store, for the timeout message.
    /// - Throws: what `body` throws; `notAvailable` on timeout or when the calling task is cancelled.
    public func run<T: Sendable>(timeout: Duration?, _ what: @autoclosure () -> String,
                                 _ body: @escaping @Sendable () throws(SecureStoreError) -> T)
        async throws(SecureStoreError) -> T
    {
        let call = Call<T>(what: what())
        let timer: Task<Void, Never>? = timeout.map { limit in
            Task { [call] in
                do {
                    try await Task.sleep(for: limit)
                    call.expire("no answer within \(limit)")
                } catch {}
            }
        }
        defer { timer?.cancel() }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, SecureStoreError>, Never>) in
                call.wait(continuation)
                queue.push { call.execute(body) }
            }
        } onCancel: {
            call.expire("the calling task was cancelled")
        }
        return try outcome.get()
    }
}

/// One queued call: whoever answers first (the store's thread, the timer, cancellation) resumes the caller.
private final class Call<T: Sendable>: Sendable {
    private enum Phase { case queued, running, finished }
    private struct State {
        var phase = Phase.queued
        var continuation: CheckedContinuation<Result<T, SecureStoreError>, Never>?
        var answer: Result<T, SecureStoreError>?
        var answered = false
    }
    private let state = Locked(State())
    private let what: String

    init(what: String) { self.what = what }

    /// Registers the caller (once); answers at once if the call already expired.
    func wait(_ continuation: CheckedContinuation<Result<T, SecureStoreError>, Never>) {
        let ready: Result<T, SecureStoreError>? = state.withLock { s in
            if let answer = s.answer { return answer }
            s.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// On the store's thread: runs `body` unless the caller has gone already.
    func execute(_ body: @Sendable () throws(SecureStoreError) -> T) {
        let run = state.withLock { s in
            guard !s.answered else { return false }
            s.phase = .running
            return true
        }
        guard run else { return }
        let result = Result { () throws(SecureStoreError) -> T in try body() }
        answer(result) { $0.phase = .finished }
    }

    /// The caller stops waiting (timeout or cancellation).
    func expire(_ why: String) {
        answer(nil) { s in
            switch s.phase {
            case .queued:
                s.answer = .failure(SecureStoreError(.notAvailable,
                    "\(what): \(why); it was waiting behind another call of this store and was not run, so nothing changed."))
            case .running:
                s.answer = .failure(SecureStoreError(.notAvailable,
                    "\(what): \(why); it is still running on the store's thread, so a change it makes may still take effect."))
            case .finished:
                break
            }
        }
    }

    /// Resumes the caller once, with `result` or the answer `update` left in the state.
    private func answer(_ result: Result<T, SecureStoreError>?, _ update: (inout State) -> Void) {
        let resume: (CheckedContinuation<Result<T, SecureStoreError>, Never>, Result<T, SecureStoreError>)? = state.withLock { s in
            update(&s)
            guard !s.answered else { return nil }
            if let result { s.answer = result }
            guard let answer = s.answer else { return nil }
            s.answered = true
            guard let continuation = s.continuation else { return nil }   // `wait` will answer
            s.continuation = nil
            return (continuation, answer)
        }
        if let (continuation, answer) = resume { continuation.resume(returning: answer) }
    }
}

/// The jobs of one ``StoreThread`` and the thread that runs them.
private final class JobQueue: @unchecked Sendable {   // `jobs`, `started`, `closed` only under `condition`
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var started = false
    private var closed = false
    private let name: String

    init(name: String) { self.name = name }

    func push(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let start = !started
        started = true
        condition.signal()
        condition.unlock()
        if start {
            let thread = Thread { [self] in loop() }
            thread.name = name
            thread.start()
        }
    }

    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while head == jobs.count && !closed { condition.wait() }
            if head == jobs.count {   // closed and drained
                started = false
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}

// MARK: - Async twins of the store operations

extension SecureStore {
    /// Runs one synchronous operation of this store for the async API: on the store's own thread when its
    /// calls may block (``blocking``), else directly (they only take an in-memory lock).
    private func perform<T: Sendable>(_ operation: String, timeout: Duration?,
                                      _ body: @escaping @Sendable (Self) throws(SecureStoreError) -> T)
        async throws(SecureStoreError) -> T
    {
        guard let thread = storeThread else {
            if Task.isCancelled { throw SecureStoreError(.notAvailable, "\(operation) on \(storeDescription): the calling task was cancelled; nothing changed.") }
            return try body(self)
        }
        return try await thread.run(timeout: timeout, "\(operation) on \(storeDescription)") { () throws(SecureStoreError) -> T in
            try body(self)
        }
    }

    /// ``add(_:returning:)`` without blocking the calling task's thread.
    /// - Parameter timeout: the longest to wait (see ``StoreThread/run(timeout:_:_:)``); `nil` waits for the
    ///   store's own bounds (``blocking``).
    @discardableResult
    public func add(_ item: NewItem, returning: ReturnOptions = [], timeout: Duration? = nil)
        async throws(SecureStoreError) -> Item
    {
        try await perform("add", timeout: timeout) { (s: Self) throws(SecureStoreError) in try s.add(item, returning: returning) }
    }

    /// ``items(matching:)`` without blocking the calling task's thread.
    public func items(matching query: ItemQuery, timeout: Duration? = nil) async throws(SecureStoreError) -> [Item] {
        try await perform("items(matching:)", timeout: timeout) { (s: Self) throws(SecureStoreError) in try s.items(matching: query) }
    }

    /// ``item(matching:)`` without blocking the calling task's thread.
    public func item(matching query: ItemQuery, timeout: Duration? = nil) async throws(SecureStoreError) -> Item? {
        try await perform("item(matching:)", timeout: timeout) { (s: Self) throws(SecureStoreError) in try s.item(matching: query) }
    }

    /// ``update(_:with:)`` without blocking the calling task's thread.
    @discardableResult
    public func update(_ query: ItemQuery, with changes: ItemChanges, timeout: Duration? = nil)
        async throws(SecureStoreError) -> Int
    {
        try await perform("update", timeout: timeout) { (s: Self) throws(SecureStoreError) in try s.update(query, with: changes) }
    }

    /// ``delete(_:)`` without blocking the calling task's thread.
    @discardableResult
    public func delete(_ query: ItemQuery, timeout: Duration? = nil) async throws(SecureStoreError) -> Int {
        try await perform("delete", timeout: timeout) { (s: Self) throws(SecureStoreError) in try s.delete(query) }
    }

    /// ``clear(_:)`` without blocking the calling task's thread.
    @discardableResult
    public func clear(_ classes: Set<ItemClass> = Set(ItemClass.allCases), timeout: Duration? = nil)
        async throws(SecureStoreError) -> Int
    {
        try await perform("clear", timeout: timeout) { (s: Self) throws(SecureStoreError) in try s.clear(classes) }
    }

    /// ``password(service:account:)`` without blocking the calling task's thread.
    public func password(service: String, account: String = "", timeout: Duration? = nil)
        async throws(SecureStoreError) -> Data?
    {
        try await perform("password", timeout: timeout) { (s: Self) throws(SecureStoreError) in
            try s.password(service: service, account: account)
        }
    }

    /// ``setPassword(_:service:account:)`` without blocking the calling task's thread.
    public func setPassword(_ secret: Data, service: String, account: String = "", timeout: Duration? = nil)
        async throws(SecureStoreError)
    {
        try await perform("setPassword", timeout: timeout) { (s: Self) throws(SecureStoreError) in
            try s.setPassword(secret, service: service, account: account)
        }
    }
}
