import Foundation

/// SecItem semantics over any ``StorageBackend``: validation, uniqueness, matching, dates, result shapes.
///
/// This is the only place those rules live; every backend of this package is a `Keychain<Backend>`.
public final class Keychain<Backend: StorageBackend>: SecureStore {
    public let backend: Backend
    public let configuration: StoreConfiguration
    /// `configuration.accessGroups` as a set, built once (every query reads it).
    private let accessGroupSet: Set<String>
    /// This store's own thread for the async operations (started on first use; ``SecureStore/storeThread``).
    private let ownThread = StoreThread(name: "securestore")

    /// - Throws: `param` when the configuration has no access group or an empty one.
    public init(backend: Backend, configuration: StoreConfiguration = StoreConfiguration()) throws(SecureStoreError) {
        guard !configuration.accessGroups.isEmpty, !configuration.accessGroups.contains("") else {
            throw .param("accessGroups", "A store needs at least one access group, and none may be empty.")
        }
        self.backend = backend
        self.configuration = configuration
        accessGroupSet = Set(configuration.accessGroups)
    }

    public var storeDescription: String { backend.backendDescription }

    /// The backend's ``StorageBackend/blocking``.
    public var blocking: Blocking { backend.blocking }

    /// This store's own thread when its backend may block, else `nil` (calls run on the caller's task).
    public var storeThread: StoreThread? { backend.blocking.mayBlock ? ownThread : nil }

    // MARK: Operations

    @discardableResult
    public func add(_ item: NewItem, returning: ReturnOptions) throws(SecureStoreError) -> QueryResult {
        let record = try newRecord(item)
        try backend.withTransaction(writing: true) { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            let existing = try txn.find(RecordFilter(itemClass: record.itemClass, uniqueKeys: [record.uniqueKey]))
            if existing.contains(where: { $0.uniqueKey == record.uniqueKey }) {
                throw duplicate(record)
            }
            try txn.insert(record)
        }
        guard !returning.subtracting(.ref).isEmpty else { return .none }   // what shape gives, without an array
        return shape([record], returning: returning, limit: .one)
    }

    public func copyMatching(_ query: ItemQuery) throws(SecureStoreError) -> QueryResult {
        let prepared = try prepare(query, for: .copy)
        let limit = query.limit ?? .one
        let max: Int? = switch limit {
        case .one: 1
        case .all: nil
        case .count(let n): n
        }
        let found = try backend.withTransaction(writing: false) { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            try matching(prepared, in: &txn, max: max)
        }
        guard !found.isEmpty else { throw .notFound() }
        return shape(found, returning: query.returning, limit: limit)
    }

