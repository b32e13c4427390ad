public import Foundation

/// The canonical bytes of an item's uniqueness key: class plus every key attribute (defaults filled in),
/// text and data by bytes (a 4-byte length, then the bytes), numbers as 8 bytes. A number in an attribute
/// that holds numbers or text (protocol, authentication type) is marked by the length `FFFFFFFF`, which no
/// text can have, so it never collides with text. Two items collide exactly when their keys are equal.
///
/// Backends index on it (the in-memory backend in a dictionary, SQLite as a keyed blind index); only the
/// core builds it.
public struct UniqueKey: Hashable, @unchecked Sendable {
    /// The bytes, in one block of their own, never written once built: sharing a key between threads is
    /// safe (hence `@unchecked`: `ManagedBuffer`, its storage's class, is not `Sendable` itself).
    private let storage: KeyStorage

    /// The key's bytes as an array (a copy; ``withUnsafeBytes(_:)`` lends them without one).
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The number of bytes.
    public var count: Int { storage.header }

    /// Lends the key's bytes.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeMutablePointers { count, bytes in
            try body(UnsafeRawBufferPointer(start: bytes, count: count.pointee))
        }
    }

    /// A key's bytes in one allocation with their count (a `ManagedBuffer`: creating one is a single
    /// allocation, where a `[UInt8]` costs the standard library's generic buffer path, ~900 instructions).
    private final class KeyStorage: ManagedBuffer<Int, UInt8> {
        /// Never written after it returns.
        static func make(copying source: UnsafeRawPointer?, count: Int) -> KeyStorage {
            let made = unsafeDowncast(KeyStorage.create(minimumCapacity: count) { _ in count }, to: KeyStorage.self)
            if count > 0, let source {
                made.withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0).copyMemory(from: source, byteCount: count) }
            }
            return made
        }
    }

    init(itemClass: ItemClass, values: (AttributeName) -> AttributeValue?) {
        // One allocation: the bytes are written straight from the values (no per-value arrays) into a stack
        // buffer, then copied once into the key's storage; a key longer than the buffer continues in an array.
        // (`Array.append(contentsOf:)` costs ~100 instructions a call, and a key is built for every add, every
        // full-key query and every record a store decodes.)
        storage = withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { stack in
            var out = Sink(stack: stack)
            out.append(text: itemClass.rawValue)
            for name in itemClass.uniquenessKey {
                let value = values(name) ?? name.defaultValue
                switch value {
                case .string(let s)?:
                    out.append(marker: 0x1F, length: UInt32(truncatingIfNeeded: s.utf8.count))
                    out.append(text: s)
                case .data(let d)?:
                    out.append(marker: 0x1F, length: UInt32(truncatingIfNeeded: d.count))
                    d.withUnsafeBytes { out.append($0) }
                case .number(let i)?:
                    if name.kind == .numberOrText || name.kind == .textOrNumber {
                        out.append(marker: 0x1F, length: 0xFFFF_FFFF)
                    } else {
                        out.append(byte: 0x1F)
                    }
                    out.append(integer: i)
                case .bool(let b)?:
                    out.append(byte: 0x1F)
                    out.append(integer: b ? 1 : 0)
                case .date?, nil:
                    out.append(byte: 0x1F)
                }
            }
            return out.storage
        }
    }

    /// Where a key's bytes are written: a caller's buffer, then an array once the buffer is full. The short
    /// pieces (marker, length, integer) are stored in place, not copied through `memcpy`.
    private struct Sink {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        var count = 0
        var spilled: [UInt8]?

        init(stack: UnsafeMutableRawBufferPointer) {
            base = stack.baseAddress!   // a temporary allocation of 256 bytes always has one
            capacity = stack.count
        }

        /// Room for `n` more bytes in the buffer (never once the key spilled into an array).
        @inline(__always) private func fits(_ n: Int) -> Bool { spilled == nil && n <= capacity - count }

        @inline(__always) mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            if fits(bytes.count) {
                (base + count).copyMemory(from: source, byteCount: bytes.count)
                count += bytes.count
            } else {
                spill(bytes)
            }
        }

        private mutating func spill(_ bytes: UnsafeRawBufferPointer) {
            if spilled == nil {
                var array: [UInt8] = []
                array.reserveCapacity(2 * capacity + bytes.count)
                array.append(contentsOf: UnsafeRawBufferPointer(start: base, count: count))
                spilled = array
            }
            spilled!.append(contentsOf: bytes)
        }

        @inline(__always) mutating func append(byte: UInt8) {
            if fits(1) {
                base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
                count += 1
            } else {
                Swift.withUnsafeBytes(of: byte) { spill($0) }
            }
        }

        /// The marker byte, then four bytes of length, big-endian.
        @inline(__always) mutating func append(marker: UInt8, length: UInt32) {
            if fits(5) {
                base.storeBytes(of: marker, toByteOffset: count, as: UInt8.self)
                base.storeBytes(of: length.bigEndian, toByteOffset: count + 1, as: UInt32.self)
                count += 5
            } else {
                append(byte: marker)
                Swift.withUnsafeBytes(of: length.bigEndian) { append($0) }
            }
        }

        @inline(__always) mutating func append(text: String) {
            var text = text
            text.withUTF8 { append(UnsafeRawBufferPointer($0)) }   // copies only a bridged string
        }

        /// Eight bytes, big-endian.
        @inline(__always) mutating func append(integer i: Int64) {
            if fits(8) {
                base.storeBytes(of: UInt64(bitPattern: i).bigEndian, toByteOffset: count, as: UInt64.self)
                count += 8
            } else {
                Swift.withUnsafeBytes(of: UInt64(bitPattern: i).bigEndian) { append($0) }
            }
        }

        var storage: KeyStorage {
            if let spilled { return spilled.withUnsafeBytes { KeyStorage.make(copying: $0.baseAddress, count: $0.count) } }
            return KeyStorage.make(copying: base, count: count)
        }
    }

    public static func == (a: UniqueKey, b: UniqueKey) -> Bool {
        a.storage === b.storage || a.withUnsafeBytes { x in b.withUnsafeBytes { y in sameMemory(x, y) } }
    }
    /// The bytes in one block (the derived hash combines them one at a time).
    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// One stored item, as the core hands it to a backend and gets it back.
