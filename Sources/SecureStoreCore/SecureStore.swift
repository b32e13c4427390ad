public import Foundation

/// A keychain: add, copy, update, delete and clear items with SecItem semantics.
///
/// Every operation is atomic where ``guarantees`` says so (``StorageGuarantees/atomicWrites``; otherwise a
/// failure midway is undone best effort). Implementations must obey the rules of the SecItem semantics article
/// (`Sources/SecureStoreCore/SecureStoreCore.docc/Semantics.md`, each rule named as its conformance check); ours do so
/// by putting a ``StorageBackend`` under ``Keychain``, which holds the semantics once. The
/// `SecureStoreConformance` library checks any implementation.
///
/// Every operation is synchronous and may block the calling thread while the store waits for a file lock,
/// a daemon or a server: ``blocking`` says for what and how long at most (the in-memory store never waits;
/// SQLite up to its busy timeout; the Secret Service up to 5 s per D-Bus round trip; PostgreSQL up to the
/// connect timeout per host and the statement timeout per statement). In async code use the async twins
/// (``items(matching:timeout:)`` and the others), which run blocking calls on the store's own threads
/// (``threadPool``, as many as the store can use: ``concurrency``).
public protocol SecureStore: Sendable {
    /// Adds one item (`SecItemAdd`).
    /// - Parameters:
    ///   - item: class, attributes and secret. Creation and modification dates are set to now.
    ///   - returning: what the returned ``Item`` holds besides its class.
    /// - Returns: the new item.
    /// - Throws: `duplicateItem` when an item with the same uniqueness key exists (the message names the
    ///   key); `noSuchAttribute`, `param`, `missingEntitlement` for bad input. Nothing changes on error.
    @discardableResult
    func add(_ item: NewItem, returning: ReturnOptions) throws(SecureStoreError) -> Item

    /// The items that match, in insertion order, up to the query's limit (every match without one).
    /// - Returns: the matches, each holding what `query.returning` asks for; empty when nothing matches.
    /// - Throws: `param`/`noSuchAttribute`/`missingEntitlement` for a malformed query, never `itemNotFound`.
    func items(matching query: ItemQuery) throws(SecureStoreError) -> [Item]

    /// The first item that matches (the query's limit is ignored), or `nil`. Stores need not implement
    /// it: the default is ``items(matching:)`` with a limit of one.
    func item(matching query: ItemQuery) throws(SecureStoreError) -> Item?

    /// Updates every matching item (`SecItemUpdate`), all or nothing.
    /// - Returns: how many items changed.
    /// - Throws: `itemNotFound`; `duplicateItem` if an item's new key collides (nothing changes);
    ///   `param` if the query has a match limit, case-insensitivity or return keys.
    @discardableResult
    func update(_ query: ItemQuery, with changes: ItemChanges) throws(SecureStoreError) -> Int

    /// Deletes every matching item (`SecItemDelete`).
    /// - Returns: how many items were deleted.
    /// - Throws: `itemNotFound` when nothing matches; `param` for a match key in the query.
    @discardableResult
    func delete(_ query: ItemQuery) throws(SecureStoreError) -> Int

    /// Deletes every item of the given classes in this store, synchronizable or not, in every access group.
    /// - Returns: how many items were deleted (0 is not an error).
    @discardableResult
    func clear(_ classes: Set<ItemClass>) throws(SecureStoreError) -> Int

    /// Which backend and where, for messages; never a secret.
    var storeDescription: String { get }

    /// Whether a call may block its thread, waiting for what, and for how long at most.
    var blocking: Blocking { get }

    /// How many calls of this store can usefully run at once, each on a thread of its own (for a ``Keychain``,
    /// its backend's ``StorageBackend/concurrency``). The async operations run this many at most
    /// (``threadPool``).
    var concurrency: Int { get }

    /// The threads the async operations run this store's calls on (``concurrency`` of them); `nil` when its
    /// calls never block (they then run on the caller's task).
    var threadPool: StoreThreadPool? { get }

    /// What the storage under this store promises (atomicity, isolation, durability, order).
    var guarantees: StorageGuarantees { get }
}

extension SecureStore {
    /// A store that does not say may block without a known bound.
    public var blocking: Blocking { .unknown }

    /// A store that does not say runs one call at a time.
    public var concurrency: Int { 1 }

    /// The process-wide ``StoreThreadPool/shared`` (one thread) when calls may block (a store should own its
    /// pool).
    public var threadPool: StoreThreadPool? { blocking.mayBlock ? StoreThreadPool.shared : nil }

    /// The former name of ``threadPool``.
    @available(*, deprecated, renamed: "threadPool")
    public var storeThread: StoreThreadPool? { threadPool }

    /// Adds one item and returns nothing.
    public func add(_ item: NewItem) throws(SecureStoreError) {
        try add(item, returning: [])
    }

    /// Deletes every item of every class: a fresh install.
    @discardableResult
    public func clear() throws(SecureStoreError) -> Int {
        try clear(Set(ItemClass.allCases))
    }

    /// The first item that matches (the query's limit is ignored), or `nil`.
    public func item(matching query: ItemQuery) throws(SecureStoreError) -> Item? {
        var one = query
        one.limit = .one
        return try items(matching: one).first
    }

    /// The secret of the generic password with this service and account, or `nil`.
    ///
    /// The account is part of a generic password's key: an item stored without one has the empty account,
    /// so `account` defaults to `""` here and in ``setPassword(_:service:account:)`` alike (the same item).
    /// To find the items of a service whatever their account, use ``items(matching:)``.
    public func password(service: String, account: String = "") throws(SecureStoreError) -> Data? {
        let query = ItemQuery(.genericPassword, [.service: .string(service), .account: .string(account)], returning: .data)
        return try item(matching: query)?.data
    }

    /// Stores a generic password, replacing the secret of an existing item with the same service and
    /// account (`""` when not given, as for ``password(service:account:)``).
    public func setPassword(_ secret: Data, service: String, account: String = "") throws(SecureStoreError) {
        let attributes: [AttributeName: AttributeValue] = [.service: .string(service), .account: .string(account)]
        do throws(SecureStoreError) {
            try add(NewItem(.genericPassword, attributes, data: secret))
        } catch {
            guard error.code == .duplicateItem else { throw error }
            try update(ItemQuery(.genericPassword, attributes), with: ItemChanges(data: secret))
        }
    }
}

/// How a store is set up, whatever the backend.
public struct StoreConfiguration: Sendable {
    /// The access groups this store may use, in order: an add without a group goes into the first; a query
    /// without a group covers all of them; any other group gives `missingEntitlement`.
    public var accessGroups: [String]
    /// The source of "now" for creation and modification dates (tests may pin it).
    public var clock: @Sendable () -> Date

    /// The access group every backend uses when none is configured: the same on every backend, so items
    /// move between two stores with default settings (`migrate`) without any group configured.
    public static let defaultAccessGroup = "securestore"

    /// - Parameter accessGroups: non-empty; defaults to ``defaultAccessGroup``.
    public init(accessGroups: [String] = [StoreConfiguration.defaultAccessGroup],
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.accessGroups = accessGroups
        self.clock = clock
    }
}
