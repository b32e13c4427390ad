// Apple-style Keychain code against every store: the wrapper of AppleStyleKeychain.swift, every bridging
// pattern of Core Foundation names, the access-control, random and error functions, and the macOS dialect.
// Compiled in the Swift 5 and Swift 6 language modes.
import Foundation
import SecItem
import Testing

private func genericItem(_ service: String, _ account: String, _ secret: String) -> [String: Any] {
    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
     kSecAttrAccount as String: account, kSecValueData as String: Data(secret.utf8)]
}

private func secret(_ service: String, _ account: String) -> Data? {
    let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecAttrAccount as String: account, kSecReturnData as String: true]
    var result: CFTypeRef?
    guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
    return result as? Data
}

private func count(_ service: String) -> Int {
    let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                                kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]
    var result: CFTypeRef?
    guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return 0 }
    return (result as? [[String: Any]])?.count ?? -1
}

@Suite("SecItem porting", .serialized)
struct PortingTests {
    @Test("the Secret Service store is included, or skipped with the reason printed")
    func secretServiceAvailability() {
        if !PortStore.hasBus { print("[SecItem porting] \(PortStore.skipReason)") }
        #expect(PortStore.available.contains(.memory) && PortStore.available.contains(.sqlite))
    }

    @Test("a wrapper in the popular style: set, get, update, list, remove, removeAll", arguments: PortStore.available)
    func wrapper(store: PortStore) throws {
        try store.run {
            let keychain = AppleStyleKeychain(service: "com.example.port")
            #expect(keychain.set("s3cret", forKey: "token"))
            #expect(keychain.set(Data([0, 1, 2, 255]), forKey: "blob"))
            #expect(keychain.string(forKey: "token") == "s3cret")
            #expect(keychain.data(forKey: "blob") == Data([0, 1, 2, 255]))
            #expect(keychain.set("again", forKey: "token"), "set replaces")
            #expect(keychain.string(forKey: "token") == "again")
            #expect(keychain.update(Data("third".utf8), forKey: "token"))
            #expect(keychain.data(forKey: "token") == Data("third".utf8))
            #expect(keychain.allKeys() == ["blob", "token"])

            let item = try #require(keychain.item(forKey: "token"))
            #expect(item.data == Data("third".utf8))
            #expect(item.attributes[kSecAttrAccount] as? String == "token")
            #expect(item.attributes[kSecAttrService as String] as? String == "com.example.port")
            #expect(item.attributes[kSecAttrAccessible] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
            #expect(item.attributes[kSecAttrCreationDate] is Date)
            #expect(item.attributes[kSecAttrSynchronizable] as? Bool == false)

            #expect(keychain.removeObject(forKey: "blob"))
            #expect(keychain.data(forKey: "blob") == nil)
            #expect(keychain.lastStatus == errSecItemNotFound)
            let other = AppleStyleKeychain(service: "com.example.other")
            #expect(other.set("kept", forKey: "k"))
            #expect(keychain.set("x", forKey: "a") && keychain.set("y", forKey: "b"))
            #expect(keychain.removeAll(), "the macOS branch: kSecMatchLimitAll on delete")
            #expect(keychain.allKeys().isEmpty)
            #expect(other.string(forKey: "k") == "kept", "removeAll stays in its service")
            #expect(AppleStyleKeychain.deleteAll(kSecClassGenericPassword as AnyObject) == errSecSuccess)
            #expect(other.allKeys().isEmpty)
        }
    }