///
/// Its attributes always include accessible, accessGroup, synchronizable and both dates (the core fills them in).
///
/// **Layout.** The attributes sit in one array in ascending order of their codes (the order the sealed record
/// format writes and reads them), each once, and the positions of the ones every query and every backend reads
/// (accessibility, access group, synchronizable, both dates, service, server, account) are fixed slots: reading one
/// of those is a switch and an array index, any other a short scan, and no attribute dictionary is built on the
/// way from a backend's table to the caller (``attributes`` builds one on demand, for callers that want it).
///
/// The fields live in one shared, immutable box: a record is copied several times on its way from a backend's
/// table to the caller (found, filtered, shaped into an ``Item``), and a copy is then one reference count
/// instead of one per field (attributes, secret, key bytes, reference).
public struct ItemRecord: Sendable, Hashable {
    /// One attribute and its value.
    package struct Entry: Sendable, Hashable {
        package let name: AttributeName
        package let value: AttributeValue
        package init(_ name: AttributeName, _ value: AttributeValue) {
            self.name = name
            self.value = value
        }
    }

    private final class Fields: Sendable {
        let persistentRef: PersistentRef
        let itemClass: ItemClass
        /// Ascending by code, each code once.
        let entries: [Entry]
        let slots: FixedSlots
        let data: Data?
        let uniqueKey: UniqueKey
        /// The record was read without its attributes (``ItemRecord/attributesOmitted``).
        let attributesOmitted: Bool

        /// - Parameter uniqueKey: the key of these entries when the caller knows it (an update that changes
        ///   no key attribute), else computed from them.
        init(persistentRef: PersistentRef, itemClass: ItemClass, entries: [Entry], data: Data?,
             uniqueKey: UniqueKey? = nil, attributesOmitted: Bool = false) {
            self.persistentRef = persistentRef
            self.itemClass = itemClass
            self.entries = entries
            self.data = data
            let slots = FixedSlots(entries)
            self.slots = slots
            self.uniqueKey = uniqueKey ?? UniqueKey(itemClass: itemClass) { name in
                slots.position(of: name, in: entries).map { entries[$0].value }
            }
            self.attributesOmitted = attributesOmitted
        }

