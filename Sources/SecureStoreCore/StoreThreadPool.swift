import Foundation

/// The threads a store owns for its blocking calls: the async twins (``SecureStore/items(matching:timeout:)``
/// and the others) queue each call here and suspend the caller's task until a thread of the pool has run it,
/// so a stuck file, daemon or server never holds a thread of Swift's cooperative pool.
///
/// Shaped like SwiftNIO's `NIOThreadPool`: a fixed number of threads (``size``, the store's declared
/// ``SecureStore/concurrency``) share one first-in, first-out queue; each idle thread takes the next call. So
/// up to ``size`` calls of one store run at once, as many as the store can use (a PostgreSQL store's
/// connection pool, for one), and never more threads than that. A call that hangs (a server that never
/// answers, a stopped daemon) holds only its own thread: the others keep taking calls, and the hung thread
/// comes back to the pool as soon as the backend's own deadline (``Blocking/bound``) ends the call.
///
/// Threads start on demand (one more whenever a call is queued and no started thread is free, up to
/// ``size``) and end when the pool is released and its queue is empty. None of them is a thread of Swift's
/// cooperative pool.
///
/// **A task executor.** The pool is also a `TaskExecutor` (SE-0417): a task that prefers it
/// (`Task(executorPreference: store.threadPool) { … }`, `withTaskExecutorPreference(store.threadPool) { … }`,
/// or `group.addTask(executorPreference:)`) runs on these threads, and its calls of the store without a
/// `timeout` then run right there, on the store's own thread, instead of being handed to another one and
/// waited for: the hand-off (a wake-up of a store thread, then of a cooperative thread to resume the task)
/// costs about as much as a local SQLite read, so a server whose requests mostly read one store runs them
/// this way at the throughput of threads calling the sync API (`securestore-bench --concurrency`). Such a
/// call is still never on a cooperative thread; cancellation is checked before it starts, and once it runs it
/// ends within the store's own bounds (``Blocking``), as any call that has started. Such a task runs only on
/// these threads: while every one of them is held by a hung call, it does not run at all, and a timeout of
/// one of its calls is answered only when a thread comes back (plain tasks get theirs on time). As for every task
/// executor, the pool (so the store that owns it) must outlive the tasks that prefer it: child tasks inside
/// the store's scope, or a store kept for the life of the server.
public final class StoreThreadPool: Sendable {
    private let queue: JobQueue
    /// The most threads this pool runs at once.
    public let size: Int

    /// - Parameters:
    ///   - name: the threads' name (shown by debuggers and `top -H`).
    ///   - size: how many calls may run at once (at least 1; default 1, one thread, first in, first out).
    public init(name: String, size: Int = 1) {
        let size = max(1, size)
        self.size = size
        queue = JobQueue(name: name, size: size)
    }

    deinit {
        queue.close()
    }

    /// The pool shared by stores that do not own one (a ``SecureStore`` that is not a ``Keychain`` and does
    /// not say otherwise): one thread, so such stores' calls run one at a time, first in, first out.
    public static let shared = StoreThreadPool(name: "securestore-shared")

    /// How many threads have started and not ended (for tests: never more than ``size``).
    public var startedThreads: Int { queue.startedThreads }

