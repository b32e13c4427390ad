import SecureStoreCore
import Foundation

/// Turns Apple-shaped dictionaries into the core's typed values, once, at this boundary.
///
/// Keys arrive as `NSString` or `String`; values as Swift values or their Foundation classes (`Bool` or an
/// `NSNumber` boolean, `Int` or `NSNumber`, `Data` or `NSData`, `Date` or `NSDate`, `String` or `NSString`,
/// optionals such as `kCFBooleanTrue`). A malformed dictionary throws `errSecParam` before any decision
/// that a well-formed request cannot be served here (`errSecUnimplemented`, `errSecNoSuchKeychain`), so
/// callers see the mistake they can fix first: those decisions are collected in `deferred` and thrown by
/// the caller once every dictionary of the call has been read.
enum SecItemDecoder {
    enum Call { case add, copy, updateQuery, delete }

    /// Keys accepted and ignored: they choose Apple behaviours that have no Linux meaning (MacOSDialect.md).
    private static let ignored: Set<String> = [
        "nleg",        // kSecUseDataProtectionKeychain: the stores here have the data-protection keychain's semantics
        "u_AuthUI",    // kSecUseAuthenticationUI: no item here needs a user interface
        "u_NoAuthUI",  // kSecUseNoAuthenticationUI
        "u_OpPrompt",  // kSecUseOperationPrompt
        "u_AuthCtx",   // kSecUseAuthenticationContext (an LAContext)
        "pdmn_legacy",
    ]
    /// Keys Apple defines for features not provided here: refused with errSecUnimplemented.
    private static let unimplemented: Set<String> = [
        "m_ItemList", "m_Policy", "m_Issuers", "m_EmailAddressIfPresent", "m_SubjectContains", "m_SubjectStartsWith",
        "m_SubjectEndsWith", "m_SubjectWholeString", "m_TrustedOnly", "m_ValidOnDate", "m_DiacriticInsensitive",
        "m_WidthInsensitive", "u_ItemList", "v_Ref",
        "acls",        // kSecAttrAccess (a macOS SecAccess ACL): cannot be honoured, so never silently dropped
        "tkid",        // kSecAttrTokenID: no tokens or Secure Enclave
    ]
    /// Keys naming a macOS file keychain (kSecUseKeychain, kSecMatchSearchList): none exists here.
    private static let keychainChoice: Set<String> = ["u_Keychain", "m_SearchList"]
    private static let returnKeys: [String: ReturnOptions] = [
        "r_Data": .data, "r_Attributes": .attributes, "r_Ref": .ref, "r_PersistentRef": .persistentRef,
    ]

    /// What a dictionary key is, decided by one probe of ``keys``.
    enum Key: Sendable {
        case itemClass, accessControl, synchronizable, limit, caseInsensitive, valueData, persistentRef
        case returning(ReturnOptions)
        case attribute(AttributeName)
        /// kSecUseKeychain, kSecMatchSearchList: errSecNoSuchKeychain (deferred).
        case keychainChoice
        /// A feature not provided here: errSecUnimplemented (deferred).
        case unimplemented
        /// Accepted and ignored.
        case ignored
        /// Not a key this module knows: a `u_` key is ignored, an `m_` key has no meaning outside a copy,
        /// anything else is errSecParam.
        case unknown

        var isPersistentRef: Bool { if case .persistentRef = self { true } else { false } }
    }

    /// One key's decision: what it is, and whether it is a search key (`m_…`) that only
    /// SecItemCopyMatching takes (every `m_` key but kSecMatchLimit and kSecMatchSearchList).
    struct KeyEntry: Sendable {
        let key: Key
        let copyOnly: Bool
        /// An `m_` key other than kSecMatchSearchList: no meaning in SecItemAdd.
        let matchKey: Bool

        init(_ key: Key, _ code: String) {
            self.key = key
            matchKey = code.hasPrefix("m_") && !SecItemDecoder.keychainChoice.contains(code)
            copyOnly = matchKey && code != "m_Limit"
        }
    }

