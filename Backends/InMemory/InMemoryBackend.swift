public import SecureStoreCore
import Synchronization

/// A store that lives in this process's memory: for tests and ephemeral processes.
public typealias InMemoryStore = Keychain<InMemoryBackend>

extension Keychain where Backend == InMemoryBackend {
    /// An empty in-memory store.
    public convenience init(configuration: StoreConfiguration = StoreConfiguration()) throws(SecureStoreError) {
        try self.init(backend: InMemoryBackend(), configuration: configuration)
    }
}

/// Records in insertion order behind a lock (`Locked`), with dictionaries by persistent reference, by
/// uniqueness key (a query that names an item's full key is one hash lookup) and by service (the attribute
/// list queries name). Other queries scan the records in order; the core filters every answer.
/// A failed writing transaction is undone from a log of its steps.
public final class InMemoryBackend: StorageBackend {
    private let state = Locked(State())
    /// References: this object's random prefix, then a serial number (``newPersistentRef()``).
    private let referencePrefix: UInt64
    private let lastSerial = Atomic<UInt64>(0)

    public init() {
        var generator = SystemRandomNumberGenerator()
        referencePrefix = generator.next()
    }

    /// Numbered, not drawn: the records live in this object alone, so a reference needs to be unique only
    /// among this object's (its random prefix keeps another store's references from naming its items). A
    /// random reference was one `getentropy` system call per add, 0.36 µs of a 1.9 µs add.
    public func newPersistentRef() -> PersistentRef {
        PersistentRef(prefix: referencePrefix, serial: lastSerial.add(1, ordering: .relaxed).newValue)
    }

    public var backendDescription: String { "memory" }

    /// Calls only take this process's lock for in-memory work.
    public var blocking: Blocking { .never }
    /// Atomic (undo log under one lock), private to this process, gone with it.
    public static let guarantees = StorageGuarantees(atomicWrites: true, acrossProcesses: .notShared,
                                                     acrossMachines: .notShared, durableOnReturn: false,
                                                     insertionOrder: .processCounter)

    public func withTransaction<T>(writing: Bool, _ body: (inout State) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        try state.withLock { (state: inout State) throws(SecureStoreError) -> T in
            do throws(SecureStoreError) {
                let result = try body(&state)
                state.commit()
                return result
            } catch {
                state.rollBack()
                throw error
            }
        }
    }

    /// One find under the lock: a read changes nothing, so there is no undo log to clear (and no generic
    /// transaction body to call through).
    public func findRecords(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        try state.withLock { (state: inout State) throws(SecureStoreError) -> [ItemRecord] in try state.find(filter) }
    }

    /// A reference or a single unique key is one probe (no array); anything else filters ``findRecords(_:)``.
    public func firstRecord(_ filter: RecordFilter, accepting accepts: (ItemRecord) -> Bool) throws(SecureStoreError)
        -> ItemRecord?
    {
        try state.withLock { (state: inout State) throws(SecureStoreError) -> ItemRecord? in
            if let ref = filter.persistentRef {
                guard let slot = state.slotOf[ref], let record = state.slots[slot], accepts(record) else { return nil }
                return record
            }
            if let keys = filter.uniqueKeys, keys.count == 1 {
                guard let slot = state.slotByKey[keys[0]], let record = state.slots[slot], accepts(record) else { return nil }
                return record
            }
            return try state.find(filter).first(where: accepts)
        }
    }

    /// The backend's tables.
    public struct State: StorageTransaction, Sendable {
        /// Every record in insertion order; `nil` where one was removed (compacted away after a commit once
        /// more than half are gone).
        var slots: [ItemRecord?] = []
        var slotOf: [PersistentRef: Int] = [:]
        var slotByKey: [UniqueKey: Int] = [:]
        /// The slots of each class-and-value of the indexed attribute (the default value when unset), in
        /// ascending order (an insert appends; no hashing per slot, and a find needs no sort).
        var slotsByValue: [ValueKey: [Int]] = [:]
        var removedCount = 0
        /// What this transaction did, newest last, to undo it in reverse.
        var undo: [Step] = []

        enum Step: Sendable {
            case inserted
            case replaced(slot: Int, old: ItemRecord)
            case removed(slot: Int, old: ItemRecord)
            case tables(Tables)
        }

        mutating func commit() {
            undo.removeAll(keepingCapacity: true)
            if removedCount > 64, removedCount * 2 > slots.count { compact() }
        }

        mutating func rollBack() {
            while let step = undo.popLast() {
                switch step {
                case .inserted:
                    if let record = slots.removeLast() { unfile(record, at: slots.count) }
                case .replaced(let slot, let old):
                    if let now = slots[slot] { unfile(now, at: slot) }
                    slots[slot] = old
                    file(old, at: slot)
                case .removed(let slot, let old):
                    slots[slot] = old
                    file(old, at: slot)
                    removedCount -= 1
                case .tables(let tables):
                    self.tables = tables
                }
            }
        }

        /// Every table, taken or put back at once.
        struct Tables: Sendable {
            var slots: [ItemRecord?], slotOf: [PersistentRef: Int], slotByKey: [UniqueKey: Int]
            var slotsByValue: [ValueKey: [Int]], removedCount: Int
        }

        var tables: Tables {
            get { Tables(slots: slots, slotOf: slotOf, slotByKey: slotByKey, slotsByValue: slotsByValue, removedCount: removedCount) }
            set { (slots, slotOf, slotByKey, slotsByValue, removedCount) = (newValue.slots, newValue.slotOf, newValue.slotByKey, newValue.slotsByValue, newValue.removedCount) }
        }

