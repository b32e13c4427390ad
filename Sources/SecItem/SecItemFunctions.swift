public import Foundation
import SecureStoreCore

/// The reason behind the last failing status, per status, for `SecCopyErrorMessageString`.
private let lastReasons = Locked<[OSStatus: String]>([:])

private func fail(_ error: SecureStoreError) -> OSStatus {
    lastReasons.withLock { $0[error.status] = error.message }
    return error.status
}

/// The store names the typed API's parameters; a SecItem caller gets the dictionary key it passed.
private let appleKeys: [String: String] = [
    "limit": "m_Limit", "caseInsensitive": "m_CaseInsensitive", "returning": "r_Data", "data": "v_Data",
    "persistentRef": "v_PersistentRef", "itemClass": "class", "synchronizableAny": "sync",
]

/// `error` with the parameter named by its Apple dictionary key.
func appleShaped(_ error: SecureStoreError) -> SecureStoreError {
    var shaped = error
    if let parameter = error.parameter, let key = appleKeys[parameter] { shaped.parameter = key }
    return shaped
}

private func run(_ body: () throws(SecureStoreError) -> Void) -> OSStatus {
    do throws(SecureStoreError) {
        try body()
        return errSecSuccess
    } catch {
        return fail(appleShaped(error))
    }
}

/// One attribute value as the Foundation object Apple returns (NSString, NSData, NSNumber, NSDate).
private func object(_ value: AttributeValue) -> AnyObject {
    switch value {
    case .string(let s): s as NSString
    case .data(let d): SecItemData(d)
    case .number(let n): NSNumber(value: n)
    case .bool(let b): NSNumber(value: b)
    case .date(let d): d as NSDate
    }
}

/// The dictionary key of each attribute: made once, so a result dictionary allocates no key.
nonisolated(unsafe) private let attributeKeys: [AttributeName: NSString] = {
    var keys: [AttributeName: NSString] = [:]
    for name in AttributeName.all { keys[name] = name.code as NSString }
    return keys
}()

/// The Apple-shaped object for one result item: a single value when one thing was asked, else a dictionary.
/// Like Apple's: `kSecReturnData` alone gives empty data for an item without a secret; in a dictionary an
/// item without a secret has no `kSecValueData` (an item added with empty data has an empty one).
/// Foundation objects (every data a ``SecItemData``), so `as? Data`, `as! CFData as Data`,
/// `as? [String: Any]` and `as? NSDictionary` all work, and a caller's `as? Data` is one copy.
private func object(_ item: Item, _ returning: ReturnOptions) -> AnyObject {
    let wanted = returning.intersection([.attributes, .data, .persistentRef])
    let asked = wanted.rawValue.nonzeroBitCount   // one bit per option
    if asked == 1 {
        if wanted.contains(.data) { return SecItemData(item.data ?? Data()) }
        if let p = item.persistentRef { return SecItemData(p.data) }
    }
    var keys: [NSObject] = [], values: [AnyObject] = []
    let capacity = (item.attributes?.count ?? 0) + 3
    keys.reserveCapacity(capacity)
    values.reserveCapacity(capacity)
    if let attributes = item.attributes {
        keys.append(kSecClass)
        values.append(item.itemClass.rawValue as NSString)
        for (name, value) in attributes {
            keys.append(attributeKeys[name] ?? name.code as NSString)
            values.append(object(value))
        }
    }
    if asked > 1 {
        if let d = item.data {
            keys.append(kSecValueData)
            values.append(SecItemData(d))
        }
        if let p = item.persistentRef {
            keys.append(kSecValuePersistentRef)
            values.append(SecItemData(p.data))
        }
    }
    return values.withUnsafeBufferPointer { v in
        keys.withUnsafeBufferPointer { k in
            NSDictionary(objects: v.baseAddress, forKeys: k.baseAddress, count: k.count)
        }
    }
}