    /// Every key this module knows, to what it is: one probe per key of a dictionary.
    static let keys: [String: KeyEntry] = {
        var table: [(String, KeyEntry)] = []
        for a in AttributeName.all { table.append((a.code, KeyEntry(.attribute(a), a.code))) }
        for (code, option) in returnKeys { table.append((code, KeyEntry(.returning(option), code))) }
        for code in ignored { table.append((code, KeyEntry(.ignored, code))) }
        for code in unimplemented { table.append((code, KeyEntry(.unimplemented, code))) }
        for code in keychainChoice { table.append((code, KeyEntry(.keychainChoice, code))) }
        let named: [(String, Key)] = [
            ("class", .itemClass), ("accc", .accessControl), ("sync", .synchronizable), ("m_Limit", .limit),
            ("m_CaseInsensitive", .caseInsensitive), ("v_Data", .valueData), ("v_PersistentRef", .persistentRef),
        ]
        for (code, key) in named { table.append((code, KeyEntry(key, code))) }
        // A later entry wins (`sync` is an attribute, read as the synchronizable choice).
        return Dictionary(table, uniquingKeysWith: { _, later in later })
    }()

    /// The entry for `code`, or its reading as an unknown key.
    static func decision(_ code: String) -> KeyEntry {
        keys[code] ?? KeyEntry(.unknown, code)
    }

    /// An Apple dictionary with its keys as Swift strings. A key that is not a string (an `NSNumber`, the
    /// `NSNull` of a nil key in `[String?: Any]`) is errSecParam.
    ///
    /// The stored objects are read as they are (`allKeys`/`allValues`, in the same order) and only the
    /// common ones converted here: `NSData` by one copy of its `bytes`, `NSString`, `NSNumber`, `NSDate`.
    /// Iterating the dictionary instead bridges every value to Swift, an `NSData` one byte at a time
    /// (swift-corelibs-foundation). Any other value is fetched as iteration would fetch it.
    static func dictionary(_ dict: NSDictionary) throws(SecureStoreError) -> SecItemDictionary {
        let keys = dict.allKeys, values = dict.allValues
        guard keys.count == values.count else { return try bridgedDictionary(dict) }
        var out = SecItemDictionary(capacity: keys.count)
        for (key, value) in zip(keys, values) {
            // The stored objects are compared by exact class first (`as?` from `Any` walks the runtime's
            // general cast, ~1 k instructions, most of it when the cast fails); subclasses take the casts.
            let keyObject = key as AnyObject
            let name: String
            if type(of: keyObject) == NSString.self {
                name = unsafeDowncast(keyObject, to: NSString.self) as String
            } else if let other = key as? NSString {
                name = other as String
            } else {
                return try bridgedDictionary(dict)   // its error, as before
            }
            let object = value as AnyObject
            let exact = ObjectIdentifier(type(of: object))
            if exact == ObjectIdentifier(NSString.self) {
                out.append(name, .string(unsafeDowncast(object, to: NSString.self) as String))
            } else if exact == ObjectIdentifier(NSData.self) {
                let d = unsafeDowncast(object, to: NSData.self)
                out.append(name, .data(Data(bytes: d.bytes, count: d.length)))
            } else if let s = object as? NSString {
                out.append(name, .string(s as String))
            } else if let n = object as? NSNumber {
                out.append(name, .number(n))
            } else if let d = object as? NSData {
                out.append(name, .data(Data(bytes: d.bytes, count: d.length)))
            } else if let d = object as? NSDate {
                out.append(name, .date(d as Date))
            } else {
                out.append(name, .other(dict.object(forKey: key) as Any))
            }
        }
        return out
    }

