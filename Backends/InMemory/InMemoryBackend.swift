public import SecureStore

/// A store that lives in this process's memory: for tests and ephemeral processes.
public typealias InMemoryStore = Keychain<InMemoryBackend>

extension Keychain where Backend == InMemoryBackend {
    /// An empty in-memory store.
    public convenience init(configuration: StoreConfiguration = StoreConfiguration()) throws(SecureStoreError) {
        try self.init(backend: InMemoryBackend(), configuration: configuration)
    }
}

/// Records in a dictionary behind a lock (`Locked`), with a uniqueness-key index so a query that names an item's
/// full key is one hash lookup.
public final class InMemoryBackend: StorageBackend {
    private let state = Locked(State())

    public init() {}

    public var backendDescription: String { "memory" }

    /// Atomic (undo log under one lock), private to this process, gone with it.
    public static let guarantees = StorageGuarantees(atomicWrites: true, acrossProcesses: .notShared,
                                                     acrossMachines: .notShared, durableOnReturn: false,
                                                     insertionOrder: .processCounter)

    public func withTransaction<T>(writing: Bool, _ body: (inout State) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        // `Locked.withLock` hands the body's result straight back (no `sending` box, no `Result`: neither
        // needs generic metadata per call).
        try state.withLock { (state: inout State) throws(SecureStoreError) -> T in
            state.undo = [:]
            defer { state.undo = nil }
            do throws(SecureStoreError) {
                return try body(&state)
            } catch {
                state.rollBack()
                throw error
            }
        }
    }

    /// The backend's tables, with an undo log so that a failed transaction leaves no trace.
    public struct State: StorageTransaction, Sendable {
        struct Entry: Sendable {
            var order: UInt64
            var record: ItemRecord
        }
        /// The refs filed under one index value: usually one (an account), sometimes many (a service).
        enum Bucket: Sendable {
            case empty
            case one(PersistentRef)
            case many(Set<PersistentRef>)
        }
        var entries: [PersistentRef: Entry] = [:]
        var byKey: [UniqueKey: PersistentRef] = [:]
        /// Service and account equality index: a hash of (attribute, class, value bytes) to the records with
        /// that value (the attribute's default when unset, as the core matches). A hash collision only adds
        /// records; the core re-checks every one, so a superset is fine.
        var byValue: [Int: Bucket] = [:]
        var nextOrder: UInt64 = 0
        /// The entries as they were before this transaction touched them (`nil` inner: did not exist).
        var undo: [PersistentRef: Entry?]? = nil

        private mutating func remember(_ ref: PersistentRef) {
            if undo != nil, undo?[ref] == nil { undo?[ref] = .some(entries[ref]) }
        }

        mutating func rollBack() {
            guard let undo else { return }
            for (ref, before) in undo {
                if let now = entries.removeValue(forKey: ref) {
                    if byKey[now.record.uniqueKey] == ref { byKey[now.record.uniqueKey] = nil }
                    unindexValues(now.record)
                }
                if let before {
                    entries[ref] = before
                    byKey[before.record.uniqueKey] = ref
                    indexValues(before.record)
                }
            }
        }

        public mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
            if let ref = filter.persistentRef {
                return entries[ref].map { [$0.record] } ?? []
            }
            var hits: [Entry] = []
            if let keys = filter.uniqueKeys, keys.count == 1 {   // a full-key lookup: one probe, one array
                guard let ref = byKey[keys[0]], let entry = entries[ref] else { return [] }
                return [entry.record]
            }
            if let keys = filter.uniqueKeys {
                for key in keys {
                    if let ref = byKey[key], let entry = entries[ref] { hits.append(entry) }
                }
            } else if let itemClass = filter.itemClass, let bucket = smallestBucket(itemClass, filter.equalities) {
                switch bucket {
                case nil, .empty?:
                    return []
                case .one(let ref)?:
                    guard let entry = entries[ref] else { return [] }
                    return [entry.record]
                case .many(let refs)?:
                    hits.reserveCapacity(refs.count)
                    for ref in refs {
                        if let entry = entries[ref] { hits.append(entry) }
                    }
                }
            } else {
                for entry in entries.values where filter.itemClass == nil || entry.record.itemClass == filter.itemClass {
                    hits.append(entry)
                }
            }
            if hits.count > 1 { hits.sort { $0.order < $1.order } }
            return hits.map(\.record)
        }

        public mutating func insert(_ record: ItemRecord) throws(SecureStoreError) {
            remember(record.persistentRef)
            if let old = entries[record.persistentRef] { unindexValues(old.record) }
            entries[record.persistentRef] = Entry(order: nextOrder, record: record)
            byKey[record.uniqueKey] = record.persistentRef
            indexValues(record)
            nextOrder += 1
        }