/// Apple's shape for what a call found: nothing without return keys (`kSecReturnRef` alone sets the
/// result to `nil`, or to an empty array when more than one item was allowed), one object for limit one,
/// else an array, even for one hit.
private func deliver(_ items: [Item], returning: ReturnOptions, single: Bool,
                     to pointer: UnsafeMutablePointer<CFTypeRef?>?) {
    guard let pointer else { return }
    if returning.subtracting(.ref).isEmpty {
        if returning.contains(.ref) { pointer.pointee = single ? nil : NSArray() }
    } else if single, let item = items.first {
        pointer.pointee = object(item, returning)
    } else {
        let objects = items.map { object($0, returning) }
        pointer.pointee = objects.withUnsafeBufferPointer { NSArray(objects: $0.baseAddress, count: $0.count) }
    }
}

/// Adds one item (Apple's `SecItemAdd`).
/// - Parameters:
///   - attributes: `kSecClass`, attributes, `kSecValueData`, and optional `kSecReturn…` keys.
///   - result: receives the new item shaped by the return keys; required when a return key is set.
/// - Returns: `errSecSuccess`, or `errSecDuplicateItem`, `errSecParam`, … (see `SecCopyErrorMessageString`).
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    run { () throws(SecureStoreError) in
        var deferred: SecureStoreError?
        let (item, returning) = try SecItemDecoder.newItem(try SecItemDecoder.dictionary(attributes), deferred: &deferred)
        if !returning.isEmpty, result == nil {
            throw .param("r_Data", "A kSecReturn… key needs a result pointer.")
        }
        if let deferred { throw deferred }
        let store = try SecItemSystem.store()
        let added = try store.add(item, returning: returning)
        deliver([added], returning: returning, single: true, to: result)
    }
}

/// Finds items (Apple's `SecItemCopyMatching`).
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    run { () throws(SecureStoreError) in
        var deferred: SecureStoreError?
        var q = try SecItemDecoder.query(try SecItemDecoder.dictionary(query), call: .copy, deferred: &deferred)
        if !q.returning.isEmpty, result == nil {
            throw .param("r_Data", "A kSecReturn… key needs a result pointer.")
        }
        if let deferred { throw deferred }
        let store = try SecItemSystem.store(creating: false)
        let limit = q.limit ?? .one   // Apple's default
        q.limit = limit
        let single = limit == .one || limit == .count(1)
        // One item: the store's one-item lookup (no array of results; a backend may answer it with one probe).
        let found = single ? try store.item(matching: q).map { [$0] } ?? [] : try store.items(matching: q)
        guard !found.isEmpty else { throw .notFound() }
        deliver(found, returning: q.returning, single: single, to: result)
    }
}

/// Updates every matching item (Apple's `SecItemUpdate`).
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    run { () throws(SecureStoreError) in
        var deferred: SecureStoreError?
        let q = try SecItemDecoder.query(try SecItemDecoder.dictionary(query), call: .updateQuery, deferred: &deferred)
        let changes = try SecItemDecoder.changes(try SecItemDecoder.dictionary(attributesToUpdate), deferred: &deferred)
        if let deferred { throw deferred }
        try SecItemSystem.store(creating: false).update(q, with: changes)
    }
}

/// Deletes every matching item (Apple's `SecItemDelete`).
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    run { () throws(SecureStoreError) in
        var deferred: SecureStoreError?
        let q = try SecItemDecoder.query(try SecItemDecoder.dictionary(query), call: .delete, deferred: &deferred)
        if let deferred { throw deferred }
        try SecItemSystem.store(creating: false).delete(q)
    }
}

/// Apple's text for a status, followed by the reason the last call that returned it gave (never a secret).
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    let base = statusMessages[status] ?? "OSStatus \(status)."
    guard status != errSecSuccess, let reason = lastReasons.withLock({ $0[status] }) else { return base as NSString }
    return "\(base) \(reason)" as NSString
}
