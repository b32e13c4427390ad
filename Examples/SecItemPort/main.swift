// The seeds' Objective-C keychain wrapper (HPKeychain / KeychainTool), ported to Swift exactly as it would be
// written for iOS. Only the import differs: `import SecItem` instead of `import Security`.
import Foundation
import SecItem

enum HPKeychain {
    static func query(_ service: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword,
         kSecAttrService as String: service,
         kSecAttrAccount as String: service,
         kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock]
    }

    static func save(_ service: String, data: Any) {
        var keychainQuery = query(service)
        SecItemDelete(keychainQuery as CFDictionary)
        guard let archived = try? NSKeyedArchiver.archivedData(withRootObject: data, requiringSecureCoding: false) else { return }
        keychainQuery[kSecValueData as String] = archived
        let status = SecItemAdd(keychainQuery as CFDictionary, nil)
        if status != errSecSuccess {
            print("save: SecItemAdd failed: \(SecCopyErrorMessageString(status, nil) ?? "")")
        }
    }

    static func load(_ service: String) -> Any? {
        var keychainQuery = query(service)
        keychainQuery[kSecReturnData as String] = kCFBooleanTrue
        keychainQuery[kSecMatchLimit as String] = kSecMatchLimitOne
        var keyData: CFTypeRef?
        guard SecItemCopyMatching(keychainQuery as CFDictionary, &keyData) == noErr, let data = keyData as? Data else { return nil }
        return try? NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(data)
    }

    static func delete(_ service: String) {
        SecItemDelete(query(service) as CFDictionary)
    }

    static func clearKeychain() {
        for secClass in [kSecClassGenericPassword, kSecClassInternetPassword, kSecClassCertificate, kSecClassKey, kSecClassIdentity] {
            let spec: [String: Any] = [kSecClass as String: secClass, kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]
            SecItemDelete(spec as CFDictionary)
        }
    }
}

let KEY_USERNAME_PASSWORD = "com.company.app.usernamepassword"
let pairs: NSMutableDictionary = ["com.company.app.username": "alice", "com.company.app.password": "correct horse"]
HPKeychain.save(KEY_USERNAME_PASSWORD, data: pairs)
let loaded = HPKeychain.load(KEY_USERNAME_PASSWORD) as? NSDictionary
print("loaded username: \(loaded?["com.company.app.username"] as? String ?? "<missing>")")

var result: AnyObject?
let all: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                          kSecReturnAttributes as String: true]
if SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess, let items = result as? [[String: Any]] {
    print("items in the keychain: \(items.count) (services: \(items.compactMap { $0[kSecAttrService as String] as? String }))")
}
HPKeychain.delete(KEY_USERNAME_PASSWORD)
print("after delete: \(HPKeychain.load(KEY_USERNAME_PASSWORD) == nil ? "gone" : "still there")")
HPKeychain.clearKeychain()
print("keychain cleared")