        /// No attributes but the modification date, when given, and the unique key the record was found by.
        init(persistentRef: PersistentRef, itemClass: ItemClass, uniqueKey: UniqueKey, data: Data?, modified: Date?) {
            self.persistentRef = persistentRef
            self.itemClass = itemClass
            entries = modified.map { [Entry(.modificationDate, .date($0))] } ?? []
            slots = FixedSlots(entries)
            self.data = data
            self.uniqueKey = uniqueKey
            attributesOmitted = true
        }
    }
    private let fields: Fields

    public var persistentRef: PersistentRef { fields.persistentRef }
    public var itemClass: ItemClass { fields.itemClass }
    /// The secret (`kSecValueData`): `nil` for an item added without one, which is not the same as an
    /// empty secret (`Data()`).
    public var data: Data? { fields.data }
    /// Computed once from class and attributes.
    public var uniqueKey: UniqueKey { fields.uniqueKey }

    /// The value of one attribute, or nil when the record has none.
    public subscript(name: AttributeName) -> AttributeValue? {
        fields.slots.position(of: name, in: fields.entries).map { fields.entries[$0].value }
    }

    /// Every attribute as a dictionary, built on each call (``subscript(_:)`` reads one attribute without it).
    public var attributes: [AttributeName: AttributeValue] {
        var dictionary = [AttributeName: AttributeValue](minimumCapacity: fields.entries.count)
        for entry in fields.entries { dictionary[entry.name] = entry.value }
        return dictionary
    }

    /// How many attributes the record has.
    public var attributeCount: Int { fields.entries.count }

    /// Calls `body` with each attribute, in ascending byte order of the attributes' codes.
    public func forEachAttribute(_ body: (AttributeName, AttributeValue) throws -> Void) rethrows {
        for entry in fields.entries { try body(entry.name, entry.value) }
    }

    /// The attributes in ascending order of their codes (what the record holds; no copy).
    package var entries: [Entry] { fields.entries }

    /// Whether the record was read without its attributes (a find whose ``RecordFilter/needsAttributes`` was
    /// false): it carries its key, reference, maybe its secret and maybe its modification date, and stands for
    /// the stored item only in those. An update of its secret alone (``updated(_:modified:data:)`` with no
    /// changes) keeps the flag, and the backend that found it writes only the secret and the date; nothing
    /// else may be written from such a record.
    package var attributesOmitted: Bool { fields.attributesOmitted }

    public init(persistentRef: PersistentRef, itemClass: ItemClass, attributes: [AttributeName: AttributeValue],
                data: Data?) {
        var entries: [Entry] = []
        entries.reserveCapacity(attributes.count)
        for (name, value) in attributes { entries.append(Entry(name, value)) }
        self.init(persistentRef: persistentRef, itemClass: itemClass, unsorted: entries, data: data)
    }

    /// A record of `entries` in any order, each attribute once (a dictionary's pairs, or built by hand).
    package init(persistentRef: PersistentRef, itemClass: ItemClass, unsorted entries: [Entry], data: Data?) {
        var entries = entries
        Self.sortByCode(&entries)
        self.init(persistentRef: persistentRef, itemClass: itemClass, ordered: entries, data: data)
    }

    /// A record of `entries` already in ascending order of their codes, each once (what a decoder reads
    /// from the sealed format, which it checks). Taken as they are.
    package init(persistentRef: PersistentRef, itemClass: ItemClass, ordered entries: [Entry], data: Data?) {
        fields = Fields(persistentRef: persistentRef, itemClass: itemClass, entries: entries, data: data)
    }

    /// A record without attributes that carries the unique key it was found by: a backend's answer to a find
    /// whose ``RecordFilter/needsAttributes`` is false, when the row's unique key is known (by an authenticated
    /// index) to be `key`, one of the filter's keys. Only the core's key-decided finds ask for such records,
    /// and they read nothing but ``uniqueKey``, ``data``, ``persistentRef`` and (an update of the secret alone,
    /// which asks for it with ``RecordFilter/needsModificationDate``) the modification date `modified` from
    /// them (``attributesOmitted``).
    package init(persistentRef: PersistentRef, itemClass: ItemClass, foundByKey key: UniqueKey, data: Data?,
                 modified: Date? = nil) {
        fields = Fields(persistentRef: persistentRef, itemClass: itemClass, uniqueKey: key, data: data,
                        modified: modified)
    }

