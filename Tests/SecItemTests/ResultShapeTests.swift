// Every result shape of SecItemCopyMatching and SecItemAdd, read through every cast Keychain code uses on
// it, for empty, small, inline-sized, page-sized and the largest secrets; and what a caller does to a
// result (mutating a Data or an NSMutableData made from it, archiving it) never reaches the store or
// another result.
import Foundation
import Testing
import SecureStoreCore
@testable import SecItem

private func secret(_ size: Int, seed: UInt8 = 7) -> Data {
    Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
}

private func item(_ account: String, _ data: Data) -> [String: Any] {
    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "shapes",
     kSecAttrAccount as String: account, kSecValueData as String: data]
}

private func query(_ account: String?, _ extra: [String: Any]) -> [String: Any] {
    var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "shapes"]
    if let account { q[kSecAttrAccount as String] = account }
    q.merge(extra) { $1 }
    return q
}

private func copy(_ q: [String: Any]) -> (OSStatus, CFTypeRef?) {
    var result: CFTypeRef?
    let status = SecItemCopyMatching(q as CFDictionary, &result)
    return (status, result)
}

/// The sizes: empty, one byte, the largest and smallest around `Data`'s inline storage, a typical token,
/// a page, and the store's limit.
private let sizes = [0, 1, 14, 15, 32, 4096, StoreLimits.maxSecretBytes]

extension SecItemTests {
    @Suite("result shapes through Apple's casts")
    struct ResultShapes {
        @Test("kSecReturnData alone: Data, CFData, NSData and type-ID readings agree", arguments: Stores.all)
        func dataResult(store: Stores.Kind) throws {
            try Stores.use(store)
            for size in sizes {
                let want = secret(size)
                #expect(SecItemAdd(item("a\(size)", want) as CFDictionary, nil) == errSecSuccess, "add \(size)")
                let (status, result) = copy(query("a\(size)", [kSecReturnData as String: true]))
                #expect(status == errSecSuccess)
                #expect(result as? Data == want, "as? Data, \(size) B")
                #expect((result as? NSData).map { $0 as Data } == want, "as? NSData as Data, \(size) B")
                let cf = try #require(result as? CFData)
                #expect(cf as Data == want, "as! CFData as Data, \(size) B")
                #expect(Data(referencing: cf) == want, "Data(referencing:), \(size) B")
                #expect(cf.length == size)
                #expect(Data(bytes: cf.bytes, count: cf.length) == want, "bytes/length, \(size) B")
                #expect(CFGetTypeID(result) == CFDataGetTypeID())
                #expect(cf.isEqual(want as NSData) && (want as NSData).isEqual(cf) && cf.isEqual(to: want))
                #expect(cf.hash == (want as NSData).hash)
                #expect(cf.copy() as? Data == want)
                if size <= 4096 {
                    #expect(cf.base64EncodedString() == want.base64EncodedString())
                    #expect(String(data: want, encoding: .isoLatin1) == String(data: cf as Data, encoding: .isoLatin1))
                }
            }
        }