        public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
            guard let old = entries[record.persistentRef] else {
                throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
            }
            remember(record.persistentRef)
            if old.record.uniqueKey != record.uniqueKey, byKey[old.record.uniqueKey] == record.persistentRef {
                byKey[old.record.uniqueKey] = nil
            }
            byKey[record.uniqueKey] = record.persistentRef
            unindexValues(old.record)
            indexValues(record)
            entries[record.persistentRef] = Entry(order: old.order, record: record)
        }

        public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
            for ref in refs {
                remember(ref)
                guard let old = entries.removeValue(forKey: ref) else { continue }
                if byKey[old.record.uniqueKey] == ref { byKey[old.record.uniqueKey] = nil }
                unindexValues(old.record)
            }
        }

        public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
            let doomed = entries.values.filter { classes.contains($0.record.itemClass) }.map(\.record.persistentRef)
            try remove(doomed)
            return doomed.count
        }

        // MARK: The equality index

        /// The attributes with an equality index (text; the ones list queries name), with a tag for the slot.
        static let indexed: [(name: AttributeName, tag: UInt8)] = [(.service, 1), (.account, 2)]

        /// The index slot of `value` (by bytes: a string and data with the same bytes are equal to the core):
        /// FNV-1a over attribute, class and bytes. The dictionary hashes the slot again with its seeded hash;
        /// a collision only puts more records in a bucket (the core filters them out).
        static func slot(_ name: AttributeName, tag: UInt8, _ itemClass: ItemClass, _ value: AttributeValue?) -> Int? {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            func mix(_ byte: UInt8) { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
            mix(tag)
            mix(itemClass.indexTag)
            switch value ?? name.defaultValue {
            case .string(var s)?:
                s.withUTF8 { for byte in $0 { mix(byte) } }
            case .data(let d)?:
                d.withUnsafeBytes { for byte in $0 { mix(byte) } }
            default:
                return nil   // not text: not indexed
            }
            return Int(truncatingIfNeeded: h)
        }

        /// The smallest bucket among the filter's indexed equalities: `nil` when none is indexed, `.some(nil)`
        /// when one names a value no record has.
        func smallestBucket(_ itemClass: ItemClass, _ equalities: [AttributeName: AttributeValue]) -> Bucket?? {
            guard !equalities.isEmpty else { return nil }
            var best: Bucket?? = nil
            for (name, tag) in Self.indexed {
                guard let value = equalities[name], let slot = Self.slot(name, tag: tag, itemClass, value) else { continue }
                guard let bucket = byValue[slot] else { return .some(nil) }
                switch bucket {
                case .empty: return .some(nil)
                case .one: return .some(bucket)
                case .many(let refs):
                    if case .many(let other)?? = best, other.count <= refs.count { continue }
                    best = .some(bucket)
                }
            }
            return best
        }

        mutating func indexValues(_ record: ItemRecord) {
            for (name, tag) in Self.indexed {
                guard let slot = Self.slot(name, tag: tag, record.itemClass, record.attributes[name]) else { continue }
                byValue[slot, default: .empty].insert(record.persistentRef)   // one probe, in place
            }
        }

        mutating func unindexValues(_ record: ItemRecord) {
            for (name, tag) in Self.indexed {
                guard let slot = Self.slot(name, tag: tag, record.itemClass, record.attributes[name]) else { continue }
                if byValue[slot]?.remove(record.persistentRef) == true { byValue[slot] = nil }
            }
        }
    }
}

extension ItemClass {
    /// A small integer per class (hashing the raw string would cost more than the rest of the slot).
    fileprivate var indexTag: UInt8 {
        switch self {
        case .genericPassword: 1
        case .internetPassword: 2
        case .certificate: 3
        case .key: 4
        case .identity: 5
        }
    }
}

extension InMemoryBackend.State.Bucket {
    /// Adds `ref` in place (the set is taken out of `self` first, so it is uniquely owned and not copied).
    mutating func insert(_ ref: PersistentRef) {
        switch self {
        case .empty:
            self = .one(ref)
        case .one(let other):
            if other != ref { self = .many([other, ref]) }
        case .many(var refs):
            self = .one(ref)
            refs.insert(ref)
            self = .many(refs)
        }
    }

    /// Removes `ref` in place; returns whether the bucket is now empty.
    mutating func remove(_ ref: PersistentRef) -> Bool {
        switch self {
        case .empty:
            return true
        case .one(let other):
            return other == ref
        case .many(var refs):
            self = .one(ref)
            refs.remove(ref)
            if refs.count == 1, let last = refs.first {
                self = .one(last)
            } else {
                self = .many(refs)
            }
            return refs.isEmpty
        }
    }
}
