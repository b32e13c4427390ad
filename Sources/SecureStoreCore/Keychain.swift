import Foundation

/// SecItem semantics over any ``StorageBackend``: validation, uniqueness, matching, dates.
///
/// This is the only place those rules live (operations here, checking input in `Keychain+Validation.swift`,
/// matching and uniqueness in `Keychain+Matching.swift`); every backend of this package is a
/// `Keychain<Backend>`. Apple's result shapes (one object or an array) are the SecItem module's.
public final class Keychain<Backend: StorageBackend>: SecureStore {
    public let backend: Backend
    public let configuration: StoreConfiguration
    /// `configuration.accessGroups` as a set, built once (every query reads it).
    let accessGroupSet: Set<String>
    /// This store's own threads for the async operations, as many as its backend can use (started on
    /// demand; ``SecureStore/threadPool``).
    private let ownPool: StoreThreadPool

    /// - Throws: `param` when the configuration has no access group or an empty one.
    public init(backend: Backend, configuration: StoreConfiguration = StoreConfiguration()) throws(SecureStoreError) {
        guard !configuration.accessGroups.isEmpty, !configuration.accessGroups.contains("") else {
            throw .param("accessGroups", "A store needs at least one access group, and none may be empty.")
        }
        self.backend = backend
        self.configuration = configuration
        accessGroupSet = Set(configuration.accessGroups)
        ownPool = StoreThreadPool(name: "securestore", size: backend.concurrency)
    }

    public var storeDescription: String { backend.backendDescription }

    /// The backend's ``StorageBackend/blocking``.
    public var blocking: Blocking { backend.blocking }

    /// The backend's ``StorageBackend/concurrency`` (at least 1).
    public var concurrency: Int { max(1, backend.concurrency) }

    /// This store's own pool (``concurrency`` threads) when its backend may block, else `nil` (calls run on
    /// the caller's task).
    public var threadPool: StoreThreadPool? { backend.blocking.mayBlock ? ownPool : nil }

    // MARK: Operations

    public func add(_ item: NewItem, returning: ReturnOptions) throws(SecureStoreError) -> Item {
        let record = try newRecord(item)
        try backend.write { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            let existing = try txn.find(RecordFilter(uniquenessOf: record))
            if existing.contains(where: { $0.uniqueKey == record.uniqueKey }) {
                throw duplicate(record)
            }
            try txn.insert(record)
        }
        return Item(record, returning: returning)
    }

    public func items(matching query: ItemQuery) throws(SecureStoreError) -> [Item] {
        let prepared = try prepare(query, for: .copy)
        let max: Int? = switch query.limit ?? .all {
        case .one: 1
        case .all: nil
        case .count(let n): n
        }
        let found = Self.matching(prepared, in: try backend.findRecords(prepared.filter), max: max)
        return found.map { Item($0, returning: query.returning) }
    }

    /// ``items(matching:)`` with a limit of one, without the array of results.
    public func item(matching query: ItemQuery) throws(SecureStoreError) -> Item? {
        let prepared = try prepare(query, for: .copyFirst)
        return try backend.firstRecord(prepared.filter) { Self.matches($0, prepared) }
            .map { Item($0, returning: query.returning) }
    }

    @discardableResult
    public func update(_ query: ItemQuery, with changes: ItemChanges) throws(SecureStoreError) -> Int {
        var prepared = try prepare(query, for: .update)
        // An update that sets a new secret never reads the old ones (each is replaced, not kept).
        if changes.data != nil { prepared.filter.needsData = false }
        let normalized = try normalizeChanges(changes, itemClass: query.itemClass)
        if let data = changes.data { try StoreLimits.checkSecret(data.count) }
        // A change of the secret alone, of the items the key decides, reads of them only what it writes back
        // besides the secret: reference and modification date (no attribute is decoded).
        let secretAlone = changes.data != nil && normalized.isEmpty
        if secretAlone, prepared.keyDecides, prepared.filter.uniqueKeys != nil {
            prepared.filter.needsAttributes = false
            prepared.filter.needsModificationDate = true
        }
        let touchesKey = normalized.keys.contains { name in
            ItemClass.allCases.contains { $0.uniquenessKey.contains(name) }
        }
        return try backend.write { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            let found = try matching(prepared, in: &txn, max: nil)
            guard !found.isEmpty else { throw .notFound() }
            let now = configuration.clock()
            var updated: [ItemRecord] = []
            updated.reserveCapacity(found.count)
            for old in found {
                guard secretAlone || !old.attributesOmitted else {
                    throw SecureStoreError(.internalError, "A backend answered an update with an item without its attributes.")
                }
                for name in normalized.keys where !old.itemClass.defines(name) {
                    throw SecureStoreError(.noSuchAttribute,
                        "A \(old.itemClass) has no attribute \(name.name) (\(name.code)).", parameter: name.code)
                }
                updated.append(old.updated(normalized, modified: Self.later(than: old[.modificationDate], now: now),
                                           data: changes.data ?? old.data))
            }
            if touchesKey {
                try checkCollisions(updated, in: &txn)
            }
            for record in updated {
                try txn.replace(record)
            }
            return updated.count
        }
    }

    @discardableResult
    public func delete(_ query: ItemQuery) throws(SecureStoreError) -> Int {
        let prepared = try prepare(query, for: .delete)   // reads no secret, nor attributes the key decides
        return try backend.write { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            let found = try matching(prepared, in: &txn, max: nil)
            guard !found.isEmpty else { throw .notFound() }
            try txn.remove(found.map(\.persistentRef))
            return found.count
        }
    }

    @discardableResult
    public func clear(_ classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
        guard !classes.isEmpty else { return 0 }
        return try backend.write { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            try txn.removeAll(of: classes)
        }
    }

    static func later(than previous: AttributeValue?, now: Date) -> Date {
        guard case .date(let before)? = previous, now <= before else { return now }
        return before.addingTimeInterval(0.001)
    }

}

extension Item {
    /// The parts of `record` that `returning` asks for (``ReturnOptions/ref`` gives nothing on Linux).
    init(_ record: ItemRecord, returning: ReturnOptions) {
        self.init(itemClass: record.itemClass,
                  attributes: returning.contains(.attributes) ? record.attributes : nil,
                  data: returning.contains(.data) ? record.data : nil,
                  persistentRef: returning.contains(.persistentRef) ? record.persistentRef : nil)
    }
}