    @Test("every dictionary form converts `as CFDictionary` and reads back", arguments: PortStore.available)
    func dictionaryForms(store: PortStore) throws {
        try store.run {
            let stringAny: [String: Any] = genericItem("forms", "stringAny", "1")
            #expect(SecItemAdd(stringAny as CFDictionary, nil) == errSecSuccess)

            let stringAnyObject: [String: AnyObject] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "forms" as AnyObject,
                kSecAttrAccount as String: "stringAnyObject" as AnyObject, kSecValueData as String: Data("2".utf8) as AnyObject,
                kSecAttrIsInvisible as String: true as AnyObject, kSecAttrCreator as String: 42 as AnyObject]
            #expect(SecItemAdd(stringAnyObject as CFDictionary, nil) == errSecSuccess)

            let cfStringKeyed: [CFString: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: "forms",
                                                   kSecAttrAccount: "cfString", kSecValueData: Data("3".utf8)]
            #expect(SecItemAdd(cfStringKeyed as CFDictionary, nil) == errSecSuccess)

            let literal = [kSecClass: kSecClassGenericPassword, kSecAttrService: "forms", kSecAttrAccount: "literal",
                           kSecValueData: Data("4".utf8)] as CFDictionary
            #expect(SecItemAdd(literal, nil) == errSecSuccess)

            let optionalKeys: [String?: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "forms",
                                                kSecAttrAccount as String: "optionalKeys", kSecValueData as String: Data("5".utf8)]
            #expect(SecItemAdd(optionalKeys as CFDictionary, nil) == errSecSuccess)

            let anyHashable: [AnyHashable: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService as String: "forms",
                                                   kSecAttrAccount: "anyHashable", kSecValueData: Data("6".utf8) as NSData]
            #expect(SecItemAdd(anyHashable as CFDictionary, nil) == errSecSuccess)

            let nsDictionary: NSDictionary = [kSecClass: kSecClassGenericPassword, kSecAttrService: "forms",
                                              kSecAttrAccount: "nsDictionary", kSecValueData: NSData(data: Data("7".utf8))]
            #expect(SecItemAdd(nsDictionary, nil) == errSecSuccess)

            let mutable = NSMutableDictionary()
            mutable[kSecClass] = kSecClassGenericPassword
            mutable[kSecAttrService] = "forms" as NSString
            mutable[kSecAttrAccount as String] = "mutable"
            mutable.setObject(Data("8".utf8), forKey: kSecValueData)
            mutable[kSecAttrSynchronizable] = kCFBooleanFalse
            #expect(SecItemAdd(mutable, nil) == errSecSuccess)

            for (account, value) in [("stringAny", "1"), ("stringAnyObject", "2"), ("cfString", "3"), ("literal", "4"),
                                     ("optionalKeys", "5"), ("anyHashable", "6"), ("nsDictionary", "7"), ("mutable", "8")] {
                #expect(secret("forms", account) == Data(value.utf8), "\(account)")
            }
            #expect(count("forms") == 8)

            // Attribute values in their Foundation forms are the same values.
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "stringAnyObject" as NSString,
                                        kSecAttrIsInvisible as String: NSNumber(value: true), kSecAttrCreator as String: NSNumber(value: 42),
                                        kSecReturnAttributes as String: kCFBooleanTrue as Any]
            var result: AnyObject?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecAttrCreator as String] as? Int == 42)
            #expect(attributes[kSecAttrIsInvisible as String] as? Bool == true)
            #expect(attributes[kSecClass as String] as? String == kSecClassGenericPassword as String)

            // A key that is not a string is a parameter error, not a crash.
            let numberKeyed: [AnyHashable: Any] = [kSecClass: kSecClassGenericPassword, 7: "x"]
            #expect(SecItemAdd(numberKeyed as CFDictionary, nil) == errSecParam)
            let nilKeyed: [String?: Any] = [kSecClass as String: kSecClassGenericPassword, nil: "x"]
            #expect(SecItemCopyMatching(nilKeyed as CFDictionary, nil) == errSecParam)
        }
    }

    @Test("results read every way iOS code reads them", arguments: PortStore.available)
    func resultForms(store: PortStore) throws {
        try store.run {
            #expect(SecItemAdd(genericItem("results", "a", "alpha") as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(genericItem("results", "b", "beta") as CFDictionary, nil) == errSecSuccess)

            var result: CFTypeRef?
            let one: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a",
                                      kSecReturnData as String: kCFBooleanTrue!]
            #expect(SecItemCopyMatching(one as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("alpha".utf8))
            #expect(result as? NSData == NSData(data: Data("alpha".utf8)))
            let cfData = result as! CFData
            #expect(cfData as Data == Data("alpha".utf8))
            #expect(CFGetTypeID(result) == CFDataGetTypeID())
            #expect(CFGetTypeID(result) != CFDictionaryGetTypeID())

            let both: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "b",
                                       kSecReturnData as String: true, kSecReturnAttributes as String: true]
            result = nil
            #expect(SecItemCopyMatching(both as CFDictionary, &result) == errSecSuccess)
            #expect(CFGetTypeID(result) == CFDictionaryGetTypeID())
            #expect((result as? NSDictionary)?[kSecValueData] as? Data == Data("beta".utf8))
            #expect((result as? [String: Any])?[kSecValueData as String] as? Data == Data("beta".utf8))
            #expect((result as? [String: AnyObject])?[kSecAttrAccount as String] as? String == "b")
            #expect((result as? [AnyHashable: Any])?[kSecAttrService as String] as? String == "results")
            let dict = result as! CFDictionary as NSDictionary
            #expect(dict[kSecAttrModificationDate] is Date)
            #expect(dict[kSecAttrModificationDate as String] is NSDate)

            let all: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "results",
                                      kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                                      kSecReturnData as String: true]
            result = nil
            #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
            #expect(CFGetTypeID(result) == CFArrayGetTypeID())
            let items = try #require(result as? [[String: Any]])
            #expect(items.compactMap { $0[kSecValueData as String] as? Data }.sorted { $0.count < $1.count }
                    == [Data("beta".utf8), Data("alpha".utf8)])
            #expect((result as? NSArray)?.count == 2)
            #expect((result as? [NSDictionary])?.first?[kSecAttrService] as? String == "results")

            // A persistent reference, read back as Data and used as a query.
            let refQuery: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a",
                                           kSecReturnPersistentRef as String: true]
            result = nil
            #expect(SecItemCopyMatching(refQuery as CFDictionary, &result) == errSecSuccess)
            let ref = try #require(result as? Data)
            result = nil
            #expect(SecItemCopyMatching([kSecValuePersistentRef: ref, kSecReturnData: true] as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("alpha".utf8))

            // kSecReturnData on SecItemAdd.
            result = nil
            var added = genericItem("results", "c", "gamma")
            added[kSecReturnAttributes as String] = kCFBooleanTrue
            #expect(SecItemAdd(added as CFDictionary, &result) == errSecSuccess)
            #expect((result as? NSDictionary)?[kSecAttrAccount] as? String == "c")
        }
    }

    @Test("kSec constants bridge to String, AnyObject and CFString, and compare as on iOS")
    func constantBridging() {
        let asString: String = kSecAttrAccessibleWhenUnlocked as String
        #expect(asString == "ak")
        #expect(String(kSecClassGenericPassword) == "genp")
        let asObject: AnyObject = kSecClassGenericPassword as AnyObject
        #expect(asObject as? String == "genp")
        let back: CFString = "genp" as CFString
        #expect(back == kSecClassGenericPassword)
        #expect(kSecAttrAccessible as NSString == "pdmn" as NSString)
        let protection: CFTypeRef = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        #expect(protection as? String == "aku")
        #expect(CFGetTypeID(kSecClass) == CFStringGetTypeID())
        #expect(CFGetTypeID(kCFBooleanTrue) == CFBooleanGetTypeID())
        #expect(CFGetTypeID(NSNumber(value: 7)) == CFNumberGetTypeID())
        #expect(CFGetTypeID(NSDate()) == CFDateGetTypeID())
        #expect(CFBooleanGetValue(kCFBooleanTrue) && !CFBooleanGetValue(kCFBooleanFalse))
        let flags: CFOptionFlags = SecAccessControlCreateFlags.userPresence.rawValue
        #expect(flags == 1)
        let index: CFIndex = 3
        #expect(index == 3)
        #expect(AppleStyleKeychain.message(errSecItemNotFound).contains("could not be found"))
        let cfMessage: CFString? = SecCopyErrorMessageString(errSecParam, nil)
        #expect((cfMessage as String?)?.isEmpty == false)
    }

    @Test("access control: the protection class is kept; constraints that need a person are refused", arguments: PortStore.available)
    func accessControl(store: PortStore) throws {
        try store.run {
            // No constraint: stored with its protection class.
            let (plain, plainError) = AppleStyleKeychain.makeAccessControl(kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [])
            #expect(plainError == nil)
            let keychain = AppleStyleKeychain(service: "acl")
            keychain.accessControl = plain
            #expect(keychain.set("guarded", forKey: "k"))
            #expect(keychain.item(forKey: "k")?.attributes[kSecAttrAccessible] as? String == "aku")
            #expect(CFGetTypeID(plain) == SecAccessControlGetTypeID())

            // A query naming the same access control finds the item; one with another class does not.
            var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "acl"]
            query[kSecAttrAccessControl as String] = plain
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess)
            query[kSecAttrAccessControl as String] = AppleStyleKeychain.makeAccessControl(kSecAttrAccessibleAlways, []).0
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecItemNotFound)

            // privateKeyUsage is not a constraint on use; it is accepted.
            keychain.accessControl = AppleStyleKeychain.makeAccessControl(kSecAttrAccessibleAfterFirstUnlock, .privateKeyUsage).0
            #expect(keychain.set("key", forKey: "pku"))

            // Constraints that need a person: created as on Apple platforms, refused by SecItemAdd, nothing stored.
            for flags: SecAccessControlCreateFlags in [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode,
                                                        .watch, .applicationPassword, [.biometryAny, .or, .devicePasscode]] {
                let (control, error) = AppleStyleKeychain.makeAccessControl(kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, flags)
                #expect(control != nil && error == nil)
                keychain.accessControl = control
                #expect(!keychain.set("never", forKey: "bio"))
                #expect(keychain.lastStatus == errSecUnimplemented)
                #expect(keychain.data(forKey: "bio") == nil && keychain.lastStatus == errSecItemNotFound)
                var search: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "acl"]
                search[kSecAttrAccessControl as String] = control
                #expect(SecItemCopyMatching(search as CFDictionary, nil) == errSecItemNotFound)
                #expect(SecItemDelete(search as CFDictionary) == errSecItemNotFound)
                let change: [String: Any] = [kSecAttrAccessControl as String: control as Any]
                #expect(SecItemUpdate([kSecClass: kSecClassGenericPassword, kSecAttrService: "acl"] as CFDictionary,
                                      change as CFDictionary) == errSecUnimplemented)
            }
            #expect(keychain.item(forKey: "k")?.attributes[kSecAttrAccessible] as? String == "aku", "unchanged")

            // An update to a plain access control changes the protection class.
            let toAfterFirstUnlock: [String: Any] = [kSecAttrAccessControl as String:
                AppleStyleKeychain.makeAccessControl(kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, []).0 as Any]
            #expect(SecItemUpdate([kSecClass: kSecClassGenericPassword, kSecAttrService: "acl", kSecAttrAccount: "k"] as CFDictionary,
                                  toAfterFirstUnlock as CFDictionary) == errSecSuccess)
            #expect(keychain.item(forKey: "k")?.attributes[kSecAttrAccessible] as? String == "cku")

            // Wrong-typed kSecAttrAccessControl: errSecParam on add, copy, update and delete.
            var wrong = genericItem("acl", "wrong", "x")
            wrong[kSecAttrAccessControl as String] = kSecAttrAccessibleWhenUnlocked
            #expect(SecItemAdd(wrong as CFDictionary, nil) == errSecParam)
            let wrongQuery: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "acl",
                                             kSecAttrAccessControl as String: "ak"]
            #expect(SecItemDelete(wrongQuery as CFDictionary) == errSecParam)
            #expect(SecItemCopyMatching(wrongQuery as CFDictionary, nil) == errSecParam)
            #expect(SecItemUpdate([kSecClass: kSecClassGenericPassword] as CFDictionary,
                                  [kSecAttrAccessControl: 5] as CFDictionary) == errSecParam)
            // errSecParam comes before any "unimplemented" decision in the same call.
            var both = genericItem("acl", "both", "x")
            both[kSecAttrAccessControl as String] = "ak"
            both[kSecUseKeychain as String] = NSObject()
            #expect(SecItemAdd(both as CFDictionary, nil) == errSecParam)
            // kSecAttrAccessControl and kSecAttrAccessible together: errSecParam.
            var exclusive = genericItem("acl", "exclusive", "x")
            exclusive[kSecAttrAccessControl as String] = plain
            exclusive[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
            #expect(SecItemAdd(exclusive as CFDictionary, nil) == errSecParam)
            #expect(keychain.allKeys() == ["k", "pku"], "no failed call stored anything")
        }
    }

    @Test("SecAccessControlCreateWithFlags: bad protection or unknown bits give nil and a CFError")
    func accessControlErrors() throws {
        let (bad, error) = AppleStyleKeychain.makeAccessControl("nope" as CFString, [])
        #expect(bad == nil)
        let cfError = try #require(error as NSError?)
        #expect(cfError.domain == "NSOSStatusErrorDomain")
        #expect(cfError.code == Int(errSecParam))
        let unknown = SecAccessControlCreateFlags(rawValue: 1 << 20)
        var raw: Unmanaged<CFError>?
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, unknown, &raw) == nil)
        let err = try #require(raw?.takeRetainedValue())
        #expect(CFErrorGetDomain(err) as String == kCFErrorDomainOSStatus as String)
        #expect(CFErrorGetCode(err) == CFIndex(errSecParam))
        #expect((CFErrorCopyDescription(err) as String).contains("SecAccessControlCreateFlags"))
        #expect((CFErrorCopyUserInfo(err) as NSDictionary)[kCFErrorDescriptionKey] != nil)
        #expect(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleAlways, .userPresence, nil) != nil)
        let made = CFErrorCreate(kCFAllocatorDefault, kCFErrorDomainOSStatus, CFIndex(errSecItemNotFound), nil)
        #expect(CFErrorGetCode(made) == -25300)
        #expect(SecAccessControlCreateFlags.companion == .watch && SecAccessControlCreateFlags(rawValue: 1 << 31) == .applicationPassword)
        let reasoned = NSError(domain: "d", code: 1, userInfo: [NSLocalizedFailureReasonErrorKey: "because"])
        #expect(CFErrorCopyFailureReason(reasoned) as String? == "because")
        #expect(CFGetTypeID(reasoned) == CFErrorGetTypeID())
        #expect(CFGetTypeID(NSNull()) == CFNullGetTypeID())
        #expect(SecAccessControlCreateWithFlags(kCFAllocatorSystemDefault, kSecAttrAccessibleAlways, [], nil) != nil)
    }

    @Test("SecRandomCopyBytes fills buffers from the system generator")
    func random() throws {
        let a = try #require(AppleStyleKeychain.randomKey())
        let b = try #require(AppleStyleKeychain.randomKey())
        #expect(a.count == 32 && b.count == 32 && a != b)
        var odd = [UInt8](repeating: 0, count: 13)
        #expect(SecRandomCopyBytes(kSecRandomDefault, odd.count, &odd) == errSecSuccess)
        var zero = [UInt8](repeating: 7, count: 1)
        #expect(SecRandomCopyBytes(kSecRandomDefault, 0, &zero) == errSecSuccess)
        #expect(zero == [7], "count 0 writes nothing")
        // 4 KiB: every byte value shows up (a stuck or short generator would not).
        var big = [UInt8](repeating: 0, count: 4096)
        #expect(SecRandomCopyBytes(nil, big.count, &big) == errSecSuccess)
        #expect(Set(big).count > 200)
        #expect(SecRandomCopyBytes(kSecRandomDefault, -1, &zero) == errSecParam)
    }

    @Test("the macOS dialect: accepted, ignored or refused as MacOSDialect.md says", arguments: PortStore.available)
    func macOSDialect(store: PortStore) throws {
        try store.run {
            for account in ["a", "b", "c"] {
                #expect(SecItemAdd(genericItem("mac", account, account) as CFDictionary, nil) == errSecSuccess)
            }
            #expect(SecItemAdd(genericItem("keep", "k", "k") as CFDictionary, nil) == errSecSuccess)

            // SecItemUpdate with kSecMatchLimitAll: every match (what update does); another limit is refused.
            let updateAll: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mac",
                                            kSecMatchLimit as String: kSecMatchLimitAll]
            #expect(SecItemUpdate(updateAll as CFDictionary, [kSecAttrLabel: "L"] as CFDictionary) == errSecSuccess)
            let labelled: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "L",
                                           kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(labelled as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [[String: Any]])?.count == 3)
            var updateOne = updateAll
            updateOne[kSecMatchLimit as String] = kSecMatchLimitOne
            #expect(SecItemUpdate(updateOne as CFDictionary, [kSecAttrLabel: "M"] as CFDictionary) == errSecParam)
            updateOne[kSecMatchLimit as String] = 2
            #expect(SecItemUpdate(updateOne as CFDictionary, [kSecAttrLabel: "M"] as CFDictionary) == errSecParam)

            // Ignored: kSecUseDataProtectionKeychain, the authentication-UI keys, the operation prompt, a context.
            var ignored: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mac",
                                          kSecAttrAccount as String: "a", kSecReturnData as String: true]
            ignored[kSecUseDataProtectionKeychain as String] = true
            ignored[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUISkip
            ignored[kSecUseOperationPrompt as String] = "Unlock the token"
            ignored[kSecUseNoAuthenticationUI as String] = kCFBooleanTrue
            ignored[kSecUseAuthenticationContext as String] = NSObject()
            result = nil
            #expect(SecItemCopyMatching(ignored as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("a".utf8))
            ignored[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
            #expect(SecItemCopyMatching(ignored as CFDictionary, &result) == errSecSuccess)

            // kSecAttrSynchronizableAny in an add: the attribute is left unset (not synchronizable).
            var anySync = genericItem("mac", "anySync", "s")
            anySync[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
            anySync[kSecUseDataProtectionKeychain as String] = kCFBooleanTrue
            #expect(SecItemAdd(anySync as CFDictionary, nil) == errSecSuccess)
            let synced: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "anySync",
                                         kSecAttrSynchronizable as String: true]
            #expect(SecItemCopyMatching(synced as CFDictionary, nil) == errSecItemNotFound)

            // kSecReturnRef: accepted; there are no item objects on Linux, so alone it gives no object.
            var refOnly: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a",
                                          kSecReturnRef as String: true]
            result = NSString(string: "untouched")
            #expect(SecItemCopyMatching(refOnly as CFDictionary, &result) == errSecSuccess)
            #expect(result == nil)
            refOnly[kSecReturnData as String] = true
            #expect(SecItemCopyMatching(refOnly as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("a".utf8), "with another return key, kSecReturnRef is ignored")

            // Refused: a macOS file keychain (kSecUseKeychain, kSecMatchSearchList), a SecAccess ACL.
            var withKeychain = genericItem("mac", "kc", "x")
            withKeychain[kSecUseKeychain as String] = NSObject()
            #expect(SecItemAdd(withKeychain as CFDictionary, nil) == errSecNoSuchKeychain)
            let searchList: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecMatchSearchList as String: [NSObject()]]
            #expect(SecItemCopyMatching(searchList as CFDictionary, nil) == errSecNoSuchKeychain)
            #expect(SecItemDelete(searchList as CFDictionary) == errSecNoSuchKeychain)
            var withAccess = genericItem("mac", "acls", "x")
            withAccess[kSecAttrAccess as String] = NSObject()
            #expect(SecItemAdd(withAccess as CFDictionary, nil) == errSecUnimplemented)
            #expect(secret("mac", "kc") == nil && secret("mac", "acls") == nil, "refused adds store nothing")

            // kSecAttrAccessGroupToken: token items; there are none here.
            let tokens: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: kSecAttrAccessGroupToken,
                                         kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true]
            #expect(SecItemCopyMatching(tokens as CFDictionary, &result) == errSecItemNotFound)

            // SecItemDelete with kSecMatchLimitAll: every match; other limits are refused.
            var deleteOne: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mac",
                                            kSecMatchLimit as String: kSecMatchLimitOne]
            #expect(SecItemDelete(deleteOne as CFDictionary) == errSecParam)
            #expect(count("mac") == 4)
            deleteOne[kSecMatchLimit as String] = kSecMatchLimitAll
            #expect(SecItemDelete(deleteOne as CFDictionary) == errSecSuccess)
            #expect(count("mac") == 0)
            #expect(SecItemDelete(deleteOne as CFDictionary) == errSecItemNotFound)
            #expect(secret("keep", "k") == Data("k".utf8))
        }
    }

    @Test("app identity: an Info.plist beside the executable gives Bundle.main a bundle identifier; the store's first access group is the default")
    func appIdentity() throws {
        // Foundation on Linux reads a bundle's Info.plist from the executable's folder (Bundle.main) or from
        // the folder given to Bundle(path:): the same lookup.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("secitem-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let plist: [String: Any] = ["CFBundleIdentifier": "com.example.linuxapp", "CFBundleName": "LinuxApp"]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        try data.write(to: dir.appendingPathComponent("Info.plist"))
        let bundle = try #require(Bundle(path: dir.path))
        let bundleID = try #require(bundle.bundleIdentifier)
        #expect(bundleID == "com.example.linuxapp")

        // The default access group: the store's first group (iOS: the first keychain-access-groups entry).
        for store in PortStore.available {
            try store.run(accessGroups: ["TEAMID.\(bundleID)", "TEAMID.shared"]) {
                #expect(SecItemAdd(genericItem(bundleID, "user", "pw") as CFDictionary, nil) == errSecSuccess)
                let keychain = AppleStyleKeychain(service: bundleID)
                #expect(keychain.item(forKey: "user")?.attributes[kSecAttrAccessGroup] as? String == "TEAMID.com.example.linuxapp")
                let shared = AppleStyleKeychain(service: bundleID, accessGroup: "TEAMID.shared")
                #expect(shared.set("s", forKey: "other"))
                #expect(shared.item(forKey: "other")?.attributes[kSecAttrAccessGroup] as? String == "TEAMID.shared")
                #expect(AppleStyleKeychain(service: bundleID, accessGroup: "TEAMID.foreign").set("x", forKey: "no") == false)
            }
        }
    }

    @Test("every declared constant and status code has Apple's value")
    func appleValues() {
        for entry in AppleTable.strings {
            #expect(entry.declared as String == entry.apple, "\(entry.name)")
        }
        for entry in AppleTable.statuses {
            #expect(entry.declared == entry.apple, "\(entry.name)")
        }
        #expect(AppleTable.strings.count >= 160 && AppleTable.statuses.count >= 380)
        // SecAccessControl.h's SecAccessControlCreateFlags bits.
        let flags: [(SecAccessControlCreateFlags, CFOptionFlags)] = [
            (.userPresence, 1 << 0), (.biometryAny, 1 << 1), (.biometryCurrentSet, 1 << 3), (.devicePasscode, 1 << 4),
            (.watch, 1 << 5), (.companion, 1 << 5), (.or, 1 << 14), (.and, 1 << 15), (.privateKeyUsage, 1 << 30),
            (.applicationPassword, 1 << 31)]
        for (flag, bits) in flags { #expect(flag.rawValue == bits) }
        #expect(kCFErrorDomainOSStatus as String == "NSOSStatusErrorDomain")
        #expect(noErr == 0)
        // Every status Apple documents a text for has that text.
        #expect(AppleStyleKeychain.message(errSecInternalComponent).isEmpty == false)
        #expect(AppleStyleKeychain.message(errSecInteractionNotAllowed).hasPrefix("User interaction is not allowed."))
        #expect(AppleStyleKeychain.message(errSecDecode).hasPrefix("Unable to decode the provided data."))
    }
}
