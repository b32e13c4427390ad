// Keychain code written the way iOS and macOS code is written, in the shapes the popular open-source
// wrappers use: [String: AnyObject] and [String: Any] queries cast `as CFDictionary`, kSec constants used
// as AnyObject and as String, results read `as? Data`, `as! CFData as Data`, `as? [[String: Any]]` and
// through NSDictionary, SecAccessControl and SecRandomCopyBytes. Only the import differs from Apple code:
// `import SecItem` instead of `import Security`. This file is compiled in both the Swift 5 and the Swift 6
// language modes (SecItemPortingTests and SecItemPortingSwift5Tests share it).
import Foundation
import SecItem

/// A small keychain wrapper: strings and data by key, in one service, optionally in an access group.
final class AppleStyleKeychain {
    let service: String
    let accessGroup: String?
    var synchronizable = false
    var accessibility: CFString = kSecAttrAccessibleAfterFirstUnlock
    var accessControl: SecAccessControl?
    private(set) var lastStatus: OSStatus = errSecSuccess

    init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    /// The base query, in the `[String: AnyObject]` style.
    private func baseQuery(forKey key: String? = nil) -> [String: AnyObject] {
        var query: [String: AnyObject] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service as AnyObject,
        ]
        if let key { query[kSecAttrAccount as String] = key as AnyObject }
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup as AnyObject }
        return query
    }

    @discardableResult
    func set(_ value: Data, forKey key: String) -> Bool {
        var query = baseQuery(forKey: key)
        SecItemDelete(query as CFDictionary)
        query[kSecValueData as String] = value as AnyObject
        if let accessControl {
            query[kSecAttrAccessControl as String] = accessControl
        } else {
            query[kSecAttrAccessible as String] = accessibility
        }
        query[kSecAttrSynchronizable as String] = synchronizable ? kCFBooleanTrue : kCFBooleanFalse
        lastStatus = SecItemAdd(query as CFDictionary, nil)
        return lastStatus == errSecSuccess
    }

    @discardableResult
    func set(_ value: String, forKey key: String) -> Bool {
        guard let data = value.data(using: .utf8) else { return false }
        return set(data, forKey: key)
    }

    /// Reads the secret, in the `[String: Any]` style, with `kCFBooleanTrue` and `kSecMatchLimitOne`.
    func data(forKey key: String) -> Data? {
        var query: [String: Any] = baseQuery(forKey: key)
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        lastStatus = withUnsafeMutablePointer(to: &result) { SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0)) }
        guard lastStatus == noErr else { return nil }
        return result as? Data
    }

    /// Reads the secret as a string, checking the CF type first and bridging `as! CFData as Data`.
    func string(forKey key: String) -> String? {
        var query = baseQuery(forKey: key)
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: CFTypeRef?
        lastStatus = SecItemCopyMatching(query as CFDictionary, &result)
        guard lastStatus == errSecSuccess, let result, CFGetTypeID(result) == CFDataGetTypeID() else { return nil }
        let data = result as! CFData as Data
        return String(data: data, encoding: .utf8)
    }

    /// Every account of the service (attributes only), read as `[[String: Any]]`.
    func allKeys() -> [String] {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecReturnAttributes as String: true,
            kSecMatchLimit as String: kSecMatchLimitAll,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
        ]
        var result: CFTypeRef?
        lastStatus = SecItemCopyMatching(query as CFDictionary, &result)
        guard lastStatus == errSecSuccess, let items = result as? [[String: Any]] else { return [] }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
    }

    /// Attributes and data of one item, read through NSDictionary (`(result as? NSDictionary)?[kSecValueData]`).
    func item(forKey key: String) -> (attributes: NSDictionary, data: Data?)? {
        var query = baseQuery(forKey: key)
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        lastStatus = SecItemCopyMatching(query as CFDictionary, &result)
        guard lastStatus == errSecSuccess, let dict = result as? NSDictionary else { return nil }
        return (dict, (result as? NSDictionary)?[kSecValueData] as? Data)
    }

    /// Changes the secret, with a `[CFString: Any]` dictionary of changes.
    @discardableResult
    func update(_ value: Data, forKey key: String) -> Bool {
        let changes: [CFString: Any] = [kSecValueData: value]
        lastStatus = SecItemUpdate(baseQuery(forKey: key) as CFDictionary, changes as CFDictionary)
        return lastStatus == errSecSuccess
    }

    @discardableResult
    func removeObject(forKey key: String) -> Bool {
        lastStatus = SecItemDelete(baseQuery(forKey: key) as CFDictionary)
        return lastStatus == errSecSuccess || lastStatus == errSecItemNotFound
    }

    /// Removes every item of the service. `#if os(iOS)` is false on Linux, so the macOS branch runs, with
    /// kSecMatchLimitAll as the macOS file keychain wants it.
    @discardableResult
    func removeAll() -> Bool {
        var query = baseQuery()
        #if os(iOS) || os(tvOS) || os(watchOS)
        #else
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        #endif
        query[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        lastStatus = SecItemDelete(query as CFDictionary)
        return lastStatus == errSecSuccess || lastStatus == errSecItemNotFound
    }

    /// Deletes every item of one class: the class passed as `AnyObject` (`kSecClassGenericPassword as AnyObject`).
    static func deleteAll(_ secClass: AnyObject) -> OSStatus {
        let query: NSMutableDictionary = [kSecClass: secClass, kSecAttrSynchronizable: kSecAttrSynchronizableAny]
        return SecItemDelete(query)
    }

    /// Random bytes for a fresh key, the two common ways.
    static func randomKey(count: Int = 32) -> Data? {
        var bytes = [UInt8](repeating: 0, count: count)
        guard SecRandomCopyBytes(kSecRandomDefault, bytes.count, &bytes) == errSecSuccess else { return nil }
        var data = Data(count: count)
        let status = data.withUnsafeMutableBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return errSecParam }
            return SecRandomCopyBytes(kSecRandomDefault, count, base)
        }
        guard status == errSecSuccess else { return nil }
        return Data(zip(bytes, data).map { $0 ^ $1 })
    }

    /// An access control object the way wrappers make one, with the CFError read when it fails.
    static func makeAccessControl(_ protection: CFString, _ flags: SecAccessControlCreateFlags) -> (SecAccessControl?, (any Error)?) {
        var error: Unmanaged<CFError>?
        guard let control = SecAccessControlCreateWithFlags(kCFAllocatorDefault, protection, flags, &error) else {
            return (nil, error?.takeRetainedValue() as (any Error)?)
        }
        return (control, nil)
    }

    /// A status as text (`SecCopyErrorMessageString` returns a CFString).
    static func message(_ status: OSStatus) -> String {
        (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
    }
}