    /// ``dictionary(_:)`` by iterating the dictionary (every value bridged to Swift).
    static func bridgedDictionary(_ dict: NSDictionary) throws(SecureStoreError) -> SecItemDictionary {
        var out = SecItemDictionary(capacity: dict.count)
        for (key, value) in dict {
            guard let k = key as? String else {
                throw .param("key", "A dictionary key is a \(type(of: key)), not a kSec… constant (a string).")
            }
            out.append(k, .other(value))
        }
        return out
    }

    /// Removes Optional wrapping (`kCFBooleanTrue` is implicitly unwrapped and arrives as Optional in Any).
    static func unwrap(_ value: Any) -> Any? {
        // Objects and the values ``dictionary(_:)`` makes are never optional: no reflection for them.
        let dynamicType = type(of: value)
        if dynamicType is AnyObject.Type || dynamicType == String.self || dynamicType == Data.self
            || dynamicType == Date.self { return value }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrap(child.value)
    }

    static func attributeValue(_ raw: SecItemValue, key: String) throws(SecureStoreError) -> AttributeValue {
        switch raw {
        case .string(let s): return .string(s)
        case .data(let d): return .data(d)
        case .date(let d): return .date(d)
        case .number(let n): return try number(n, key: key)
        case .other(let any): return try attributeValue(any, key: key)
        }
    }

    private static func attributeValue(_ raw: Any, key: String) throws(SecureStoreError) -> AttributeValue {
        guard let value = unwrap(raw) else { throw .param(key, "The value for \(key) is nil.") }
        switch value {
        case let s as String: return .string(s)                      // String, NSString
        case let d as Data: return .data(d)                          // Data, NSData
        case let d as Date: return .date(d)                          // Date, NSDate
        case let n as NSNumber: return try number(n, key: key)       // NSNumber, Bool, Int, Int32, Double, …
        default: break
        }
        throw .param(key, "The value for \(key) has an unsupported type \(type(of: value)).")
    }

    private static func number(_ n: NSNumber, key: String) throws(SecureStoreError) -> AttributeValue {
        switch NumberKind(n) {
        case .bool(let b): return .bool(b)
        case .integer(let i): return .number(i)
        case .fraction, .outOfRange:
            throw .param(key, "The value for \(key) is a number that is not a 64-bit integer.")
        }
    }

    static func boolValue(_ raw: SecItemValue, key: String) throws(SecureStoreError) -> Bool {
        switch try attributeValue(raw, key: key) {
        case .bool(let b): return b
        case .number(let n): return n != 0
        default: throw .param(key, "\(key) must be a boolean (kCFBooleanTrue / kCFBooleanFalse).")
        }
    }

    static func dataValue(_ raw: SecItemValue, key: String, name: String) throws(SecureStoreError) -> Data {
        if case .data(let d) = raw { return d }
        guard let value = raw.value else { throw .param(key, "\(name) is nil.") }
        guard let d = value as? Data else { throw .param(key, "\(name) must be Data; got \(type(of: value)).") }
        return d
    }

    static func isSynchronizableAny(_ raw: SecItemValue) -> Bool {
        raw.text == "syna"
    }

    static func itemClass(_ dict: SecItemDictionary, required: Bool) throws(SecureStoreError) -> ItemClass? {
        guard let raw = dict.itemClass else {
            if required { throw .param("class", "The dictionary has no kSecClass; add one (kSecClassGenericPassword, …).") }
            return nil
        }
        guard let name = raw.text else { throw .param("class", "kSecClass must be a kSecClass… constant.") }
        guard let c = ItemClass(rawValue: name) else {
            throw SecureStoreError(.noSuchClass, "kSecClass \"\(name)\" is not one of genp, inet, cert, keys, idnt.", parameter: "class")
        }
        return c
    }

    // MARK: kSecAttrAccessControl