        /// Rebuilds every table from the records left.
        private mutating func compact() {
            let records = slots.compactMap { $0 }
            tables = Tables(slots: [], slotOf: [:], slotByKey: [:], slotsByValue: [:], removedCount: 0)
            slots.reserveCapacity(records.count)
            for record in records {
                slots.append(record)
                file(record, at: slots.count - 1)
            }
        }

        // MARK: The indexes

        /// An indexed attribute's value: class, attribute and a 64-bit hash of the value's bytes (a string and
        /// data with the same bytes are equal to the core, so they share a key). Values whose hashes collide
        /// share an entry, which only makes a candidate list longer: the core re-checks every record found.
        /// Nothing is allocated to make one (a key is made on every add, delete and service query).
        struct ValueKey: Hashable, Sendable {
            let itemClass: ItemClass
            let name: AttributeName
            let digest: Int

            init?(_ itemClass: ItemClass, _ name: AttributeName, _ value: AttributeValue?) {
                var hasher = Hasher()
                switch value ?? name.defaultValue {
                case .string(var s)?: s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
                case .data(let d)?: d.withUnsafeBytes { hasher.combine(bytes: $0) }
                default: return nil   // not text: never indexed, so a query on it scans
                }
                self.itemClass = itemClass
                self.name = name
                digest = hasher.finalize()
            }
        }

        /// The service: the attribute list queries name (an account names one item, which the key finds).
        static let indexed: [AttributeName] = [.service]

        private mutating func file(_ record: ItemRecord, at slot: Int) {
            slotOf[record.persistentRef] = slot
            slotByKey[record.uniqueKey] = slot
            for name in Self.indexed where record.itemClass.defines(name) {
                if let key = ValueKey(record.itemClass, name, record[name]) {
                    slotsByValue[key, default: []].insertSorted(slot)
                }
            }
        }

        private mutating func unfile(_ record: ItemRecord, at slot: Int) {
            if slotOf[record.persistentRef] == slot { slotOf[record.persistentRef] = nil }
            if slotByKey[record.uniqueKey] == slot { slotByKey[record.uniqueKey] = nil }
            for name in Self.indexed where record.itemClass.defines(name) {
                if let key = ValueKey(record.itemClass, name, record[name]),
                   slotsByValue[key]?.removeSorted(slot) == true, slotsByValue[key]?.isEmpty == true {
                    slotsByValue[key] = nil
                }
            }
        }

        public mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
            if let ref = filter.persistentRef {
                guard let slot = slotOf[ref], let record = slots[slot] else { return [] }
                return [record]
            }
            if let keys = filter.uniqueKeys {
                if keys.count == 1 {   // the usual full-key query: one probe, one array
                    guard let slot = slotByKey[keys[0]], let record = slots[slot] else { return [] }
                    return [record]
                }
                var found = keys.compactMap { slotByKey[$0] }
                if found.count > 1 { found.sort() }   // distinct keys are distinct slots
                return found.compactMap { slots[$0] }
            }
            if let itemClass = filter.itemClass {
                // The smallest index entry among the indexed values the query names (none: nothing matches).
                var smallest: [Int]?
                for name in Self.indexed {
                    guard let value = filter.equalities[name], let key = ValueKey(itemClass, name, value) else { continue }
                    let entry = slotsByValue[key] ?? []
                    if smallest.map({ entry.count < $0.count }) ?? true { smallest = entry }
                }
                if let smallest { return smallest.compactMap { slots[$0] } }
            }
            return slots.compactMap { record in
                guard let record, filter.itemClass == nil || record.itemClass == filter.itemClass else { return nil }
                return record
            }
        }

        public mutating func insert(_ record: ItemRecord) throws(SecureStoreError) {
            slots.append(record)
            file(record, at: slots.count - 1)
            undo.append(.inserted)
        }

        public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
            guard let slot = slotOf[record.persistentRef], let old = slots[slot] else {
                throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
            }
            unfile(old, at: slot)
            slots[slot] = record
            file(record, at: slot)
            undo.append(.replaced(slot: slot, old: old))
        }

        public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
            for ref in refs {
                guard let slot = slotOf[ref], let old = slots[slot] else { continue }
                unfile(old, at: slot)
                slots[slot] = nil
                removedCount += 1
                undo.append(.removed(slot: slot, old: old))
            }
        }

        public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
            // The old tables are the undo step (no copy: they are handed over), the new ones are built without
            // the removed records, so a clear costs one pass instead of one dictionary removal per record.
            let before = slotOf.count
            undo.append(.tables(tables))
            if slots.allSatisfy({ $0.map { classes.contains($0.itemClass) } ?? true }) {
                tables = Tables(slots: [], slotOf: [:], slotByKey: [:], slotsByValue: [:], removedCount: 0)
            } else {
                slots = slots.map { $0.flatMap { classes.contains($0.itemClass) ? nil : $0 } }
                compact()
            }
            return before - slotOf.count
        }
    }
}

private extension Array where Element == Int {
    /// Inserts `slot` into this ascending array (appended when it is the largest: every insert's slot is).
    mutating func insertSorted(_ slot: Int) {
        guard let last, last >= slot else { return append(slot) }
        let at = lowerBound(slot)
        if at < count, self[at] == slot { return }
        insert(slot, at: at)
    }

    /// Removes `slot` from this ascending array; whether it was there.
    mutating func removeSorted(_ slot: Int) -> Bool {
        let at = lowerBound(slot)
        guard at < count, self[at] == slot else { return false }
        remove(at: at)
        return true
    }

    /// The first index whose element is not below `slot`.
    private func lowerBound(_ slot: Int) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid] < slot { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
