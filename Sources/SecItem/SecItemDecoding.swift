import SecureStore
import Foundation

/// Turns Apple-shaped dictionaries into the core's typed values, once, at this boundary.
enum SecItemDecoder {
    enum Call { case add, copy, updateQuery, delete }

    private static let attributesByCode: [String: AttributeName] = {
        var d: [String: AttributeName] = [:]
        for a in AttributeName.all { d[a.code] = a }
        return d
    }()
    /// Keys accepted and ignored: they choose iOS behaviours that have no Linux meaning.
    private static let ignored: Set<String> = ["nleg", "u_AuthUI", "u_OpPrompt", "pdmn_legacy"]
    /// Keys Apple defines for features we do not provide.
    private static let unimplemented: Set<String> = [
        "accc", "m_ItemList", "m_Policy", "m_SearchList", "m_Issuers", "m_EmailAddressIfPresent", "m_SubjectContains",
        "m_TrustedOnly", "m_ValidOnDate", "u_ItemList", "v_Ref",
    ]
    private static let returnKeys: [String: ReturnOptions] = [
        "r_Data": .data, "r_Attributes": .attributes, "r_Ref": .ref, "r_PersistentRef": .persistentRef,
    ]

    /// Removes Optional wrapping (`kCFBooleanTrue` is implicitly unwrapped and arrives as Optional in Any).
    static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrap(child.value)
    }

    static func attributeValue(_ raw: Any, key: String) throws(SecureStoreError) -> AttributeValue {
        guard let value = unwrap(raw) else { throw .param(key, "The value for \(key) is nil.") }
        switch value {
        case let s as String: return .string(s)
        case let d as Data: return .data(d)
        case let b as Bool: return .bool(b)
        case let n as Int: return .number(Int64(n))
        case let n as Int32: return .number(Int64(n))
        case let n as Int64: return .number(n)
        case let n as UInt32: return .number(Int64(n))
        case let n as UInt16: return .number(Int64(n))
        case let n as UInt8: return .number(Int64(n))
        case let n as UInt: guard let v = Int64(exactly: n) else { break }; return .number(v)
        case let n as Double: guard let v = Int64(exactly: n) else { break }; return .number(v)
        case let n as NSNumber: return .number(n.int64Value)
        case let d as Date: return .date(d)
        case let s as NSString: return .string(s as String)
        case let d as NSData: return .data(d as Data)
        default: break
        }
        throw .param(key, "The value for \(key) has an unsupported type \(type(of: value)).")
    }

    static func boolValue(_ raw: Any, key: String) throws(SecureStoreError) -> Bool {
        switch try attributeValue(raw, key: key) {
        case .bool(let b): return b
        case .number(let n): return n != 0
        default: throw .param(key, "\(key) must be a boolean (kCFBooleanTrue / kCFBooleanFalse).")
        }
    }

    static func itemClass(_ dict: [String: Any], required: Bool) throws(SecureStoreError) -> ItemClass? {
        guard let raw = dict["class"] else {
            if required { throw .param("class", "The dictionary has no kSecClass; add one (kSecClassGenericPassword, …).") }
            return nil
        }
        guard let name = unwrap(raw) as? String else { throw .param("class", "kSecClass must be a kSecClass… constant.") }
        guard let c = ItemClass(rawValue: name) else {
            throw SecureStoreError(.noSuchClass, "kSecClass \"\(name)\" is not one of genp, inet, cert, keys, idnt.", parameter: "class")
        }
        return c
    }

    /// A query dictionary for copy, update or delete.
    static func query(_ dict: [String: Any], call: Call) throws(SecureStoreError) -> ItemQuery {
        var query = ItemQuery(nil)
        query.itemClass = try itemClass(dict, required: dict["v_PersistentRef"] == nil)
        for (key, raw) in dict.sorted(by: { $0.key < $1.key }) {
            if call != .copy, key.hasPrefix("m_") {
                throw .param(key, "\(call == .delete ? "SecItemDelete" : "SecItemUpdate") affects every match; remove \(key).")
            }
            if call == .updateQuery, returnKeys[key] != nil {
                throw .param(key, "SecItemUpdate's query may not contain return keys; remove \(key).")
            }
            switch key {
            case "class": continue
            case "sync":
                if let s = unwrap(raw) as? String, s == "syna" {
                    query.synchronizableAny = true
                } else {
                    query.attributes[.synchronizable] = .bool(try boolValue(raw, key: key))
                }
            case "m_Limit":
                let value = unwrap(raw)
                if let s = value as? String, s == "m_LimitOne" { query.limit = .one }
                else if let s = value as? String, s == "m_LimitAll" { query.limit = .all }
                else if case .number(let n) = try attributeValue(raw, key: key), n > 0, let i = Int(exactly: n) { query.limit = .count(i) }
                else { throw .param(key, "kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a positive number.") }
            case "m_CaseInsensitive":
                query.caseInsensitive = try boolValue(raw, key: key)
            case "v_Data":
                guard unwrap(raw) is Data || unwrap(raw) is NSData else {
                    throw .param(key, "kSecValueData must be Data.")
                }
            case "v_PersistentRef":
                guard let d = unwrap(raw) as? Data else { throw .param(key, "kSecValuePersistentRef must be Data.") }
                query.persistentRef = PersistentRef(data: d)
            default:
                if let option = returnKeys[key] {
                    if try boolValue(raw, key: key) { query.returning.insert(option) }
                } else if let name = attributesByCode[key] {
                    query.attributes[name] = try attributeValue(raw, key: key)
                } else if ignored.contains(key) || key.hasPrefix("u_") {
                    continue
                } else if unimplemented.contains(key) {
                    throw SecureStoreError(.unimplemented, "\(key) is not supported on Linux.", parameter: key)
                } else {
                    throw .param(key, "Unknown key \"\(key)\" in the query.")
                }
            }
        }
        if call == .delete { query.returning = [] }
        return query
    }

    /// An add dictionary: class, attributes, value data, return keys.
    static func newItem(_ dict: [String: Any]) throws(SecureStoreError) -> (NewItem, ReturnOptions) {
        guard let cls = try itemClass(dict, required: true) else { throw .param("class", "kSecClass is missing.") }
        var item = NewItem(cls)
        var returning: ReturnOptions = []
        for (key, raw) in dict.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "class": continue
            case "v_Data":
                guard let value = unwrap(raw) else { throw .param(key, "kSecValueData is nil.") }
                if let d = value as? Data { item.data = d }
                else if let d = value as? NSData { item.data = d as Data }
                else { throw .param(key, "kSecValueData must be Data.") }
            case "sync":
                if let s = unwrap(raw) as? String, s == "syna" {
                    throw .param(key, "kSecAttrSynchronizableAny is for queries; an item is synchronizable or not.")
                }
                item.attributes[.synchronizable] = .bool(try boolValue(raw, key: key))
            default:
                if let option = returnKeys[key] {
                    if try boolValue(raw, key: key) { returning.insert(option) }
                } else if let name = attributesByCode[key] {
                    item.attributes[name] = try attributeValue(raw, key: key)
                } else if ignored.contains(key) || key.hasPrefix("u_") {
                    continue
                } else if key.hasPrefix("m_") || key == "v_PersistentRef" {
                    throw .param(key, "\(key) has no meaning in SecItemAdd; remove it.")
                } else if unimplemented.contains(key) {
                    throw SecureStoreError(.unimplemented, "\(key) is not supported on Linux.", parameter: key)
                } else {
                    throw .param(key, "Unknown key \"\(key)\" in the attributes to add.")
                }
            }
        }
        return (item, returning)
    }

    /// attributesToUpdate: attributes and/or value data only.
    static func changes(_ dict: [String: Any]) throws(SecureStoreError) -> ItemChanges {
        var changes = ItemChanges()
        for (key, raw) in dict.sorted(by: { $0.key < $1.key }) {
            if key == "v_Data" {
                guard let value = unwrap(raw), let d = (value as? Data) ?? (value as? NSData).map({ $0 as Data }) else {
                    throw .param(key, "kSecValueData must be Data.")
                }
                changes.data = d
            } else if let name = attributesByCode[key] {
                if key == "sync", let s = unwrap(raw) as? String, s == "syna" {
                    throw .param(key, "kSecAttrSynchronizableAny cannot be set on an item.")
                }
                changes.attributes[name] = try attributeValue(raw, key: key)
            } else {
                throw SecureStoreError(.noSuchAttribute,
                    "\(key) cannot be changed by SecItemUpdate; attributesToUpdate holds attributes and kSecValueData only.",
                    parameter: key)
            }
        }
        return changes
    }
}
