// Written the way an iOS developer writes Keychain code: only the import differs (`import Security` on Apple
// platforms). The wrapper is a Swift port of the seeds' HPKeychain / KeychainTool (save / load / delete by
// service with an NSKeyedArchiver-archived dictionary, and the "clear the whole keychain" loop).
import Foundation
import SecItem
import Testing

enum KeychainWrapper {
    static func baseQuery(_ service: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword,
         kSecAttrService as String: service,
         kSecAttrAccount as String: service,
         kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock]
    }

    @discardableResult
    static func save(_ service: String, data: Any) -> OSStatus {
        var query = baseQuery(service)
        SecItemDelete(query as CFDictionary)
        guard let archived = try? NSKeyedArchiver.archivedData(withRootObject: data, requiringSecureCoding: false) else {
            return errSecParam
        }
        query[kSecValueData as String] = archived
        return SecItemAdd(query as CFDictionary, nil)
    }

    static func load(_ service: String) -> Any? {
        var query = baseQuery(service)
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var keyData: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &keyData) == noErr, let data = keyData as? Data else { return nil }
        return try? NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(data)
    }

    @discardableResult
    static func delete(_ service: String) -> OSStatus {
        SecItemDelete(baseQuery(service) as CFDictionary)
    }

    /// The seeds' clearKeyChain: delete every class, including synchronizable items.
    static func clearKeychain() -> Bool {
        let classes = [kSecClassGenericPassword, kSecClassInternetPassword, kSecClassCertificate, kSecClassKey, kSecClassIdentity]
        for secClass in classes {
            let query: [String: Any] = [kSecClass as String: secClass, kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]
            let status = SecItemDelete(query as CFDictionary)
            if status != errSecSuccess && status != errSecItemNotFound { return false }
        }
        return true
    }

    static func allAccounts(_ service: String) -> [[String: Any]] {
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                    kSecAttrService as String: service,
                                    kSecMatchLimit as String: kSecMatchLimitAll,
                                    kSecReturnAttributes as String: true]
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess, let items = result as? [[String: Any]] else { return [] }
        return items
    }
}

extension SecItemTests {
    @Test("the seeds' wrapper: save, load, overwrite, delete", arguments: Stores.all)
    func seedsWrapper(store: Stores.Kind) throws {
        try Stores.use(store)
        let KEY_USERNAME_PASSWORD = "com.company.app.usernamepassword"
        let pairs: NSMutableDictionary = ["com.company.app.username": "alice", "com.company.app.password": "pässwörd"]
        #expect(KeychainWrapper.save(KEY_USERNAME_PASSWORD, data: pairs) == errSecSuccess)
        let loaded = KeychainWrapper.load(KEY_USERNAME_PASSWORD) as? NSDictionary
        #expect(loaded?["com.company.app.username"] as? String == "alice")
        #expect(loaded?["com.company.app.password"] as? String == "pässwörd")

        #expect(KeychainWrapper.save(KEY_USERNAME_PASSWORD, data: "second" as NSString) == errSecSuccess, "save overwrites")
        #expect(KeychainWrapper.load(KEY_USERNAME_PASSWORD) as? String == "second")

        #expect(KeychainWrapper.delete(KEY_USERNAME_PASSWORD) == errSecSuccess)
        #expect(KeychainWrapper.load(KEY_USERNAME_PASSWORD) == nil)
        #expect(KeychainWrapper.delete(KEY_USERNAME_PASSWORD) == errSecItemNotFound)
    }

    @Test("clear the whole keychain to simulate a fresh install", arguments: Stores.all)
    func clearWholeKeychain(store: Stores.Kind) throws {
        try Stores.use(store)
        KeychainWrapper.save("svc.one", data: "a" as NSString)
        KeychainWrapper.save("svc.two", data: "b" as NSString)
        let inet: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                                   kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                                   kSecAttrSynchronizable as String: kCFBooleanTrue as Any, kSecValueData as String: Data("pw".utf8)]
        #expect(SecItemAdd(inet as CFDictionary, nil) == errSecSuccess)
        let key: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Data("com.example.k".utf8),
                                  kSecAttrKeyType as String: kSecAttrKeyTypeEC, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
                                  kSecValueData as String: Data(repeating: 1, count: 32)]
        #expect(SecItemAdd(key as CFDictionary, nil) == errSecSuccess)
        #expect(KeychainWrapper.clearKeychain())
        for secClass in [kSecClassGenericPassword, kSecClassInternetPassword, kSecClassKey] {
            let query: [String: Any] = [kSecClass as String: secClass, kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecItemNotFound)
        }
    }

    @Test("reading with kSecMatchLimitAll + kSecReturnAttributes", arguments: Stores.all)
    func readAllAttributes(store: Stores.Kind) throws {
        try Stores.use(store)
        for account in ["alice", "bob", "carol"] {
            let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                                       kSecAttrAccount as String: account, kSecAttrLabel as String: "Mail (\(account))",
                                       kSecValueData as String: Data(account.utf8)]
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
        }
        let items = KeychainWrapper.allAccounts("mail")
        #expect(items.compactMap { $0[kSecAttrAccount as String] as? String } == ["alice", "bob", "carol"])
        #expect(items.first?[kSecAttrLabel as String] as? String == "Mail (alice)")
        #expect(items.first?[kSecClass as String] as? String == kSecClassGenericPassword as String)
        #expect(items.first?[kSecAttrCreationDate as String] is Date)
        #expect(items.first?[kSecValueData as String] == nil, "attributes only: no secret")

        // Data and attributes together: one dictionary per item.
        var result: CFTypeRef?
        let both: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                                   kSecAttrAccount as String: "bob", kSecReturnData as String: true,
                                   kSecReturnAttributes as String: true, kSecReturnPersistentRef as String: true]
        #expect(SecItemCopyMatching(both as CFDictionary, &result) == errSecSuccess)
        let dict = result as? [String: Any]
        #expect(dict?[kSecValueData as String] as? Data == Data("bob".utf8))
        let ref = dict?[kSecValuePersistentRef as String] as? Data
        #expect(ref != nil)

        // By persistent reference alone.
        var byRef: CFTypeRef?
        let refQuery: [String: Any] = [kSecValuePersistentRef as String: ref ?? Data(), kSecReturnData as String: true]
        #expect(SecItemCopyMatching(refQuery as CFDictionary, &byRef) == errSecSuccess)
        #expect(byRef as? Data == Data("bob".utf8))

        // Update and the duplicate rule.
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                                    kSecAttrAccount as String: "alice"]
        #expect(SecItemUpdate(query as CFDictionary, [kSecValueData as String: Data("new".utf8)] as CFDictionary) == errSecSuccess)
        #expect(SecItemUpdate(query as CFDictionary, [kSecAttrAccount as String: "bob"] as CFDictionary) == errSecDuplicateItem)
        #expect(SecItemAdd(query as CFDictionary, nil) == errSecDuplicateItem)
        let message = SecCopyErrorMessageString(errSecDuplicateItem, nil) ?? ""
        #expect(message.contains("already exists"))
    }
}
