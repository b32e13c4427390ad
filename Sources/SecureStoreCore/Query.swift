public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `kSecMatchLimit`: how many items a query returns at most.
public enum MatchLimit: Sendable, Hashable {
    /// One item (`kSecMatchLimitOne`).
    case one
    /// Every match (`kSecMatchLimitAll`).
    case all
    /// At most `n` items (`n` > 0).
    case count(Int)
}

/// `kSecReturn…` keys: what a query (or an add) gives back for each item.
public struct ReturnOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The secret (`kSecReturnData`).
    public static let data = ReturnOptions(rawValue: 1)
    /// The attributes (`kSecReturnAttributes`).
    public static let attributes = ReturnOptions(rawValue: 2)
    /// The persistent reference (`kSecReturnPersistentRef`).
    public static let persistentRef = ReturnOptions(rawValue: 4)
    /// An object reference (`kSecReturnRef`): there are no key or certificate objects on Linux, so it adds
    /// nothing to an ``Item``.
    public static let ref = ReturnOptions(rawValue: 8)
}

/// An opaque reference to one item, stable for the item's life (`kSecValuePersistentRef`).
public struct PersistentRef: Hashable, Sendable, CustomStringConvertible {
    /// The first 16 bytes as two words (zero-padded) and the length: compared and hashed instead of the
    /// `Data` (every backend table is keyed by references; `Data`'s own `==` and hash cost ~1 k instructions).
    /// A reference of up to 16 bytes (every reference a store makes) is only these: ``data`` is built when
    /// asked for, so making a reference allocates nothing.
    private let word0: UInt64, word1: UInt64, count: Int
    /// The bytes of a reference longer than 16 bytes (one a caller made up), else `nil`.
    private let long: Data?

    /// The reference's bytes (16 random bytes for the references a store makes).
    public var data: Data {
        if let long { return long }
        var words = (word0, word1)
        return Swift.withUnsafeBytes(of: &words) { Data($0.prefix(count)) }
    }

    /// The number of bytes (16 for the references a store makes).
    package var byteCount: Int { count }

    /// Lends the reference's bytes (in place for one of up to 16 bytes: no `Data` is made).
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let long { return try long.withUnsafeBytes(body) }
        var words = (word0, word1)
        return try Swift.withUnsafeBytes(of: &words) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    public init(data: Data) {
        count = data.count
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { raw in
            data.withUnsafeBytes { bytes in raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(16))) }
        }
        (word0, word1) = words
        long = data.count > 16 ? data : nil
    }

    /// A reference with these bytes, read in place (a decoder's buffer): no `Data` is made for one of up to 16
    /// bytes, which is every reference a store makes.
    package init(bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= 16 else {
            self.init(data: Data(bytes))
            return
        }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { raw in raw.copyMemory(from: bytes) }
        self.init(words: words, count: bytes.count)
    }

    private init(words: (UInt64, UInt64), count: Int = 16) {
        (word0, word1) = words
        self.count = count
        long = nil
    }

    public static func == (a: PersistentRef, b: PersistentRef) -> Bool {
        a.word0 == b.word0 && a.word1 == b.word1 && a.count == b.count && a.long == b.long
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(word0)
        hasher.combine(word1)
        hasher.combine(count)
    }

    /// A fresh random reference: 16 bytes from the system's random source, drawn at the call, so no two
    /// processes sharing a store (a forked child included) hand out the same bytes.
    ///
    /// One `getentropy` call (the C library's entry to the kernel's `getrandom`, POSIX.1-2024) for the 16 bytes:
    /// `SystemRandomNumberGenerator` makes one system call per 8 bytes, and those two calls were 0.72 µs of a
    /// 2.3 µs memory-store add on the benchmark machine (one call: 0.36 µs). Where `getentropy` fails (a kernel
    /// without `getrandom`), the generator's two calls.
    public static func random() -> PersistentRef {
        var words: (UInt64, UInt64) = (0, 0)
        let drawn = withUnsafeMutableBytes(of: &words) { getentropy($0.baseAddress, $0.count) } == 0
        guard drawn else {
            var generator = SystemRandomNumberGenerator()
            return PersistentRef(words: (generator.next(), generator.next()))
        }
        return PersistentRef(words: words)
    }

    /// A reference numbered within one store object: `serial` after that object's `prefix` (drawn at random
    /// once, when the object is made), so two store objects never share a reference and none of its adds
    /// makes a system call (an in-memory store's; ``StorageBackend/newPersistentRef()``).
    package init(prefix: UInt64, serial: UInt64) {
        self.init(words: (prefix, serial.bigEndian))
    }

    public var description: String { data.map { String(format: "%02x", $0) }.joined() }
}