        @Test("mutating a returned Data or NSMutableData changes neither the store nor another result",
              arguments: Stores.all)
        func mutationSafety(store: Stores.Kind) throws {
            try Stores.use(store)
            for size in [1, 15, 4096] {
                let want = secret(size)
                #expect(SecItemAdd(item("m\(size)", want) as CFDictionary, nil) == errSecSuccess)
                let (_, first) = copy(query("m\(size)", [kSecReturnData as String: true]))
                let (_, second) = copy(query("m\(size)", [kSecReturnData as String: true]))
                var data = try #require(first as? Data)
                data[0] ^= 0xff
                data.append(contentsOf: [1, 2, 3])
                var again = try #require(first as? Data)   // a second bridge of the same result
                again.resetBytes(in: 0..<size)
                let mutable = try #require((first as? NSData)?.mutableCopy() as? NSMutableData)
                mutable.resetBytes(in: NSRange(location: 0, length: size))
                mutable.append(Data([9]))
                #expect(first as? Data == want, "the result itself, \(size) B")
                #expect(second as? Data == want, "another result, \(size) B")
                #expect(copy(query("m\(size)", [kSecReturnData as String: true])).1 as? Data == want, "the store, \(size) B")
            }
            // Two items with the same secret in one array: changing one element's bridge leaves the other.
            let shared = secret(32, seed: 1)
            #expect(SecItemAdd(item("s1", shared) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(item("s2", shared) as CFDictionary, nil) == errSecSuccess)
            let (status, result) = copy([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "shapes",
                                         kSecAttrAccount as String: "s1", kSecReturnData as String: true,
                                         kSecMatchLimit as String: kSecMatchLimitAll])
            #expect(status == errSecSuccess)
            var datas = try #require(result as? [Data])
            #expect(datas == [shared])
            datas[0][0] ^= 1
            #expect(result as? [Data] == [shared])
        }

        @Test("attributes and data in one dictionary: [String: Any], NSDictionary, CFDictionary", arguments: Stores.all)
        func dictionaryResult(store: Stores.Kind) throws {
            try Stores.use(store)
            for size in sizes {
                let want = secret(size)
                var attributes = item("d\(size)", want)
                attributes[kSecAttrGeneric as String] = Data([0, 1, 2])
                attributes[kSecAttrLabel as String] = "label \(size)"
                #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
                let (status, result) = copy(query("d\(size)", [kSecReturnData as String: true, kSecReturnAttributes as String: true,
                                                                kSecReturnPersistentRef as String: true,
                                                                kSecMatchLimit as String: kSecMatchLimitOne]))
                #expect(status == errSecSuccess)
                #expect(CFGetTypeID(result) == CFDictionaryGetTypeID())
                let swift = try #require(result as? [String: Any])
                #expect(swift[kSecValueData as String] as? Data == want, "[String: Any] value data, \(size) B")
                #expect(swift[kSecAttrAccount as String] as? String == "d\(size)")
                #expect(swift[kSecAttrLabel as String] as? String == "label \(size)")
                #expect(swift[kSecAttrGeneric as String] as? Data == Data([0, 1, 2]))
                #expect(swift[kSecClass as String] as? String == kSecClassGenericPassword as String)
                #expect(swift[kSecAttrCreationDate as String] is Date)
                let ns = try #require(result as? NSDictionary)
                #expect((ns[kSecValueData] as? NSData).map { $0 as Data } == want, "NSDictionary value, \(size) B")
                #expect((ns[kSecValueData as String] as? Data) == want)
                #expect(CFGetTypeID(ns[kSecValueData] as AnyObject) == CFDataGetTypeID())
                let cf = try #require(result as? CFDictionary)
                #expect((cf as? [String: AnyObject])?[kSecValueData as String] as? Data == want)
                // The persistent reference finds the same item again.
                let ref = try #require(swift[kSecValuePersistentRef as String] as? Data)
                let (byRef, found) = copy([kSecValuePersistentRef as String: ref, kSecReturnData as String: true])
                #expect(byRef == errSecSuccess)
                #expect(found as? Data == want)
                // A mutable copy of the result, changed, leaves the store and the result alone.
                let mutable = try #require(ns.mutableCopy() as? NSMutableDictionary)
                mutable[kSecValueData as String] = Data("changed".utf8)
                let generic = try #require((mutable[kSecAttrGeneric as String] as? NSData)?.mutableCopy() as? NSMutableData)
                generic.resetBytes(in: NSRange(location: 0, length: 3))
                var swiftCopy = swift
                swiftCopy[kSecValueData as String] = Data()
                #expect(ns[kSecValueData as String] as? Data == want)
                #expect((result as? [String: Any])?[kSecAttrGeneric as String] as? Data == Data([0, 1, 2]))
                #expect(copy(query("d\(size)", [kSecReturnData as String: true])).1 as? Data == want)
            }
        }

