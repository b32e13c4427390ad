public import Foundation

/// A keychain: add, copy, update, delete and clear items with SecItem semantics.
///
/// Every operation is atomic where ``guarantees`` says so (``StorageGuarantees/atomicWrites``; otherwise a
/// failure midway is undone best effort). Implementations must behave exactly as `semantics.md` describes; ours do so
/// by putting a ``StorageBackend`` under ``Keychain``, which holds the semantics once. The
/// `SecureStoreConformance` library checks any implementation.
public protocol SecureStore: Sendable {
    /// Adds one item (`SecItemAdd`).
    /// - Parameters:
    ///   - item: class, attributes and secret. Creation and modification dates are set to now.
    ///   - returning: what to return for the new item, shaped as a limit-one copy.
    /// - Returns: `.none` without return options, else `.item` for the new item.
    /// - Throws: `duplicateItem` when an item with the same uniqueness key exists (the message names the
    ///   key); `noSuchAttribute`, `param`, `missingEntitlement` for bad input. Nothing changes on error.
    @discardableResult
    func add(_ item: NewItem, returning: ReturnOptions) throws(SecureStoreError) -> QueryResult

    /// Finds items (`SecItemCopyMatching`).
    /// - Returns: shaped by limit and return options (see ``QueryResult``), in insertion order.
    /// - Throws: `itemNotFound` when nothing matches; `param`/`noSuchAttribute` for a malformed query.
    func copyMatching(_ query: ItemQuery) throws(SecureStoreError) -> QueryResult

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

    /// What the storage under this store promises (atomicity, isolation, durability, order).
    var guarantees: StorageGuarantees { get }
}

extension SecureStore {
    /// Adds one item and returns nothing.
    public func add(_ item: NewItem) throws(SecureStoreError) {
        try add(item, returning: [])
    }

    /// Deletes every item of every class: a fresh install.
    @discardableResult
    public func clear() throws(SecureStoreError) -> Int {
        try clear(Set(ItemClass.allCases))
    }

    /// The secret of the one generic password with this service (and account, if given), or `nil`.
    public func password(service: String, account: String? = nil) throws(SecureStoreError) -> Data? {
        var attributes: [AttributeName: AttributeValue] = [.service: .string(service)]
        if let account { attributes[.account] = .string(account) }
        do throws(SecureStoreError) {
            let result = try copyMatching(ItemQuery(.genericPassword, attributes, returning: .data))
            return result.items.first?.data
        } catch {
            if error.code == .itemNotFound { return nil }
            throw error
        }
    }

    /// Stores a generic password, replacing the secret of an existing item with the same service/account.
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
