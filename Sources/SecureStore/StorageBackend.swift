public import Foundation

/// The canonical bytes of an item's uniqueness key: class plus every key attribute (defaults filled in),
/// text and data by bytes (a 4-byte length, then the bytes), numbers as 8 bytes. A number in an attribute
/// that holds numbers or text (protocol, authentication type) is marked by the length `FFFFFFFF`, which no
/// text can have, so it never collides with text. Two items collide exactly when their keys are equal.
///
/// Backends index on it (the in-memory backend in a dictionary, SQLite as a keyed blind index); only the
/// core builds it.
public struct UniqueKey: Hashable, Sendable {
    public let bytes: [UInt8]

    init(itemClass: ItemClass, values: (AttributeName) -> AttributeValue?) {
        // One allocation: the bytes are written straight from the values (no per-value arrays) into a stack
        // buffer a block at a time, then copied once into the array; a key longer than the buffer continues
        // in an array. (`Array.append(contentsOf:)` costs ~100 instructions a call, and a key is built for
        // every add and every full-key query.)
        bytes = withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { stack in
            var out = Sink(stack: stack)
            out.append(text: itemClass.rawValue)
            for name in itemClass.uniquenessKey {
                let value = values(name) ?? name.defaultValue
                out.append(byte: 0x1F)
                switch value {
                case .string(let s)?:
                    out.append(length: s.utf8.count)
                    out.append(text: s)
                case .data(let d)?:
                    out.append(length: d.count)
                    d.withUnsafeBytes { out.append($0) }
                case .number(let i)?:
                    if name.kind == .numberOrText || name.kind == .textOrNumber {
                        out.append(length: 0xFFFF_FFFF)
                    }
                    out.append(integer: i)
                case .bool(let b)?:
                    out.append(integer: b ? 1 : 0)
                case .date?, nil:
                    break
                }
            }
            return out.bytes
        }
    }

    /// Where a key's bytes are written: a caller's buffer, then an array once the buffer is full.
    private struct Sink {
        let stack: UnsafeMutableRawBufferPointer
        var count = 0
        var spilled: [UInt8]?

        init(stack: UnsafeMutableRawBufferPointer) { self.stack = stack }

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            if spilled == nil, bytes.count <= stack.count - count, let base = stack.baseAddress {
                (base + count).copyMemory(from: source, byteCount: bytes.count)
                count += bytes.count
                return
            }
            if spilled == nil {
                var array: [UInt8] = []
                array.reserveCapacity(2 * stack.count + bytes.count)
                array.append(contentsOf: UnsafeRawBufferPointer(rebasing: stack[..<count]))
                spilled = array
            }
            spilled!.append(contentsOf: bytes)
        }

        mutating func append(byte: UInt8) {
            withUnsafeBytes(of: byte) { append($0) }
        }

        mutating func append(text: String) {
            var text = text
            text.withUTF8 { append(UnsafeRawBufferPointer($0)) }   // copies only a bridged string
        }

        /// Four bytes, big-endian.
        mutating func append(length count: Int) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).bigEndian) { append($0) }
        }

        /// Eight bytes, big-endian.
        mutating func append(integer i: Int64) {
            withUnsafeBytes(of: UInt64(bitPattern: i).bigEndian) { append($0) }
        }

        var bytes: [UInt8] {
            spilled ?? [UInt8](UnsafeRawBufferPointer(rebasing: stack[..<count]))
        }
    }

    public static func == (a: UniqueKey, b: UniqueKey) -> Bool {
        a.bytes.withUnsafeBytes { x in b.bytes.withUnsafeBytes { y in sameMemory(x, y) } }
    }
    /// The bytes in one block (the derived hash combines them one at a time).
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// One stored item, as the core hands it to a backend and gets it back.
///
/// `attributes` always hold accessible, accessGroup, synchronizable and both dates (the core fills them in).
public struct ItemRecord: Sendable, Hashable {
    public let persistentRef: PersistentRef
    public let itemClass: ItemClass
    public let attributes: [AttributeName: AttributeValue]
    /// The secret (`kSecValueData`): `nil` for an item added without one, which is not the same as an
    /// empty secret (`Data()`).
    public let data: Data?
    /// Computed once from class and attributes.
    public let uniqueKey: UniqueKey

    public init(persistentRef: PersistentRef, itemClass: ItemClass, attributes: [AttributeName: AttributeValue],
                data: Data?) {
        self.persistentRef = persistentRef
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
        self.uniqueKey = UniqueKey(itemClass: itemClass) { attributes[$0] }
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

    public init(itemClass: ItemClass? = nil, persistentRef: PersistentRef? = nil, uniqueKeys: [UniqueKey]? = nil,
                equalities: [AttributeName: AttributeValue] = [:]) {
        self.itemClass = itemClass
        self.persistentRef = persistentRef
        self.uniqueKeys = uniqueKeys
        self.equalities = equalities
    }

    /// The uniqueness probe for `record`: its class and key, and the record itself (``uniquenessOf``).
    init(uniquenessOf record: ItemRecord) {
        self.init(itemClass: record.itemClass, uniqueKeys: [record.uniqueKey])
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
}

extension StorageBackend {
    /// A backend that does not say may block without a known bound.
    public var blocking: Blocking { .unknown }
}

extension StorageBackend {
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