    /// The access control object of a dictionary, checked: it must be a `SecAccessControl` (errSecParam
    /// otherwise, whatever the call), and it excludes kSecAttrAccessible (Apple: mutually exclusive).
    static func accessControl(_ dict: SecItemDictionary) throws(SecureStoreError) -> SecAccessControl? {
        guard let raw = dict.accessControl else { return nil }
        guard let control = raw.value as? SecAccessControl else {
            throw .param("accc", "kSecAttrAccessControl must be a SecAccessControl made by SecAccessControlCreateWithFlags.")
        }
        if dict.hasAccessible {
            throw .param("accc", "kSecAttrAccessControl and kSecAttrAccessible are mutually exclusive; the access control "
                         + "object already names the protection class.")
        }
        return control
    }

    /// The status for an access control whose constraints Linux cannot verify: storing it (an add, or the
    /// changes of an update) is errSecUnimplemented; matching it (a query) finds nothing, as no item here has one.
    static func constraintsError(_ control: SecAccessControl, storing: Bool, add: Bool = false) -> SecureStoreError {
        let flags = "0x\(String(control.unsupportedConstraints.rawValue, radix: 16))"
        if storing {
            return SecureStoreError(.unimplemented,
                "kSecAttrAccessControl asks for user presence, biometry, a device passcode, a paired watch or an application "
                + "password (flags \(flags)); Linux cannot verify these, so nothing was \(add ? "stored" : "changed"). "
                + "Use an access control with no such flags (or kSecAttrAccessible) to keep the protection class only.",
                parameter: "accc")
        }
        return SecureStoreError(.itemNotFound,
            "No item here has a kSecAttrAccessControl with user presence, biometry, passcode, watch or application "
            + "password constraints (flags \(flags)): such items cannot be stored on Linux.", parameter: "accc")
    }

    /// Refusals that are not a malformed dictionary, for keys outside the attributes.
    private static func refusal(_ key: String, _ kind: Key) -> SecureStoreError? {
        switch kind {
        case .keychainChoice:
            return SecureStoreError(.init(name: "noSuchKeychain", status: errSecNoSuchKeychain),
                "\(key) names a macOS file keychain; there are none here (the store is chosen with SecItemSystem or "
                + "the configuration). Remove \(key).", parameter: key)
        case .unimplemented:
            return SecureStoreError(.unimplemented, "\(key) is not supported on Linux.", parameter: key)
        default:
            return nil
        }
    }

    // MARK: Dictionaries

    /// Decides a dictionary with `pass`, in the dictionary's own order first. The status of a dictionary
    /// with several bad keys is the first in key order, whatever the order its keys were inserted in: when
    /// any key throws or is refused in the first pass, the same rules run again over the keys sorted, from
    /// the same starting `deferred`. A well-formed dictionary is read once and never sorted.
    private static func decided<R>(_ dict: SecItemDictionary, deferred: inout SecureStoreError?,
                                   _ pass: (_ sorted: Bool, _ deferred: inout SecureStoreError?) throws(SecureStoreError) -> R)
        throws(SecureStoreError) -> R {
        let before = deferred
        do throws(SecureStoreError) {
            let result = try pass(false, &deferred)
            // A refusal is kept only when none came before it, so which one is kept depends on the order.
            if before != nil || deferred == nil { return result }
        } catch {}
        deferred = before
        return try pass(true, &deferred)
    }

    /// Calls `step` for every entry of `dict` with its key's decision, in key order when `sorted` (the error
    /// order), else in the dictionary's own order.
    private static func forEachEntry(_ dict: SecItemDictionary, sorted: Bool,
                                     _ step: (String, KeyEntry, SecItemValue) throws(SecureStoreError) -> Void) throws(SecureStoreError) {
        if sorted {
            for entry in dict.entries.sorted(by: { $0.key < $1.key }) { try step(entry.key, entry.decision, entry.value) }
        } else {
            for entry in dict.entries { try step(entry.key, entry.decision, entry.value) }
        }
    }