    /// This record with `changes` applied (each attribute set or replaced), `modified` as its modification
    /// date and `data` as its secret: what an update stores. Reference and class stay; a record read without
    /// its attributes stays one (``attributesOmitted``).
    package func updated(_ changes: [AttributeName: AttributeValue], modified: Date, data: Data?) -> ItemRecord {
        var entries = fields.entries
        entries.reserveCapacity(entries.count + changes.count + 1)
        var appended = false
        for (name, value) in changes {
            appended = Self.set(name, value, in: &entries) || appended
        }
        appended = Self.set(.modificationDate, .date(modified), in: &entries) || appended   // the date last: it wins
        // Values replaced in place keep the order; only a new attribute needs sorting in.
        if appended { Self.sortByCode(&entries) }
        // The unique key follows from the class and the key's attributes: the same when no change names one.
        let key = itemClass.uniquenessKey
        let sameKey = !changes.keys.contains { key.contains($0) }
        return ItemRecord(fields: Fields(persistentRef: persistentRef, itemClass: itemClass, entries: entries, data: data,
                                         uniqueKey: sameKey ? uniqueKey : nil, attributesOmitted: attributesOmitted))
    }

    private init(fields: Fields) {
        self.fields = fields
    }

    /// Sets `name` to `value` in `entries`, in place when present; whether it was appended instead.
    private static func set(_ name: AttributeName, _ value: AttributeValue, in entries: inout [Entry]) -> Bool {
        if let at = entries.firstIndex(where: { $0.name == name }) {
            entries[at] = Entry(name, value)
            return false
        }
        entries.append(Entry(name, value))
        return true
    }

    /// Sorts entries into the record's order, ascending by code (the one place that says what it is).
    package static func sortByCode(_ entries: inout [Entry]) {
        entries.sort { $0.name.sortsBefore($1.name) }
    }

    public static func == (a: ItemRecord, b: ItemRecord) -> Bool {
        a.fields === b.fields || (a.persistentRef == b.persistentRef && a.itemClass == b.itemClass
            && a.fields.entries == b.fields.entries && a.data == b.data)
    }

    /// The same fields as equality compares (the key follows from class and attributes).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(persistentRef)
        hasher.combine(itemClass)
        hasher.combine(fields.entries)
        hasher.combine(data)
    }
}

/// Where a record's fixed-slot attributes sit in its entries: one byte each, the position plus one (0: absent).
private struct FixedSlots: Sendable {
    private var positions: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0)

    init(_ entries: [ItemRecord.Entry]) {
        for (at, entry) in entries.enumerated() where at < 255 {
            guard let slot = entry.name.fixedSlot else { continue }
            let byte = UInt8(at + 1)
            switch slot {
            case 0: positions.0 = byte
            case 1: positions.1 = byte
            case 2: positions.2 = byte
            case 3: positions.3 = byte
            case 4: positions.4 = byte
            case 5: positions.5 = byte
            case 6: positions.6 = byte
            default: positions.7 = byte
            }
        }
    }

    /// The position of `name` in `entries`: its slot for a fixed-slot attribute, else a scan.
    @inline(__always) func position(of name: AttributeName, in entries: [ItemRecord.Entry]) -> Int? {
        guard let slot = name.fixedSlot else {
            return entries.firstIndex { $0.name == name }
        }
        let byte: UInt8 = switch slot {
        case 0: positions.0
        case 1: positions.1
        case 2: positions.2
        case 3: positions.3
        case 4: positions.4
        case 5: positions.5
        case 6: positions.6
        default: positions.7
        }
        if byte != 0 { return Int(byte) - 1 }
        // A record of more than 255 attributes (none the core makes) keeps the late ones unslotted.
        return entries.count < 255 ? nil : entries.firstIndex { $0.name == name }
    }
}