        @Test("kSecMatchLimitAll: [[String: Any]], [Any], NSArray, [Data]", arguments: Stores.all)
        func arrayResult(store: Stores.Kind) throws {
            try Stores.use(store)
            let secrets = ["x": secret(0), "y": secret(32, seed: 2), "z": secret(4096, seed: 3)]
            for (account, data) in secrets { #expect(SecItemAdd(item(account, data) as CFDictionary, nil) == errSecSuccess) }
            let all = [kSecMatchLimit as String: kSecMatchLimitAll] as [String: Any]
            var extra = all
            extra[kSecReturnAttributes as String] = true
            extra[kSecReturnData as String] = true
            let (status, result) = copy(query(nil, extra))
            #expect(status == errSecSuccess)
            #expect(CFGetTypeID(result) == CFArrayGetTypeID())
            let dicts = try #require(result as? [[String: Any]])
            #expect(dicts.count == 3)
            for d in dicts {
                let account = try #require(d[kSecAttrAccount as String] as? String)
                #expect(d[kSecValueData as String] as? Data == secrets[account], "\(account)")
            }
            #expect((result as? [Any])?.count == 3)
            let array = try #require(result as? NSArray)
            for case let d as NSDictionary in array {
                let account = try #require(d[kSecAttrAccount] as? String)
                #expect((d[kSecValueData] as? NSData).map { $0 as Data } == secrets[account])
            }
            var dataOnly = all
            dataOnly[kSecReturnData as String] = true
            let (dataStatus, datas) = copy(query(nil, dataOnly))
            #expect(dataStatus == errSecSuccess)
            #expect(Set(try #require(datas as? [Data])) == Set(secrets.values))
            for element in try #require(datas as? NSArray) { #expect(CFGetTypeID(element as AnyObject) == CFDataGetTypeID()) }
        }

        @Test("SecItemAdd's result: the new item's data and attributes", arguments: Stores.all)
        func addResult(store: Stores.Kind) throws {
            try Stores.use(store)
            for size in [0, 32, 4096] {
                let want = secret(size, seed: 5)
                var attributes = item("add\(size)", want)
                attributes[kSecReturnData as String] = true
                var result: CFTypeRef?
                #expect(SecItemAdd(attributes as CFDictionary, &result) == errSecSuccess)
                #expect(result as? Data == want)
                attributes[kSecAttrAccount as String] = "add\(size)-2"
                attributes[kSecReturnAttributes as String] = true
                var both: CFTypeRef?
                #expect(SecItemAdd(attributes as CFDictionary, &both) == errSecSuccess)
                #expect((both as? [String: Any])?[kSecValueData as String] as? Data == want)
                #expect((both as? [String: Any])?[kSecAttrAccount as String] as? String == "add\(size)-2")
            }
        }

        @Test("a data result archives and reads back as plain NSData")
        func archiving() throws {
            try Stores.use(.memory)
            let want = secret(40)
            #expect(SecItemAdd(item("arch", want) as CFDictionary, nil) == errSecSuccess)
            let (_, result) = copy(query("arch", [kSecReturnData as String: true, kSecReturnAttributes as String: true]))
            let dict = try #require(result as? NSDictionary)
            let archive = try NSKeyedArchiver.archivedData(withRootObject: dict, requiringSecureCoding: false)
            let back = try #require(try NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(archive) as? NSDictionary)
            let value = try #require(back[kSecValueData] as? NSData)
            #expect(type(of: value) == NSData.self)
            #expect(value as Data == want)
            let plist = try PropertyListSerialization.data(fromPropertyList: [kSecValueData as String: dict[kSecValueData] as Any],
                                                           format: .binary, options: 0)
            let read = try PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any]
            #expect(read?[kSecValueData as String] as? Data == want)
        }
    }
}
