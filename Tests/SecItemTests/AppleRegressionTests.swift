// Apple's own SecItem regression expectations (Security project: si-00-find-nothing, si-10-find-internet,
// si-11-update-data, si-12-item-stress, si-80-empty-data, KeychainAPITests), restated in Swift against this
// module. Only expectations that need no SPI, no certificates or keys made by Security.framework, and no
// device features are held; each one is counted, and the suite reports how many were met.
import Foundation
import Testing
import SecureStoreCore
@testable import SecItem

/// The expectations of one Apple test, counted one by one like Apple's `ok`/`is_status`.
struct Ledger: CustomStringConvertible {
    let test: String
    private(set) var met = 0
    private(set) var missed: [String] = []

    init(_ test: String) { self.test = test }

    mutating func status(_ got: OSStatus, _ want: OSStatus, _ what: String) {
        check(got == want, "\(what): expected \(want), got \(got)")
    }

    mutating func check(_ ok: Bool, _ what: String) {
        if ok { met += 1 } else { missed.append(what) }
    }

    var description: String { "\(test): \(met) of \(met + missed.count) met" + (missed.isEmpty ? "" : "; missed: \(missed)") }
}

private func add(_ item: [String: Any], _ result: UnsafeMutablePointer<CFTypeRef?>? = nil) -> OSStatus {
    SecItemAdd(item as CFDictionary, result)
}

private func copy(_ query: [String: Any]) -> (OSStatus, CFTypeRef?) {
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    return (status, result)
}

private func fourCharCode(_ s: String) -> Int {
    s.utf8.reduce(0) { $0 << 8 | Int($1) }
}

extension SecItemTests {
    @Suite("Apple regression expectations")
    struct AppleRegressions {
        /// Every ledger is printed; the test fails on the first missed expectation of any.
        private func settle(_ ledger: Ledger) {
            print("[apple-regressions] \(ledger)")
            #expect(ledger.missed.isEmpty, "\(ledger)")
        }

        @Test("si-00-find-nothing: a query that matches nothing", arguments: Stores.all)
        func findNothing(store: Stores.Kind) throws {
            try Stores.use(store)
            var l = Ledger("si-00-find-nothing")
            let (status, result) = copy([kSecClass as String: kSecClassInternetPassword])
            l.status(status, errSecItemNotFound, "find nothing")
            l.check(result == nil, "results still NULL")
            settle(l)
        }

        @Test("si-10-find-internet: add, duplicate, find by returned attributes, update, delete", arguments: Stores.all)
        func findInternet(store: Stores.Kind) throws {
            try Stores.use(store)
            var l = Ledger("si-10-find-internet")
            let pwdata = Data("test".utf8)
            let query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "members.spamcop.net",
                kSecAttrAccount as String: "smith", kSecAttrPort as String: 80 as NSNumber,
                kSecAttrProtocol as String: "http", kSecAttrAuthenticationType as String: "dflt",
            ]
            var item = query
            item[kSecValueData as String] = pwdata
            l.status(add(item), errSecSuccess, "add internet password")
            l.status(add(item), errSecDuplicateItem, "add internet password again")
            l.status(copy(query).0, errSecSuccess, "find internet password")

            var query2 = query
            query2[kSecReturnAttributes as String] = true
            query2[kSecMatchLimit as String] = kSecMatchLimitOne
            let (found, attributes) = copy(query2)
            l.status(found, errSecSuccess, "find internet password, return attributes")
            var byAttributes = (attributes as? [String: Any]) ?? [:]
            byAttributes.removeValue(forKey: "sha1")
            byAttributes[kSecClass as String] = kSecClassInternetPassword
            byAttributes[kSecReturnData as String] = true
            let (foundAgain, data) = copy(byAttributes)
            l.status(foundAgain, errSecSuccess, "find internet password using returned attributes")
            l.check(data as? Data == pwdata, "retrieved data correctly")

