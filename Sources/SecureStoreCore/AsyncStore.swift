public import Foundation

/// How long one call of a store may block the thread that makes it.
///
/// Every ``SecureStore`` operation is synchronous, as `SecItem` is. A store says here whether its calls
/// wait for anything outside the process (a file lock, a daemon, a server) and for how long at most, so
/// that callers, and the async API, know what a call costs. The async twins of the operations
/// (``SecureStore/items(matching:timeout:)`` and the others) run a store that may block on threads the
/// store owns (``StoreThreadPool``), never on the caller's task thread.
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

// MARK: - Async twins of the store operations

extension SecureStore {
    /// Runs one synchronous operation of this store for the async API: on a thread of the store's own pool
    /// (``threadPool``) when its calls may block (``blocking``), else directly (they only take an in-memory
    /// lock).
    private func perform<T: Sendable>(_ operation: String, timeout: Duration?,
                                      _ body: @escaping @Sendable (Self) throws(SecureStoreError) -> T)
        async throws(SecureStoreError) -> T
    {
        guard let pool = threadPool else {
            if Task.isCancelled { throw SecureStoreError(.notAvailable, "\(operation) on \(storeDescription): the calling task was cancelled; nothing changed.") }
            return try body(self)
        }
        return try await pool.run(timeout: timeout, "\(operation) on \(storeDescription)") { () throws(SecureStoreError) -> T in
            try body(self)
        }
    }

    /// ``add(_:returning:)`` without blocking the calling task's thread.
    /// - Parameter timeout: the longest to wait (see ``StoreThreadPool/run(timeout:_:_:)``); `nil` waits for the
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