    /// A query dictionary for copy, update or delete.
    static func query(_ dict: SecItemDictionary, call: Call, deferred: inout SecureStoreError?) throws(SecureStoreError) -> ItemQuery {
        try decided(dict, deferred: &deferred) { sorted, deferred throws(SecureStoreError) in
            try query(dict, call: call, sorted: sorted, deferred: &deferred)
        }
    }

    private static func query(_ dict: SecItemDictionary, call: Call, sorted: Bool,
                              deferred: inout SecureStoreError?) throws(SecureStoreError) -> ItemQuery {
        var query = ItemQuery(nil)
        query.itemClass = try itemClass(dict, required: !dict.hasPersistentRef)
        if let control = try accessControl(dict) {
            if control.unsupportedConstraints.isEmpty {
                query.attributes[.accessible] = .string(control.protection)
            } else if deferred == nil {
                deferred = constraintsError(control, storing: false)
            }
        }
        try forEachEntry(dict, sorted: sorted) { key, entry, raw throws(SecureStoreError) in
            if call != .copy, entry.copyOnly {
                throw .param(key, "\(call == .delete ? "SecItemDelete" : "SecItemUpdate") affects every match; remove \(key).")
            }
            switch entry.key {
            case .itemClass, .accessControl, .ignored: return
            case .returning(let option):
                if call == .updateQuery {
                    throw .param(key, "SecItemUpdate's query may not contain return keys; remove \(key).")
                }
                if try boolValue(raw, key: key) { query.returning.insert(option) }
            case .synchronizable:
                if isSynchronizableAny(raw) {
                    query.synchronizableAny = true
                } else {
                    query.attributes[.synchronizable] = .bool(try boolValue(raw, key: key))
                }
            case .limit:
                let value = raw.text
                if call != .copy {
                    // The macOS dialect: kSecMatchLimitAll on delete or update means every match, which is what
                    // they do. Any other limit would change which items are affected: refused.
                    guard value == "m_LimitAll" else {
                        throw .param(key, "\(call == .delete ? "SecItemDelete" : "SecItemUpdate") affects every match; "
                                     + "only kSecMatchLimitAll may be given, or remove kSecMatchLimit.")
                    }
                } else if value == "m_LimitOne" {
                    query.limit = .one
                } else if value == "m_LimitAll" {
                    query.limit = .all
                } else if case .number(let n) = try attributeValue(raw, key: key), n > 0, let i = Int(exactly: n) {
                    query.limit = .count(i)
                } else {
                    throw .param(key, "kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a positive number.")
                }
            case .caseInsensitive:
                query.caseInsensitive = try boolValue(raw, key: key)
            case .valueData:
                _ = try dataValue(raw, key: key, name: "kSecValueData")
            case .persistentRef:
                query.persistentRef = PersistentRef(data: try dataValue(raw, key: key, name: "kSecValuePersistentRef"))
            case .attribute(let name):
                query.attributes[name] = try attributeValue(raw, key: key)
            case .keychainChoice, .unimplemented:
                if deferred == nil { deferred = refusal(key, entry.key) }
            case .unknown:
                if key.hasPrefix("u_") { return }
                if let noSuch = unknownAttribute(key) {
                    if deferred == nil { deferred = noSuch }
                    return
                }
                throw .param(key, "Unknown key \"\(key)\" in the query.")
            }
        }
        if case .string("com.apple.token")? = query.attributes[.accessGroup], deferred == nil {
            // kSecAttrAccessGroupToken: the items of smart cards and other tokens. There are none here.
            deferred = SecureStoreError(.itemNotFound, "kSecAttrAccessGroupToken holds the items of tokens (smart cards); "
                                        + "there are none on Linux.", parameter: "agrp")
        }
        if call == .delete { query.returning = [] }
        return query
    }

    /// An add dictionary: class, attributes, value data, return keys.
    static func newItem(_ dict: SecItemDictionary, deferred: inout SecureStoreError?) throws(SecureStoreError) -> (NewItem, ReturnOptions) {
        try decided(dict, deferred: &deferred) { sorted, deferred throws(SecureStoreError) in
            try newItem(dict, sorted: sorted, deferred: &deferred)
        }
    }