/// What a backend is asked to find. A backend may return **more** records than the filter describes
/// (the core re-checks every record against the full query), never fewer, and always in insertion order.
public struct RecordFilter: Sendable, Hashable {
    /// Only records of these classes (`nil`: every class).
    public var itemClass: ItemClass?
    /// Only the record with this reference.
    public var persistentRef: PersistentRef?
    /// Only records whose uniqueness key is one of these (an index probe). `nil`: no constraint.
    public var uniqueKeys: [UniqueKey]?
    /// Exact (case-sensitive, normalized) attribute values the query requires; a backend may use any of them
    /// to narrow its search (e.g. a blind index on service) or ignore them all.
    public var equalities: [AttributeName: AttributeValue]
    /// The record whose uniqueness this search checks (an add, an update of one item), whose key is
    /// `uniqueKeys`: a backend may narrow by its key's attribute values. `nil` for every other search.
    public var uniquenessOf: ItemRecord?
    /// Whether the caller reads the records' secrets. `false` for a read whose results carry no data (a listing,
    /// attributes or references only) and for a delete's find (it removes by reference): a backend that keeps
    /// secrets apart (sealed on their own in SQL stores, fetched separately from the Secret Service) may then
    /// return records without them (``ItemRecord/data`` nil), and should: a secret nobody reads is not
    /// decrypted. An update that sets a new secret asks for none either (it replaces each secret it finds, and
    /// writes records back with the new one); any other update's finds get their records whole. A backend whose
    /// undo log needs the secrets of what a writing transaction replaces or removes loads them anyway.
    public var needsData = true
    /// Whether the caller reads the records' attributes. `false` only for a find that the key decides (every
    /// attribute it names is part of the unique key, and ``uniqueKeys`` are the query) and that reads no
    /// attributes: a lookup returning data, references or nothing, and a delete. The encrypted SQL stores of
    /// this package, which can prove a row's unique key without opening its attributes (each sealed part is
    /// bound to its key's index), then answer with records that carry only the filter's key they were found
    /// by, the reference and (when ``needsData``) the secret. Every other backend ignores it and returns whole
    /// records, which is always correct.
    public var needsAttributes = true
    /// Whether records read without their attributes (``needsAttributes`` false) carry their modification
    /// date: `true` only for an update that changes the secret alone of the items its key decides (the new
    /// date must be later than the stored one). Such an update hands those records back to
    /// ``StorageTransaction/replace(_:)`` with only the secret and the date changed, and a backend that
    /// answered with them writes only those two. Ignored, like ``needsAttributes``, by a backend that returns
    /// whole records.
    public var needsModificationDate = false

    public init(itemClass: ItemClass? = nil, persistentRef: PersistentRef? = nil, uniqueKeys: [UniqueKey]? = nil,
                equalities: [AttributeName: AttributeValue] = [:]) {
        self.itemClass = itemClass
        self.persistentRef = persistentRef
        self.uniqueKeys = uniqueKeys
        self.equalities = equalities
    }

    /// The uniqueness probe for `record`: its class and key, and the record itself (``uniquenessOf``).
    init(uniquenessOf record: ItemRecord) {
        itemClass = record.itemClass
        persistentRef = nil
        uniqueKeys = [record.uniqueKey]
        equalities = [:]
        uniquenessOf = record
    }
}

/// One atomic unit of work on a backend's storage. The core calls these inside
/// ``StorageBackend/withTransaction(writing:_:)`` only.
public protocol StorageTransaction {
    /// Records that may match `filter` (a superset is fine), in the order they were inserted.
    mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord]
    /// Stores a new record. The core has already checked uniqueness.
    mutating func insert(_ record: ItemRecord) throws(SecureStoreError)
    /// Replaces the record with the same persistent reference, keeping its place in insertion order.
    mutating func replace(_ record: ItemRecord) throws(SecureStoreError)
    /// Removes the records with these references.
    mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError)
    /// Removes every record of these classes; returns how many.
    mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int
}