    @discardableResult
    public func update(_ query: ItemQuery, with changes: ItemChanges) throws(SecureStoreError) -> Int {
        let prepared = try prepare(query, for: .update)
        let normalized = try normalizeChanges(changes, itemClass: query.itemClass)
        if let data = changes.data { try StoreLimits.checkSecret(data.count) }
        let touchesKey = normalized.keys.contains { name in
            ItemClass.allCases.contains { $0.uniquenessKey.contains(name) }
        }
        return try backend.withTransaction(writing: true) { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            let found = try matching(prepared, in: &txn, max: nil)
            guard !found.isEmpty else { throw .notFound() }
            let now = configuration.clock()
            var updated: [ItemRecord] = []
            updated.reserveCapacity(found.count)
            for old in found {
                var attributes = old.attributes
                for (name, value) in normalized {
                    guard old.itemClass.attributes.contains(name) else {
                        throw SecureStoreError(.noSuchAttribute,
                            "A \(old.itemClass) has no attribute \(name.name) (\(name.code)).", parameter: name.code)
                    }
                    attributes[name] = value
                }
                attributes[.modificationDate] = .date(Self.later(than: old.attributes[.modificationDate], now: now))
                updated.append(ItemRecord(persistentRef: old.persistentRef, itemClass: old.itemClass,
                                          attributes: attributes, data: changes.data ?? old.data))
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
        let prepared = try prepare(query, for: .delete)
        return try backend.withTransaction(writing: true) { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            let found = try matching(prepared, in: &txn, max: nil)
            guard !found.isEmpty else { throw .notFound() }
            try txn.remove(found.map(\.persistentRef))
            return found.count
        }
    }

    @discardableResult
    public func clear(_ classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
        guard !classes.isEmpty else { return 0 }
        return try backend.withTransaction(writing: true) { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            try txn.removeAll(of: classes)
        }
    }

    // MARK: Building records

    private func newRecord(_ item: NewItem) throws(SecureStoreError) -> ItemRecord {
        var attributes = try validate(item.attributes, for: item.itemClass, writing: true)
        try StoreLimits.checkSecret(item.data?.count ?? 0)
        attributes.reserveCapacity(attributes.count + 5)   // one copy, no rehash as the store's five are added
        if attributes[.accessGroup] == nil {
            attributes[.accessGroup] = .string(configuration.accessGroups[0])
        }
        if attributes[.accessible] == nil {
            attributes[.accessible] = .string(item.itemClass.defaultAccessibility.rawValue)
        }
        if attributes[.synchronizable] == nil {
            attributes[.synchronizable] = .bool(false)
        }
        let now = configuration.clock()
        attributes[.creationDate] = .date(now)
        attributes[.modificationDate] = .date(now)
        return ItemRecord(persistentRef: .random(), itemClass: item.itemClass, attributes: attributes,
                          data: item.data)
    }

    private func normalizeChanges(_ changes: ItemChanges, itemClass: ItemClass?) throws(SecureStoreError)
        -> [AttributeName: AttributeValue]
    {
        // Dates are the store's: creation never changes, modification becomes now.
        let settable = changes.attributes.filter { $0.key != .creationDate && $0.key != .modificationDate }
        return try validate(settable, for: itemClass, writing: true)
    }

    /// Checks attributes in a fixed order, so every backend reports the same error for the same input:
    /// first a bad value of an attribute the class defines (param: a value of the wrong type, or when
    /// `writing` a value over ``StoreLimits/maxAttributeValueBytes``, in code order), then an attribute the
    /// class lacks (noSuchAttribute; like Apple, its value is not looked at), then a foreign group
    /// (missingEntitlement). The secret's size is checked after the attributes.
    ///
    /// `fastPath: false` (tests only) always takes the ordered path; both must give the same result.
    func validate(_ attributes: [AttributeName: AttributeValue], for itemClass: ItemClass?,
                  writing: Bool = false, fastPath: Bool = true)
        throws(SecureStoreError) -> [AttributeName: AttributeValue]
    {
        // Fast path: every attribute is defined for the class, already in its normal form, and no access
        // group is named: the input is returned as it is (no sorting, no copy). Anything else takes the
        // ordered path below, which reports errors in a fixed order.
        if fastPath, attributes[.accessGroup] == nil {
            let defined = itemClass.map { $0.attributes }
            var plain = true
            for (name, value) in attributes {
                if let defined, !defined.contains(name) { plain = false; break }
                if !name.isNormal(value) { plain = false; break }
            }
            if plain { return attributes }
        }
        let names = attributes.keys.sorted()
        let defined = itemClass?.attributes
        var normalized: [AttributeName: AttributeValue] = [:]
        normalized.reserveCapacity(attributes.count + 5)
        for name in names where defined?.contains(name) ?? true {
            if let value = attributes[name] {
                let clean = try name.normalize(value)
                if writing { try StoreLimits.checkAttribute(name, clean) }
                normalized[name] = clean
            }
        }
        if let itemClass, let defined, let name = names.first(where: { !defined.contains($0) }) {
            throw SecureStoreError(.noSuchAttribute,
                "A \(itemClass) has no attribute \(name.name) (\(name.code)).", parameter: name.code)
        }
        if let group = normalized[.accessGroup] { try checkGroup(group) }
        return normalized
    }

    private func checkGroup(_ group: AttributeValue) throws(SecureStoreError) {
        guard let text = group.text, configuration.accessGroups.contains(text) else {
            throw SecureStoreError(.missingEntitlement,
                "Access group \(group) is not one of this store's groups \(configuration.accessGroups); "
                + "configure the store with it or leave the group out.", parameter: AttributeName.accessGroup.code)
        }
    }

    static func later(than previous: AttributeValue?, now: Date) -> Date {
        guard case .date(let before)? = previous, now <= before else { return now }
        return before.addingTimeInterval(0.001)
    }

    private func duplicate(_ record: ItemRecord) -> SecureStoreError {
        let key = record.itemClass.uniquenessKey.map { name -> String in
            let value = record.attributes[name] ?? name.defaultValue
            return "\(name.name)=\(value.map { String(describing: $0) } ?? "nil")"
        }.joined(separator: ", ")
        return SecureStoreError(.duplicateItem,
            "A \(record.itemClass) with the same uniqueness key already exists (\(key)). Update it, or delete it "
            + "first; attributes outside the key (label, comment, accessibility, the secret) never make items distinct.")
    }

    private func checkCollisions(_ updated: [ItemRecord], in txn: inout Backend.Transaction) throws(SecureStoreError) {
        var keys: [UniqueKey: ItemRecord] = [:]
        for record in updated {
            if keys.updateValue(record, forKey: record.uniqueKey) != nil { throw duplicate(record) }
        }
        let refs = Set(updated.map(\.persistentRef))
        let others = try txn.find(RecordFilter(uniqueKeys: Array(keys.keys)))
        for other in others where !refs.contains(other.persistentRef) {
            if let record = keys[other.uniqueKey] { throw duplicate(record) }
        }
    }

    // MARK: Queries

    typealias Operation = KeychainOperation

    private func prepare(_ query: ItemQuery, for operation: Operation) throws(SecureStoreError) -> PreparedQuery {
        switch operation {
        case .copy:
            if case .count(let n)? = query.limit, n < 1 {
                throw .param("m_Limit", "The match limit must be one, all, or a positive number; got \(n).")
            }
        case .update, .delete:
            let verb = operation == .update ? "An update" : "A delete"
            if query.limit != nil {
                throw .param("m_Limit", "\(verb) affects every matching item; remove the match limit.")
            }
            if query.caseInsensitive {
                throw .param("m_CaseInsensitive", "\(verb) query may not contain match keys; remove m_CaseInsensitive.")
            }
            if operation == .update, !query.returning.isEmpty {
                throw .param("r_Data", "An update query may not contain return keys; remove them.")
            }
        }
        if let ref = query.persistentRef {
            guard query.attributes.isEmpty, !query.synchronizableAny else {
                throw .param("v_PersistentRef",
                    "A persistent reference identifies one item by itself; remove the other attributes from the query.")
            }
            return PreparedQuery(itemClass: query.itemClass, attributes: [:], synchronizable: nil,
                                 groups: accessGroupSet, caseInsensitive: false, keyDecides: false,
                                 filter: RecordFilter(itemClass: query.itemClass, persistentRef: ref))
        }
        guard let itemClass = query.itemClass else {
            throw .param("class", "The query has no item class; set one (generic password, internet password, …).")
        }
        var attributes = try validate(query.attributes, for: itemClass)
        var synchronizable: Bool? = false
        if let sync = attributes.removeValue(forKey: .synchronizable) {
            guard !query.synchronizableAny else {
                throw .param("sync", "The query asks for synchronizable = \(sync) and for any; keep one.")
            }
            synchronizable = sync.integer == 1
        } else if query.synchronizableAny {
            synchronizable = nil
        }
        var groups = configuration.accessGroups
        if let group = attributes.removeValue(forKey: .accessGroup) {
            groups = [group.text ?? ""]
        }
        var filter = RecordFilter(itemClass: itemClass)
        var keyDecides = false
        if !query.caseInsensitive {
            filter.equalities = attributes
            if itemClass.uniquenessKey.allSatisfy({ $0 == .accessGroup || $0 == .synchronizable || attributes[$0] != nil }) {
                var keys: [UniqueKey] = []
                keys.reserveCapacity(groups.count * (synchronizable == nil ? 2 : 1))
                for group in groups {
                    for sync in [false, true] where synchronizable == nil || synchronizable == sync {
                        keys.append(UniqueKey(itemClass: itemClass) { name in
                            name == .accessGroup ? .string(group) : name == .synchronizable ? .bool(sync) : attributes[name]
                        })
                    }
                }
                filter.uniqueKeys = keys
                let key = itemClass.uniquenessKey
                keyDecides = attributes.keys.allSatisfy { key.contains($0) }
            }
        }
        return PreparedQuery(itemClass: itemClass, attributes: attributes,
                             synchronizable: synchronizable,
                             groups: groups == configuration.accessGroups ? accessGroupSet : Set(groups),
                             caseInsensitive: query.caseInsensitive, keyDecides: keyDecides, filter: filter)
    }

    private func matching(_ query: PreparedQuery, in txn: inout Backend.Transaction, max: Int?)
        throws(SecureStoreError) -> [ItemRecord]
    {
        let candidates = try txn.find(query.filter)
        // Usually every candidate matches (an index probe): then the backend's array is the answer, with no
        // second array. The first one that does not (or the limit) switches to copying the matches.
        var index = 0
        while index < candidates.count, Self.matches(candidates[index], query) {
            index += 1
            if let max, index >= max { break }
        }
        if index == candidates.count { return candidates }
        if let max, index >= max { return Array(candidates[..<index]) }
        var found: [ItemRecord] = Array(candidates[..<index])
        for record in candidates[(index + 1)...] where Self.matches(record, query) {
            found.append(record)
            if let max, found.count >= max { break }
        }
        return found
    }

    static func matches(_ record: ItemRecord, _ query: PreparedQuery) -> Bool {
        if query.keyDecides, let keys = query.filter.uniqueKeys, keys.contains(record.uniqueKey) { return true }
        if let ref = query.filter.persistentRef, record.persistentRef != ref { return false }
        if let c = query.itemClass, record.itemClass != c { return false }
        guard let group = record.attributes[.accessGroup]?.text, query.groups.contains(group) else { return false }
        if let sync = query.synchronizable, (record.attributes[.synchronizable]?.integer == 1) != sync { return false }
        for (name, wanted) in query.attributes {
            guard let have = record.attributes[name] ?? name.defaultValue,
                  Self.equal(have, wanted, kind: name.kind, caseInsensitive: query.caseInsensitive)
            else { return false }
        }
        return true
    }

    static func equal(_ a: AttributeValue, _ b: AttributeValue, kind: AttributeKind, caseInsensitive: Bool) -> Bool {
        switch kind {
        case .text:
            if caseInsensitive, let x = a.text, let y = b.text { return x.lowercased() == y.lowercased() }
            return sameBytes(a, b)
        case .data:
            return sameBytes(a, b)
        case .number, .bool:
            return a.integer == b.integer
        case .date:
            if case .date(let x) = a, case .date(let y) = b { return x == y }
            return false
        case .numberOrText, .textOrNumber:
            // A number equals a number; text equals text (as for `.text`); a number never equals text.
            switch (a, b) {
            case (.number(let x), .number(let y)): return x == y
            case (.number, _), (_, .number): return false
            default: return equal(a, b, kind: .text, caseInsensitive: caseInsensitive)
            }
        }
    }

    /// `a.bytes == b.bytes` without building arrays.
    static func sameBytes(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        switch (a, b) {
        case (.string(var x), .string(var y)):
            // Native strings are contiguous UTF-8: compare the buffers (withUTF8 copies only bridged ones).
            return x.withUTF8 { a in y.withUTF8 { b in sameMemory(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) } }
        case (.data(let x), .data(let y)): return x == y
        case (.string(let x), .data(let y)), (.data(let y), .string(let x)): return x.utf8.elementsEqual(y)
        default: return a.bytes == b.bytes
        }
    }

    // MARK: Results

    private func shape(_ records: [ItemRecord], returning: ReturnOptions, limit: MatchLimit) -> QueryResult {
        let single: Bool = switch limit {
        case .one, .count(1): true
        default: false
        }
        let wanted = returning.subtracting(.ref)
        guard !wanted.isEmpty else {
            return returning.contains(.ref) && !single ? .items([]) : .none
        }
        func item(_ record: ItemRecord) -> ResultItem {
            ResultItem(itemClass: record.itemClass,
                       attributes: wanted.contains(.attributes) ? record.attributes : nil,
                       data: wanted.contains(.data) ? record.data : nil,
                       persistentRef: wanted.contains(.persistentRef) ? record.persistentRef : nil)
        }
        if single, let first = records.first { return .item(item(first)) }
        return .items(records.map(item))
    }
}

enum KeychainOperation { case copy, update, delete }

/// A query checked and normalized once. Outside `Keychain` so it is not a generic type (no metadata
/// instantiation per query).
struct PreparedQuery {
    var itemClass: ItemClass?
    /// Every one must hold, so their order does not matter (kept as given: no sorted copy per query).
    var attributes: [AttributeName: AttributeValue]
    var synchronizable: Bool?   // nil: any
    var groups: Set<String>
    var caseInsensitive: Bool
    /// `filter.uniqueKeys` are the query: class, group, sync and every attribute it names are part of the
    /// key, compared by bytes. A record whose key is one of them matches (others are checked one by one).
    var keyDecides: Bool
    var filter: RecordFilter
}