/// A search: which items (class and exact attribute values) and what to return.
///
/// Used by copy, update and delete. Every attribute is an equality test; all must hold.
public struct ItemQuery: Sendable, Hashable {
    /// The item class; may be `nil` only when the query names a ``persistentRef``.
    public var itemClass: ItemClass?
    /// Attributes that must be equal. `.synchronizable` here selects synced (true) or not (false) items;
    /// without it only non-synchronizable items are seen, unless ``synchronizableAny`` is set.
    public var attributes: [AttributeName: AttributeValue]
    /// `kSecAttrSynchronizableAny`: see synchronizable and non-synchronizable items alike.
    public var synchronizableAny: Bool
    /// `kSecMatchLimit`: at most this many items; `nil` means every match for ``SecureStore/items(matching:)``
    /// (Apple's `SecItemCopyMatching` defaults to one, and the SecItem functions do). Update and delete refuse a limit.
    public var limit: MatchLimit?
    /// `kSecMatchCaseInsensitive`: text attributes compare case-insensitively.
    public var caseInsensitive: Bool
    /// What each ``Item`` holds besides its class (queries only; ignored by delete; refused by update).
    public var returning: ReturnOptions
    /// `kSecValuePersistentRef`: exactly this item. Cannot be combined with attributes.
    public var persistentRef: PersistentRef?

    public init(
        _ itemClass: ItemClass?,
        _ attributes: [AttributeName: AttributeValue] = [:],
        synchronizableAny: Bool = false,
        limit: MatchLimit? = nil,
        caseInsensitive: Bool = false,
        returning: ReturnOptions = [],
        persistentRef: PersistentRef? = nil
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.synchronizableAny = synchronizableAny
        self.limit = limit
        self.caseInsensitive = caseInsensitive
        self.returning = returning
        self.persistentRef = persistentRef
    }

    /// A query whose attribute values are Swift values (``AttributeValueConvertible``): variables and
    /// interpolations as well as literals, mixed (`[.service: "app", .account: username]`).
    public init(
        _ itemClass: ItemClass?,
        _ attributes: [AttributeName: any AttributeValueConvertible],
        synchronizableAny: Bool = false,
        limit: MatchLimit? = nil,
        caseInsensitive: Bool = false,
        returning: ReturnOptions = [],
        persistentRef: PersistentRef? = nil
    ) {
        self.init(itemClass, attributes.attributeValues, synchronizableAny: synchronizableAny, limit: limit,
                  caseInsensitive: caseInsensitive, returning: returning, persistentRef: persistentRef)
    }

    /// A query for one item by its persistent reference alone.
    public static func item(_ ref: PersistentRef, returning: ReturnOptions = []) -> ItemQuery {
        ItemQuery(nil, returning: returning, persistentRef: ref)
    }
}

/// An item to add.
public struct NewItem: Sendable, Hashable {
    public var itemClass: ItemClass
    /// The attributes; creation and modification dates are set by the store whatever is given here.
    public var attributes: [AttributeName: AttributeValue]
    /// The secret (`kSecValueData`); may be empty (`Data()`) or absent (`nil`): the two stay distinct.
    public var data: Data?

    public init(_ itemClass: ItemClass, _ attributes: [AttributeName: AttributeValue] = [:], data: Data? = nil) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
    }

    /// An item whose attribute values are Swift values (``AttributeValueConvertible``): variables and
    /// interpolations as well as literals, mixed (`[.service: "app", .account: username]`).
    public init(_ itemClass: ItemClass, _ attributes: [AttributeName: any AttributeValueConvertible], data: Data? = nil) {
        self.init(itemClass, attributes.attributeValues, data: data)
    }
}

/// What an update changes: attributes and/or the secret.
public struct ItemChanges: Sendable, Hashable {
    public var attributes: [AttributeName: AttributeValue]
    /// A new secret, or `nil` to keep each item's secret.
    public var data: Data?

    public init(_ attributes: [AttributeName: AttributeValue] = [:], data: Data? = nil) {
        self.attributes = attributes
        self.data = data
    }

    /// Changes whose attribute values are Swift values (``AttributeValueConvertible``): variables and
    /// interpolations as well as literals, mixed (`[.label: "Mail (\(user))", .comment: note]`).
    public init(_ attributes: [AttributeName: any AttributeValueConvertible], data: Data? = nil) {
        self.init(attributes.attributeValues, data: data)
    }
}

/// One item as a query returns it: its class, and what the query's return options asked for.
public struct Item: Sendable, Hashable {
    public var itemClass: ItemClass
    /// The attributes (with `kSecReturnAttributes`), including creation and modification dates.
    public var attributes: [AttributeName: AttributeValue]?
    /// The secret (with `kSecReturnData`): `nil` when the item was added without one (or data was not
    /// asked for); an item added with `Data()` gives empty data.
    public var data: Data?
    /// The persistent reference (with `kSecReturnPersistentRef`).
    public var persistentRef: PersistentRef?

    public init(itemClass: ItemClass, attributes: [AttributeName: AttributeValue]? = nil, data: Data? = nil,
                persistentRef: PersistentRef? = nil) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
        self.persistentRef = persistentRef
    }
}