    /// Runs `body` on a thread of this pool and returns its result, without blocking the calling task's thread.
    ///
    /// - Parameters:
    ///   - timeout: the longest the caller waits. When it passes before `body` started (every thread of the
    ///     pool was busy), `body` never runs and nothing changes; when `body` is already running, it finishes
    ///     on its thread but its result is dropped (a write may then still take effect). Either way the call
    ///     answers `notAvailable` saying which. `nil`: wait for `body` (its own bounds, ``Blocking``, still
    ///     apply).
    ///   - what: the operation and store, for the timeout message.
    /// - Throws: what `body` throws; `notAvailable` on timeout or when the calling task is cancelled.
    public func run<T: Sendable>(timeout: Duration?, _ what: @autoclosure @escaping @Sendable () -> String,
                                 _ body: @escaping @Sendable () throws(SecureStoreError) -> T)
        async throws(SecureStoreError) -> T
    {
        if timeout == nil, queue.isCurrentThread {
            // The calling task runs on this pool (its executor preference): this thread is the store's own.
            if Task.isCancelled {
                throw SecureStoreError(.notAvailable, "\(what()): the calling task was cancelled; nothing changed.")
            }
            return try body()
        }
        let call = Call<T>(what: what, threads: size)
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

extension StoreThreadPool: TaskExecutor {
    /// Runs a job of a task that prefers this pool on one of its threads (first in, first out with the
    /// store's calls).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.push { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Whether the calling thread is one of this pool's.
    public var isCurrentThread: Bool { queue.isCurrentThread }
}

/// The former name of ``StoreThreadPool`` (one thread per store, before a store's pool had its declared size).
public typealias StoreThread = StoreThreadPool

/// One queued call: whoever answers first (a thread of the pool, the timer, cancellation) resumes the caller.
private final class Call<T: Sendable>: Sendable {
    private enum Phase { case queued, running, finished }
    private struct State {
        var phase = Phase.queued
        var continuation: CheckedContinuation<Result<T, SecureStoreError>, Never>?
        var answer: Result<T, SecureStoreError>?
        var answered = false
    }
    private let state = Locked(State())
    /// Built only for a timeout's message (a call that answers never builds it).
    private let what: @Sendable () -> String
    private let threads: Int

    init(what: @escaping @Sendable () -> String, threads: Int) {
        self.what = what
        self.threads = threads
    }

    /// Registers the caller (once); answers at once if the call already expired.
    func wait(_ continuation: CheckedContinuation<Result<T, SecureStoreError>, Never>) {
        let ready: Result<T, SecureStoreError>? = state.withLock { s in
            if let answer = s.answer { return answer }
            s.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// On a thread of the pool: runs `body` unless the caller has gone already.
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
        let busy = threads == 1 ? "behind another call of this store"
            : "for a free thread of this store (all \(threads) were busy with other calls)"
        let what = what()
        answer(nil) { s in
            switch s.phase {
            case .queued:
                s.answer = .failure(SecureStoreError(.notAvailable,
                    "\(what): \(why); it was waiting \(busy) and was not run, so nothing changed."))
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

/// Marks each pool thread with its queue, so a pool can tell whether it is running the calling thread (the
/// question NIO's `EventLoop.inEventLoop` answers, the same way: a thread-specific value).
private enum ThreadOwner {
    /// One key for every pool of the process, made on first use and never deleted.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left for the store's threads")
        return key
    }()
}

/// The jobs of one ``StoreThreadPool`` and the threads that run them.
private final class JobQueue: @unchecked Sendable {   // every `var` only under `condition`
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    /// Threads started and not ended.
    private var started = 0
    /// Threads waiting for a job (counted until they wake up).
    private var idle = 0
    private var closed = false
    private let name: String
    private let size: Int

    init(name: String, size: Int) {
        self.name = name
        self.size = size
    }

    /// Whether the calling thread is one of this queue's.
    var isCurrentThread: Bool {
        let owner: UnsafeMutableRawPointer? = pthread_getspecific(ThreadOwner.key)   // nil on other threads
        return owner == Unmanaged.passUnretained(self).toOpaque()
    }

    var startedThreads: Int {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    func push(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        // One more thread when the queued jobs outnumber the threads waiting to take them.
        let start = jobs.count - head > idle && started < size
        if start { started += 1 }
        if idle > 0 { condition.signal() }   // a started thread is waiting (else each busy one looks again when done)
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
        condition.broadcast()
        condition.unlock()
    }

    private func loop() {
        pthread_setspecific(ThreadOwner.key, Unmanaged.passUnretained(self).toOpaque())
        condition.lock()
        while true {
            while head == jobs.count && !closed {
                idle += 1
                condition.wait()
                idle -= 1
            }
            if head == jobs.count {   // closed and drained
                started -= 1
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
            condition.lock()
        }
    }
}