    private static func newItem(_ dict: SecItemDictionary, sorted: Bool,
                                deferred: inout SecureStoreError?) throws(SecureStoreError) -> (NewItem, ReturnOptions) {
        guard let cls = try itemClass(dict, required: true) else { throw .param("class", "kSecClass is missing.") }
        var item = NewItem(cls)
        var returning: ReturnOptions = []
        if let control = try accessControl(dict) {
            if control.unsupportedConstraints.isEmpty {
                item.attributes[.accessible] = .string(control.protection)
            } else if deferred == nil {
                deferred = constraintsError(control, storing: true, add: true)
            }
        }
        try forEachEntry(dict, sorted: sorted) { key, entry, raw throws(SecureStoreError) in
            if entry.matchKey || entry.key.isPersistentRef {
                throw .param(key, "\(key) has no meaning in SecItemAdd; remove it.")
            }
            switch entry.key {
            case .itemClass, .accessControl, .ignored: return
            case .valueData:
                item.data = try dataValue(raw, key: key, name: "kSecValueData")
            case .synchronizable:
                // The macOS dialect: kSecAttrSynchronizableAny in an add ("either") leaves the attribute unset,
                // so the item is not synchronizable, as the macOS file keychain stores it.
                if isSynchronizableAny(raw) { return }
                item.attributes[.synchronizable] = .bool(try boolValue(raw, key: key))
            case .returning(let option):
                if try boolValue(raw, key: key) { returning.insert(option) }
            case .attribute(let name):
                item.attributes[name] = try attributeValue(raw, key: key)
            case .keychainChoice, .unimplemented:
                if deferred == nil { deferred = refusal(key, entry.key) }
            case .unknown, .limit, .caseInsensitive, .persistentRef:
                if key.hasPrefix("u_") { return }
                if case .unknown = entry.key, let noSuch = unknownAttribute(key) {
                    if deferred == nil { deferred = noSuch }
                    return
                }
                throw .param(key, "Unknown key \"\(key)\" in the attributes to add.")
            }
        }
        return (item, returning)
    }

    /// A four-character key this module does not know, read as Apple's keychain reads it: every four-character
    /// key is an attribute code (securityd's query applier sends it to the class's attributes), so an unknown
    /// one is errSecNoSuchAttr ("attribute … not found in class"), its value not looked at. Longer keys that
    /// are not Apple's (`"kSecUseDataProtectionKeychain"` written as a literal) are errSecParam there and here.
    private static func unknownAttribute(_ key: String) -> SecureStoreError? {
        guard key.utf8.count == 4 else { return nil }
        return SecureStoreError(.noSuchAttribute, "\(key) is not an attribute of any item class here.", parameter: key)
    }

    /// attributesToUpdate: attributes, kSecAttrAccessControl (as its protection class) and/or value data.
    static func changes(_ dict: SecItemDictionary, deferred: inout SecureStoreError?) throws(SecureStoreError) -> ItemChanges {
        try decided(dict, deferred: &deferred) { sorted, deferred throws(SecureStoreError) in
            try changes(dict, sorted: sorted, deferred: &deferred)
        }
    }

    private static func changes(_ dict: SecItemDictionary, sorted: Bool,
                                deferred: inout SecureStoreError?) throws(SecureStoreError) -> ItemChanges {
        var changes = ItemChanges()
        if let control = try accessControl(dict) {
            if control.unsupportedConstraints.isEmpty {
                changes.attributes[.accessible] = .string(control.protection)
            } else if deferred == nil {
                deferred = constraintsError(control, storing: true)
            }
        }
        try forEachEntry(dict, sorted: sorted) { key, entry, raw throws(SecureStoreError) in
            switch entry.key {
            case .accessControl: return
            case .valueData:
                changes.data = try dataValue(raw, key: key, name: "kSecValueData")
            case .synchronizable:
                if isSynchronizableAny(raw) {
                    throw .param(key, "kSecAttrSynchronizableAny cannot be set on an item.")
                }
                changes.attributes[.synchronizable] = try attributeValue(raw, key: key)
            case .attribute(let name):
                changes.attributes[name] = try attributeValue(raw, key: key)
            default:
                throw SecureStoreError(.noSuchAttribute,
                    "\(key) cannot be changed by SecItemUpdate; attributesToUpdate holds attributes and kSecValueData only.",
                    parameter: key)
            }
        }
        return changes
    }
}