/// The small storage interface a backend implements: store, find, replace and remove records, atomically.
///
/// Contract:
/// - `withTransaction` runs `body` isolated from every other transaction of this process on the same
///   storage. Isolation from other processes and machines, and whether all of a writing transaction's
///   changes happen or none do when the storage fails midway, are what ``guarantees`` declares; every
///   backend undoes a transaction whose `body` throws, and one without ``StorageGuarantees/atomicWrites``
///   does so best effort.
/// - `find` returns records in insertion order (from ``StorageGuarantees/insertionOrder``); `replace`
///   keeps a record's position.
/// - Data and attributes come back exactly as stored (a `String` stays a `String`, dates to the bit).
/// - A backend never interprets queries: matching, uniqueness, dates and result shapes are the core's.
public protocol StorageBackend: Sendable {
    associatedtype Transaction: StorageTransaction
    /// Runs `body` in one transaction. `writing` is false for reads. The one entry point a backend
    /// implements; callers use ``read(_:)`` and ``write(_:)``.
    func withTransaction<T>(writing: Bool, _ body: (inout Transaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    /// A short description for messages and the CLI (`"sqlite /path/to/store.db"`); no secrets.
    var backendDescription: String { get }
    /// What this kind of backend promises; checked by the conformance suite, shown by `securestore backends`.
    static var guarantees: StorageGuarantees { get }

    /// Whether a transaction may wait for something outside the process, and for how long at most.
    var blocking: Blocking { get }

    /// How many of this backend's transactions can usefully run at once, each on a thread of its own: the
    /// size of the store's pool for the async API (``StoreThreadPool``), so the async API runs as many
    /// calls at once as threads on the synchronous API would, and never starts more threads than the
    /// backend can use. PostgreSQL: its connection pool's size; SQLite: its reader connections plus its one
    /// writer; the Secret Service: 1 (one D-Bus connection, one transaction at a time). Ignored for a backend that
    /// never blocks (``Blocking/never``): its calls run on the caller's own thread.
    ///
    /// The default is 1: a backend that does not say runs one call at a time (first in, first out).
    var concurrency: Int { get }

    /// The records `filter` may match, as ``StorageTransaction/find(_:)`` returns them, read in one reading
    /// transaction by themselves (what copy queries do). The default is `read { try $0.find(filter) }`; a
    /// backend whose find is already a consistent snapshot without a transaction around it (one SQLite
    /// statement in autocommit mode) may skip the transaction's own work.
    func findRecords(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord]

    /// The first record ``findRecords(_:)`` returns that `accepts` (the core's full comparison with the
    /// query), or nil: what a lookup of one item needs. The default is `findRecords(filter).first(where:)`;
    /// a backend that answers a reference or a single unique key with one probe may do so without building an
    /// array (the answer must be the same record). `accepts` is pure and may run under the backend's lock.
    func firstRecord(_ filter: RecordFilter, accepting accepts: (ItemRecord) -> Bool) throws(SecureStoreError) -> ItemRecord?

    /// The persistent reference of a record the core is about to add: unique among every reference this
    /// storage holds or will hold, whoever adds to it. The default is ``PersistentRef/random()`` (16 bytes
    /// from the system's random source, drawn at the call), which stays unique across the processes and
    /// machines that share a file or a database. A backend whose records live in this object alone
    /// (``StorageGuarantees/acrossProcesses`` `.notShared`) may number them instead.
    func newPersistentRef() -> PersistentRef
}

extension StorageBackend {
    /// A backend that does not say may block without a known bound.
    public var blocking: Blocking { .unknown }

    /// A backend that does not say runs one transaction at a time.
    public var concurrency: Int { 1 }

    /// A backend that does not say draws each reference from the system's random source.
    public func newPersistentRef() -> PersistentRef { .random() }
}

extension StorageBackend {
    public func findRecords(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        try read { (txn: inout Transaction) throws(SecureStoreError) in try txn.find(filter) }
    }

    public func firstRecord(_ filter: RecordFilter, accepting accepts: (ItemRecord) -> Bool) throws(SecureStoreError)
        -> ItemRecord?
    {
        try findRecords(filter).first(where: accepts)
    }

    /// Runs `body` in a reading transaction.
    public func read<T>(_ body: (inout Transaction) throws(SecureStoreError) -> T) throws(SecureStoreError) -> T {
        try withTransaction(writing: false, body)
    }

    /// Runs `body` in a writing transaction: all of its changes happen or none do where ``guarantees`` says
    /// ``StorageGuarantees/atomicWrites``; elsewhere a failure midway is undone best effort.
    public func write<T>(_ body: (inout Transaction) throws(SecureStoreError) -> T) throws(SecureStoreError) -> T {
        try withTransaction(writing: true, body)
    }
}

/// Whether two buffers hold the same bytes, compared eight at a time (a generic byte loop costs ~10
/// instructions a byte; keys and attribute values are compared on every lookup).
func sameMemory(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Bool {
    guard x.count == y.count else { return false }
    let count = x.count
    var i = 0
    while i + 8 <= count {
        if x.loadUnaligned(fromByteOffset: i, as: UInt64.self) != y.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
            return false
        }
        i += 8
    }
    while i < count {
        if x[i] != y[i] { return false }
        i += 1
    }
    return true
}
