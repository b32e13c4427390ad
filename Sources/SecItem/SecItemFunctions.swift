public import Foundation
import SecureStore

/// The reason behind the last failing status, per status, for `SecCopyErrorMessageString`.
private let lastReasons = Locked<[OSStatus: String]>([:])

private func fail(_ error: SecureStoreError) -> OSStatus {
    lastReasons.withLock { $0[error.status] = error.message }
    return error.status
}

private func run(_ body: () throws(SecureStoreError) -> Void) -> OSStatus {
    do throws(SecureStoreError) {
        try body()
        return errSecSuccess
    } catch {
        return fail(error)
    }
}

/// The Apple-shaped object for one result item: a single value when one thing was asked, else a dictionary.
/// Like Apple's: `kSecReturnData` alone gives empty data for an item without a secret; in a dictionary an
/// item without a secret has no `kSecValueData` (an item added with empty data has an empty one).
private func object(_ item: ResultItem, _ returning: ReturnOptions) -> Any {
    let wanted = returning.intersection([.attributes, .data, .persistentRef])
    let asked = [ReturnOptions.attributes, .data, .persistentRef].filter { wanted.contains($0) }.count
    if asked == 1 {
        if wanted.contains(.data) { return item.data ?? Data() }
        if let p = item.persistentRef { return p.data }
    }
    var dict: [String: Any] = [:]
    if let attributes = item.attributes {
        dict["class"] = item.itemClass.rawValue
        for (name, value) in attributes {
            switch value {
            case .string(let s): dict[name.code] = s
            case .data(let d): dict[name.code] = d
            case .number(let n): dict[name.code] = Int(n)
            case .bool(let b): dict[name.code] = b
            case .date(let d): dict[name.code] = d
            }
        }
    }
    if asked > 1 {
        if let d = item.data { dict["v_Data"] = d }
        if let p = item.persistentRef { dict["v_PersistentRef"] = p.data }
    }
    return dict
}

private func deliver(_ result: QueryResult, returning: ReturnOptions, to pointer: UnsafeMutablePointer<CFTypeRef?>?) {
    guard let pointer else { return }
    switch result {
    case .none:
        if returning.contains(.ref) { pointer.pointee = nil }
    case .item(let item):
        pointer.pointee = object(item, returning) as AnyObject
    case .items(let items):
        pointer.pointee = items.map { object($0, returning) } as AnyObject
    }
}

private func hasReturnKey(_ dict: [String: Any]) -> Bool {
    dict.keys.contains { $0.hasPrefix("r_") }
}

/// Adds one item (Apple's `SecItemAdd`).
/// - Parameters:
///   - attributes: `kSecClass`, attributes, `kSecValueData`, and optional `kSecReturn…` keys.
///   - result: receives the new item shaped by the return keys; required when a return key is set.
/// - Returns: `errSecSuccess`, or `errSecDuplicateItem`, `errSecParam`, … (see `SecCopyErrorMessageString`).
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    run { () throws(SecureStoreError) in
        let (item, returning) = try SecItemDecoder.newItem(attributes)
        if !returning.isEmpty, result == nil {
            throw .param("r_Data", "A kSecReturn… key needs a result pointer.")
        }
        let store = try SecItemSystem.store()
        let r = try store.add(item, returning: returning)
        deliver(r, returning: returning, to: result)
    }
}

/// Finds items (Apple's `SecItemCopyMatching`).
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    run { () throws(SecureStoreError) in
        let q = try SecItemDecoder.query(query, call: .copy)
        if !q.returning.isEmpty, result == nil {
            throw .param("r_Data", "A kSecReturn… key needs a result pointer.")
        }
        let store = try SecItemSystem.store()
        deliver(try store.copyMatching(q), returning: q.returning, to: result)
    }
}

/// Updates every matching item (Apple's `SecItemUpdate`).
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    run { () throws(SecureStoreError) in
        let q = try SecItemDecoder.query(query, call: .updateQuery)
        let changes = try SecItemDecoder.changes(attributesToUpdate)
        try SecItemSystem.store().update(q, with: changes)
    }
}

/// Deletes every matching item (Apple's `SecItemDelete`).
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    run { () throws(SecureStoreError) in
        let q = try SecItemDecoder.query(query, call: .delete)
        try SecItemSystem.store().delete(q)
    }
}

// NSDictionary spellings (the seeds build NSMutableDictionary queries).
@discardableResult
public func SecItemAdd(_ attributes: NSDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemAdd(stringKeyed(attributes), result)
}
@discardableResult
public func SecItemCopyMatching(_ query: NSDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemCopyMatching(stringKeyed(query), result)
}
@discardableResult
public func SecItemUpdate(_ query: NSDictionary, _ attributesToUpdate: NSDictionary) -> OSStatus {
    SecItemUpdate(stringKeyed(query), stringKeyed(attributesToUpdate))
}
@discardableResult
public func SecItemDelete(_ query: NSDictionary) -> OSStatus {
    SecItemDelete(stringKeyed(query))
}

private func stringKeyed(_ dict: NSDictionary) -> [String: Any] {
    var out: [String: Any] = [:]
    for (key, value) in dict {
        if let k = key as? String { out[k] = value } else if let k = key as? NSString { out[k as String] = value }
        else { out["<non-string key \(type(of: key))>"] = value }
    }
    return out
}

/// Apple's text for a status, followed by the reason the last call that returned it gave (never a secret).
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    let base = statusMessages[status] ?? "OSStatus \(status)."
    guard status != errSecSuccess, let reason = lastReasons.withLock({ $0[status] }) else { return base }
    return "\(base) \(reason)"
}