/// One value of an Apple dictionary, read once by ``SecItemDecoder/dictionary(_:)``: the common Foundation
/// classes as Swift values, anything else as the dictionary's iteration would give it.
enum SecItemValue {
    case string(String)
    case data(Data)
    case number(NSNumber)
    case date(Date)
    case other(Any)

    /// The value as `Any`, Optional wrapping removed (`nil` for a nil value).
    var value: Any? {
        switch self {
        case .string(let s): s
        case .data(let d): d
        case .number(let n): n
        case .date(let d): d
        case .other(let any): SecItemDecoder.unwrap(any)
        }
    }

    /// The value when it is a string.
    var text: String? {
        if case .string(let s) = self { return s }
        return value as? String
    }
}

/// An Apple dictionary read once by ``SecItemDecoder/dictionary(_:)``: each key as a Swift string with its
/// decision (one probe of ``SecItemDecoder/keys``) and its value, in the dictionary's own order, and where the
/// keys the decoder reads before the others are (class, access control, accessible, persistent reference).
/// No hash table is built for it: the decoder walks the entries once (twice, sorted, only for a dictionary
/// that fails), and the few keys it looks up by name are found by their decision as they are added.
struct SecItemDictionary {
    struct Entry {
        let key: String
        let decision: SecItemDecoder.KeyEntry
        var value: SecItemValue
    }

    private(set) var entries: [Entry] = []
    private var itemClassAt = -1, accessControlAt = -1
    private(set) var hasAccessible = false, hasPersistentRef = false

    init(capacity: Int) {
        entries.reserveCapacity(capacity)
    }

    /// The entries in this order (tests; a later key equal to an earlier one replaces its value).
    init(_ pairs: [(String, SecItemValue)]) {
        self.init(capacity: pairs.count)
        for (key, value) in pairs { append(key, value) }
    }

    /// Adds an entry. Two keys of an `NSDictionary` are distinct objects but may still be one Swift string
    /// (Swift compares strings by canonical equivalence): then the later value replaces the earlier one and
    /// the earlier key is kept, as a Swift dictionary does. Only keys this module does not know can be such a
    /// pair (every known key is ASCII, which has no other canonically equivalent spelling), so only those
    /// are compared with the others.
    mutating func append(_ key: String, _ value: SecItemValue) {
        let decision = SecItemDecoder.decision(key)
        switch decision.key {
        case .unknown:
            if let at = entries.firstIndex(where: { $0.key == key }) {
                entries[at].value = value
                return
            }
        case .itemClass: itemClassAt = entries.count
        case .accessControl: accessControlAt = entries.count
        case .persistentRef: hasPersistentRef = true
        case .attribute(let name) where name == .accessible: hasAccessible = true
        default: break
        }
        entries.append(Entry(key: key, decision: decision, value: value))
    }

    var count: Int { entries.count }
    /// kSecClass's value.
    var itemClass: SecItemValue? { itemClassAt >= 0 ? entries[itemClassAt].value : nil }
    /// kSecAttrAccessControl's value.
    var accessControl: SecItemValue? { accessControlAt >= 0 ? entries[accessControlAt].value : nil }

    /// The value of `key` (a scan: for tests and rare uses).
    subscript(key: String) -> SecItemValue? {
        entries.first { $0.key == key }?.value
    }
}