            let changes: [String: Any] = [kSecAttrServer as String: "www.spamcop.net"]
            l.status(SecItemUpdate(query as CFDictionary, changes as CFDictionary), errSecSuccess, "update internet password")
            l.status(SecItemUpdate(query as CFDictionary, changes as CFDictionary), errSecItemNotFound,
                     "update non-existing internet password again")
            l.status(SecItemDelete(query as CFDictionary), errSecItemNotFound, "delete non existing internet password")
            l.status(add(item), errSecSuccess, "add unmodified password")
            l.status(SecItemDelete(query as CFDictionary), errSecSuccess, "delete internet password")
            l.status(add(item), errSecSuccess, "add unmodified password")
            l.status(SecItemUpdate(query as CFDictionary, changes as CFDictionary), errSecDuplicateItem,
                     "update internet password causing dupe")
            l.status(SecItemDelete(query as CFDictionary), errSecSuccess, "delete internet password")
            let changedItem: [String: Any] = [kSecAttrServer as String: "www.spamcop.net", kSecClass as String: kSecClassInternetPassword]
            l.status(SecItemDelete(changedItem as CFDictionary), errSecSuccess, "delete changed internet password")
            settle(l)
        }

        @Test("si-11-update-data: the secret is updated; NULL or string data is errSecParam", arguments: Stores.all)
        func updateData(store: Stores.Kind) throws {
            try Stores.use(store)
            var l = Ledger("si-11-update-data")
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "dankeen",
                                        kSecAttrService as String: "iTools"]
            var item = query
            item[kSecValueData as String] = Data("test".utf8)
            l.status(add(item), errSecSuccess, "add generic password")
            l.status(copy(query).0, errSecSuccess, "find generic password")
            var changes: [String: Any] = [kSecValueData as String: Data("different password data this time".utf8)]
            l.status(SecItemUpdate(query as CFDictionary, changes as CFDictionary), errSecSuccess, "update generic password")
            changes[kSecValueData as String] = Optional<Data>.none as Any
            l.status(SecItemUpdate(query as CFDictionary, changes as CFDictionary), errSecParam, "update NULL data")
            changes[kSecValueData as String] = "bogus"
            l.status(SecItemUpdate(query as CFDictionary, changes as CFDictionary), errSecParam, "update string data")
            l.status(SecItemDelete(query as CFDictionary), errSecSuccess, "delete generic password")
            settle(l)
        }

        /// si-12-item-stress without its SPI (`kSecUseTombstones`, `kSecAttrTombstone`): for internet passwords,
        /// generic passwords and certificates, every primary-key attribute set the way the test sets it
        /// (numbers as CFNumbers, so protocol and authentication type are numbers too), added and deleted as
        /// a synchronizable and as a local item.
        @Test("si-12-item-stress: numeric protocol, authentication type and port, added and deleted", arguments: Stores.all)
        func itemStress(store: Stores.Kind) throws {
            try Stores.use(store)
            var l = Ledger("si-12-item-stress")
            // num % 4 == 2 is a key item whose kSecAttrKeyClass is the text "string-2": Apple's number attribute
            // keeps such text, this module refuses it (errSecParam; see AppleRegressionDecisions.md).
            for num in 0..<8 where num % 4 != 2 {
                var item: [String: Any] = [:]
                let number = num as NSNumber, text = "string-\(num)", data = Data("data-\(num)".utf8)
                switch num % 4 {
                case 0:
                    item = [kSecClass as String: kSecClassInternetPassword, kSecAttrAccount as String: text,
                            kSecAttrSecurityDomain as String: text, kSecAttrServer as String: text,
                            kSecAttrProtocol as String: number, kSecAttrAuthenticationType as String: number,
                            kSecAttrPort as String: number, kSecAttrPath as String: text]
                case 1:
                    item = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: text,
                            kSecAttrService as String: text]
                default:
                    item = [kSecClass as String: kSecClassCertificate, kSecAttrCertificateType as String: number,
                            kSecAttrIssuer as String: data, kSecAttrSerialNumber as String: data]
                }
                item[kSecAttrSynchronizable as String] = true
                l.status(add(item), errSecSuccess, "#\(num) add sync")
                l.status(SecItemDelete(item as CFDictionary), errSecSuccess, "#\(num) delete sync")
                l.status(add(item), errSecSuccess, "#\(num) add sync again")
                l.status(SecItemDelete(item as CFDictionary), errSecSuccess, "#\(num) delete sync again")
                item.removeValue(forKey: kSecAttrSynchronizable as String)
                l.status(add(item), errSecSuccess, "#\(num) add local")
                l.status(SecItemDelete(item as CFDictionary), errSecSuccess, "#\(num) delete local")
                l.status(add(item), errSecSuccess, "#\(num) add local again")
                l.status(SecItemDelete(item as CFDictionary), errSecSuccess, "#\(num) delete local again")
                #expect(SecItemDelete(item as CFDictionary) == errSecItemNotFound, "#\(num): nothing left")   // not Apple's
            }
            settle(l)
        }

        /// The stress test's internet password with its protocol and authentication type as four-character
        /// codes (what `SecKeychainAddInternetPassword` stores) and as Apple's string constants: both forms are
        /// kept as given, are distinct items, and each is found and deleted by its own form.
        @Test("four-character codes and kSecAttrProtocol… strings are distinct values", arguments: Stores.all)
        func protocolForms(store: Stores.Kind) throws {
            try Stores.use(store)
            let base: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                                       kSecAttrAccount as String: "smith", kSecAttrPort as String: 443]
            var numeric = base
            numeric[kSecAttrProtocol as String] = fourCharCode("htps")
            numeric[kSecAttrAuthenticationType as String] = fourCharCode("dflt")
            var text = base
            text[kSecAttrProtocol as String] = kSecAttrProtocolHTTPS
            text[kSecAttrAuthenticationType as String] = kSecAttrAuthenticationTypeDefault
            #expect(add(numeric) == errSecSuccess)
            #expect(add(text) == errSecSuccess)
            #expect(add(numeric) == errSecDuplicateItem)
            var query = numeric
            query[kSecReturnAttributes as String] = true
            let (status, result) = copy(query)
            #expect(status == errSecSuccess)
            let attributes = result as? [String: Any]
            #expect(attributes?[kSecAttrProtocol as String] as? Int == fourCharCode("htps"))
            #expect(attributes?[kSecAttrAuthenticationType as String] as? Int == fourCharCode("dflt"))
            query = text
            query[kSecReturnAttributes as String] = true
            let (status2, result2) = copy(query)
            #expect(status2 == errSecSuccess)
            #expect((result2 as? [String: Any])?[kSecAttrProtocol as String] as? String == "htps")
            #expect(SecItemDelete(numeric as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete(numeric as CFDictionary) == errSecItemNotFound)
            #expect(SecItemDelete(text as CFDictionary) == errSecSuccess)
        }

        @Test("si-80-empty-data: an item added without data returns no kSecValueData", arguments: Stores.all)
        func emptyData(store: Stores.Kind) throws {
            try Stores.use(store)
            var l = Ledger("si-80-empty-data")
            let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                       kSecAttrAccount as String: "empty-data-account-test",
                                       kSecAttrService as String: "empty-data-svce-test"]
            l.status(add(item), errSecSuccess, "add generic password")
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                        kSecAttrService as String: "empty-data-svce-test",
                                        kSecMatchLimit as String: kSecMatchLimitAll,
                                        kSecReturnData as String: true, kSecReturnAttributes as String: true]
            let (status, result) = copy(query)
            l.status(status, errSecSuccess, "query generic password")
            let rows = result as? [Any]
            l.check(rows?.count == 1, "return 1-sized array of results")
            let row = rows?.first as? [String: Any]
            l.check(row != nil, "array row is dictionary")
            l.check(row != nil && row?[kSecValueData as String] == nil, "result contains no data")
            l.check(row?[kSecAttrService as String] as? String == "empty-data-svce-test", "svce attribute is returned")
            l.check(row?[kSecAttrAccount as String] as? String == "empty-data-account-test", "account attribute is returned")
            l.status(SecItemDelete([kSecClass as String: kSecClassGenericPassword,
                                    kSecAttrService as String: "empty-data-svce-test"] as CFDictionary),
                     errSecSuccess, "delete testing item")
            settle(l)
        }

        /// What Apple's result shaping gives for the two kinds of item (SecDbItemCopyResult / handle_result):
        /// `kSecReturnData` alone gives empty data for an item without a secret; in a dictionary the key is
        /// absent. An item added with empty data has an empty `kSecValueData` in the dictionary.
        @Test("no data and empty data in every result shape", arguments: Stores.all)
        func noDataShapes(store: Stores.Kind) throws {
            try Stores.use(store)
            let none: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "none"]
            var empty: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "empty"]
            empty[kSecValueData as String] = Data()
            #expect(add(none) == errSecSuccess)
            #expect(add(empty) == errSecSuccess)
            for limit in [kSecMatchLimitOne, kSecMatchLimitAll] {
                func first(_ q: [String: Any]) -> Any? {
                    var q = q
                    q[kSecMatchLimit as String] = limit
                    let (status, r) = copy(q)
                    #expect(status == errSecSuccess)
                    return (r as? [Any])?.first ?? r
                }
                var q = none
                q[kSecReturnData as String] = true
                #expect(first(q) as? Data == Data(), "return data alone: empty data")
                q[kSecReturnPersistentRef as String] = true
                #expect((first(q) as? [String: Any]).map { $0[kSecValueData as String] == nil } == true)
                q[kSecReturnAttributes as String] = true
                #expect((first(q) as? [String: Any]).map { $0[kSecValueData as String] == nil } == true)
                var e = empty
                e.removeValue(forKey: kSecValueData as String)
                e[kSecReturnData as String] = true
                e[kSecReturnAttributes as String] = true
                #expect((first(e) as? [String: Any])?[kSecValueData as String] as? Data == Data())
            }
            var returned: CFTypeRef?
            var another = none
            another[kSecAttrAccount as String] = "added"
            another[kSecReturnData as String] = true
            another[kSecReturnAttributes as String] = true
            #expect(add(another, &returned) == errSecSuccess)
            #expect((returned as? [String: Any]).map { $0[kSecValueData as String] == nil } == true)
        }

        @Test("KeychainAPITests testReturnValuesInSecItemUpdate (iOS): return keys in an update query are errSecParam",
              arguments: Stores.all)
        func returnValuesInUpdate(store: Stores.Kind) throws {
            try Stores.use(store)
            var l = Ledger("KeychainAPITests.testReturnValuesInSecItemUpdate")
            let addQuery: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecValueData as String: Data("password".utf8),
                                           kSecAttrAccount as String: "TestAccount", kSecAttrService as String: "TestService",
                                           kSecUseDataProtectionKeychain as String: true, kSecReturnAttributes as String: true]
            let update: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "TestAccount",
                                         kSecAttrService as String: "TestService", kSecUseDataProtectionKeychain as String: true]
            var result: CFTypeRef?
            l.status(add(addQuery, &result), errSecSuccess, "add test item")
            l.check(result != nil, "a dictionary back from SecItemAdd")
            l.status(SecItemUpdate(update as CFDictionary, [kSecValueData as String: Data("otherpassword".utf8)] as CFDictionary),
                     errSecSuccess, "update with a clean query")
            for key in [kSecReturnAttributes, kSecReturnData, kSecReturnRef, kSecReturnPersistentRef] {
                var q = update
                q[key as String] = true
                l.status(SecItemUpdate(q as CFDictionary, [kSecValueData as String: Data("x".utf8)] as CFDictionary), errSecParam,
                         "update query with \(key)")
            }
            settle(l)
        }

        /// KeychainAPITests testBadTypeInParams: an item with a label only (no secret) is added and deleted; a
        /// string where `kSecAttrAccessControl` must be a SecAccessControl is errSecParam for add and delete.
        @Test("KeychainAPITests testBadTypeInParams: a wrong-typed kSecAttrAccessControl is errSecParam", arguments: Stores.all)
        func badTypeInParams(store: Stores.Kind) throws {
            try Stores.use(store)
            var l = Ledger("KeychainAPITests.testBadTypeInParams")
            var attrs: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecUseDataProtectionKeychain as String: true,
                                        kSecAttrLabel as String: "testentry"]
            SecItemDelete(attrs as CFDictionary)
            l.status(add(attrs), errSecSuccess, "add")
            l.status(SecItemDelete(attrs as CFDictionary), errSecSuccess, "delete")
            attrs[kSecAttrAccessControl as String] = "string, no SecAccessControlRef!"
            l.status(add(attrs), errSecParam, "add with a string access control")
            l.status(SecItemDelete(attrs as CFDictionary), errSecParam, "delete with a string access control")
            settle(l)
        }
    }
}
