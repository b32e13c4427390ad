import Foundation
import Testing
import SecureStoreCore
import SecureStoreInMemory
import SecureStoreSQLite
import SecureStoreConformance
@testable import SecItem

/// Which store the process-wide SecItem store is switched to for a test.
enum Stores {
    enum Kind: String, CustomStringConvertible, Sendable {
        case memory, sqlite
        var description: String { rawValue }
    }
    static let all: [Kind] = [.memory, .sqlite]

    /// Fresh, empty store of this kind as the process-wide SecItem store.
    @discardableResult
    static func use(_ kind: Kind) throws -> any SecureStore {
        let store: any SecureStore = switch kind {
        case .memory: try InMemoryStore()
        case .sqlite:
            try SQLiteStore(path: FileManager.default.temporaryDirectory.appendingPathComponent("secitem-\(UUID().uuidString).db").path,
                            key: .raw(Data((0..<32).map { _ in UInt8.random(in: 0...255) })))
        }
        SecItemSystem.bootstrapInternal(store)
        return store
    }
}

/// All SecItem tests share the process-wide store, so they run one after another.
@Suite("SecItem", .serialized)
struct SecItemTests {
    @Test("constants have Apple's values")
    func constants() {
        #expect(kSecClass as String == "class")
        #expect(kSecAttrService as String == "svce")
        #expect(kSecValueData as String == "v_Data")
        #expect(kSecMatchLimitAll as String == "m_LimitAll")
        #expect(kSecAttrProtocolHTTPS as String == "htps")
        #expect(kSecAttrProtocolSSH as String == "ssh ")
        #expect(errSecDuplicateItem == -25299)
        #expect(errSecItemNotFound == -25300)
        #expect(errSecInteractionNotAllowed == -25308)
        #expect(errSecMissingEntitlement == -34018)
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil)?.contains("could not be found") == true)
    }

    @Test("malformed dictionaries give errSecParam naming the key, and change nothing", arguments: Stores.all)
    func malformed(store kind: Stores.Kind) throws {
        try Stores.use(kind)
        let good: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s",
                                   kSecValueData as String: Data("x".utf8)]
        #expect(SecItemAdd(good as CFDictionary, nil) == errSecSuccess)
        let cases: [(String, [String: Any], OSStatus)] = [
            ("no class", [kSecAttrService as String: "s"], errSecParam),
            ("unknown class", [kSecClass as String: "nope"], errSecNoSuchClass),
            ("string value data", [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "t",
                                   kSecValueData as String: "text"], errSecParam),
            ("number service", [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: 5.5], errSecParam),
            ("unknown key", [kSecClass as String: kSecClassGenericPassword, "bogus": 1], errSecParam),
            // Apple's keychain reads every four-character key as an attribute code, and any other key by its first
            // letter (c, m, r, u, v): "zzzz" is no attribute of the class, a constant's name written as a literal
            // key (GTMAppAuth's "kSecUseDataProtectionKeychain") is an invalid key.
            ("unknown four-character key", [kSecClass as String: kSecClassGenericPassword, "zzzz": 1], errSecNoSuchAttr),
            ("a constant's name as a literal key", [kSecClass as String: kSecClassGenericPassword,
                                                    "kSecUseDataProtectionKeychain": true], errSecParam),
            ("a wrong type before an unknown attribute", [kSecClass as String: kSecClassGenericPassword, "zzzz": 1,
                                                          kSecAttrService as String: 5.5], errSecParam),
            ("foreign attribute", [kSecClass as String: kSecClassGenericPassword, kSecAttrServer as String: "h"], errSecNoSuchAttr),
            ("match key in add", [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll], errSecParam),
        ]
        for (name, dict, expected) in cases {
            let status = SecItemAdd(dict as CFDictionary, nil)
            #expect(status == expected, "\(name)")
        }
        #expect(SecCopyErrorMessageString(errSecParam, nil)?.contains("m_Limit") == true, "the reason names the key")
        var r: CFTypeRef?
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: "m_LimitSome"] as CFDictionary, &r) == errSecParam)
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, "zzzz": "x"] as CFDictionary, &r) == errSecNoSuchAttr)
        #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword, "zzzz": "x"] as CFDictionary) == errSecNoSuchAttr)
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true] as CFDictionary, nil) == errSecParam,
                "a return key needs a result pointer")
        #expect(SecItemUpdate([kSecClass as String: kSecClassGenericPassword] as CFDictionary,
                              [kSecClass as String: kSecClassInternetPassword] as CFDictionary) == errSecNoSuchAttr)
        #expect(SecItemUpdate([kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitOne] as CFDictionary,
                              [kSecAttrLabel as String: "x"] as CFDictionary) == errSecParam)
        // kSecMatchLimitAll on delete is the macOS dialect for "every match" (accepted); any other limit is refused.
        #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitOne] as CFDictionary) == errSecParam)
        var out: CFTypeRef?
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true] as CFDictionary, &out) == errSecSuccess)
        #expect(out as? Data == Data("x".utf8), "the good item is untouched")
    }

    @Test("a blob attribute keeps the type it was given: kSecAttrGeneric as text comes back as text, as data as data (Apple's copyBlob)",
          arguments: Stores.all)
    func blobAttributeKeepsItsType(store kind: Stores.Kind) throws {
        try Stores.use(kind)
        for (account, generic) in [("text", "g" as Any), ("data", Data([0, 0x67]) as Any)] {
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "blob",
                                kSecAttrAccount as String: account, kSecAttrGeneric as String: generic] as CFDictionary, nil) == errSecSuccess)
        }
        var out: CFTypeRef?
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "blob",
                                     kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll] as CFDictionary,
                                    &out) == errSecSuccess)
        let byAccount = Dictionary(uniqueKeysWithValues: ((out as? [[String: Any]]) ?? []).compactMap { item in
            (item[kSecAttrAccount as String] as? String).map { ($0, item[kSecAttrGeneric as String]) }
        })
        #expect(byAccount["text"] as? String == "g")
        #expect(byAccount["data"] as? Data == Data([0, 0x67]))
    }

    @Test("NSMutableDictionary queries, as the seeds build them", arguments: Stores.all)
    func nsDictionary(store kind: Stores.Kind) throws {
        try Stores.use(kind)
        let q = NSMutableDictionary()
        q.setObject(kSecClassGenericPassword, forKey: kSecClass as NSString)
        q.setObject("svc", forKey: kSecAttrService as NSString)
        q.setObject("svc", forKey: kSecAttrAccount as NSString)
        #expect(SecItemDelete(q) == errSecItemNotFound)
        q.setObject(Data("v".utf8), forKey: kSecValueData as NSString)
        #expect(SecItemAdd(q, nil) == errSecSuccess)
        q.removeObject(forKey: kSecValueData as NSString)
        q.setObject(true, forKey: kSecReturnData as NSString)
        var result: CFTypeRef?
        #expect(SecItemCopyMatching(q, &result) == errSecSuccess)
        #expect(result as? Data == Data("v".utf8))
    }

    @Test("fuzz: thousands of random dictionaries through all four functions", arguments: Stores.all)
    func fuzz(store kind: Stores.Kind) throws {
        let store = try Stores.use(kind)
        var rng = SystemRandomNumberGenerator()
        let seed = ProcessInfo.processInfo.environment["SECURESTORE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max, using: &rng)
        var gen = Fuzz(seed: seed)
        let documented: Set<OSStatus> = [errSecSuccess, errSecParam, errSecDuplicateItem, errSecItemNotFound, errSecNoSuchAttr,
                                          errSecNoSuchClass, errSecMissingEntitlement, errSecUnimplemented, errSecNoSuchKeychain]
        var counts: [OSStatus: Int] = [:]
        let rounds = 4000
        for i in 0..<rounds {
            let before = try snapshot(store)
            let op = Int.random(in: 0..<4, using: &gen)
            let query = gen.dictionary()
            var result: CFTypeRef?
            let wantResult = Bool.random(using: &gen)
            let status: OSStatus = switch op {
            case 0: wantResult ? SecItemAdd(query as CFDictionary, &result) : SecItemAdd(query as CFDictionary, nil)
            case 1: wantResult ? SecItemCopyMatching(query as CFDictionary, &result) : SecItemCopyMatching(query as CFDictionary, nil)
            case 2: SecItemUpdate(query as CFDictionary, gen.dictionary() as CFDictionary)
            default: SecItemDelete(query as CFDictionary)
            }
            counts[status, default: 0] += 1
            #expect(documented.contains(status), "seed \(seed) round \(i): undocumented status \(status)")
            if status != errSecSuccess || op == 1 {
                let after = try snapshot(store)
                #expect(before == after, "seed \(seed) round \(i): op \(op) failed with \(status) but changed the store")
                if before != after { return }
            }
        }
        print("[SecItem fuzz \(kind)] \(rounds) calls, seed \(seed), statuses \(counts.sorted { $0.key < $1.key })")
        #expect((counts[errSecSuccess] ?? 0) > 0)
    }

    private func snapshot(_ store: any SecureStore) throws -> [Item] {
        var out: [Item] = []
        for c in ItemClass.allCases {
            out += try store.items(matching: ItemQuery(c, synchronizableAny: true, returning: [.attributes, .data, .persistentRef]))
        }
        return out
    }
}

/// Random dictionaries: keys from the kSec constant set and junk, values of random types.
struct Fuzz: RandomNumberGenerator {
    var generator: SplitMix64
    init(seed: UInt64) { generator = SplitMix64(seed: seed) }
    mutating func next() -> UInt64 { generator.next() }

    static let keys: [String] = ([
        kSecClass, kSecAttrService, kSecAttrAccount, kSecAttrLabel, kSecAttrServer, kSecAttrPort, kSecAttrProtocol,
        kSecAttrSynchronizable, kSecAttrAccessGroup, kSecAttrAccessible, kSecAttrGeneric, kSecAttrApplicationTag,
        kSecAttrKeyType, kSecAttrIsInvisible, kSecAttrCreationDate, kSecMatchLimit, kSecMatchCaseInsensitive,
        kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecValueData, kSecValuePersistentRef,
        kSecValueRef, kSecMatchItemList, kSecAttrAccessControl, kSecUseKeychain, kSecMatchSearchList, kSecAttrAccess,
        kSecUseDataProtectionKeychain, kSecUseAuthenticationUI,
    ] as [CFString]).map { $0 as String } + ["junk", "", "svce ", "🔑"]
    static let classes: [String] = ([kSecClassGenericPassword, kSecClassInternetPassword, kSecClassKey, kSecClassCertificate,
                                     kSecClassIdentity] as [CFString]).map { $0 as String } + ["GENP", ""]

    mutating func value() -> Any {
        switch Int.random(in: 0..<18, using: &self) {
        case 0: return ["a", "b", "A", "", "securestore", "ak", "zz"].randomElement(using: &self) ?? ""
        case 1: return Data((0..<Int.random(in: 0..<5, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) })
        case 2: return Int.random(in: -2...3, using: &self)
        case 3: return Bool.random(using: &self)
        case 4: return Date(timeIntervalSince1970: Double(Int.random(in: 0...1000, using: &self)))
        case 5: return ([kSecMatchLimitOne, kSecMatchLimitAll, kSecAttrSynchronizableAny] as [CFString]).randomElement(using: &self) ?? ""
        case 6: return Double.random(in: -10...10, using: &self)
        case 7: return [1, 2, 3] as [Int]
        case 8: return ["k": "v"] as [String: String]
        case 9: return NSNull()
        case 10: return kCFBooleanTrue as Any
        // The Foundation forms of the same values, and access control objects (plain and with constraints).
        case 11: return NSNumber(value: Int.random(in: -1...2, using: &self))
        case 12: return NSNumber(value: Bool.random(using: &self))
        case 13: return (["a", "ak", "securestore", "com.apple.token"].randomElement(using: &self) ?? "") as NSString
        case 14: return NSData(data: Data([UInt8.random(in: 0...255, using: &self)]))
        case 15: return SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, [], nil) as Any
        case 16: return SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .biometryAny, nil) as Any
        default: return Fuzz.classes.randomElement(using: &self) ?? ""
        }
    }

    mutating func dictionary() -> [String: Any] {
        var d: [String: Any] = [:]
        if Int.random(in: 0..<5, using: &self) > 0 { d[kSecClass as String] = Fuzz.classes.randomElement(using: &self) ?? "" }
        for _ in 0..<Int.random(in: 0..<5, using: &self) {
            d[Fuzz.keys.randomElement(using: &self) ?? ""] = value()
        }
        return d
    }
}

@Suite("SecItem error keys")
struct SecItemErrorKeyTests {
    @Test("a typed-API parameter name becomes the SecItem dictionary key; other names pass through")
    func appleKeys() {
        let pairs = [("limit", "m_Limit"), ("caseInsensitive", "m_CaseInsensitive"), ("returning", "r_Data"),
                     ("data", "v_Data"), ("persistentRef", "v_PersistentRef"), ("itemClass", "class"),
                     ("synchronizableAny", "sync"), ("acct", "acct"), ("url", "url")]
        for (swift, apple) in pairs {
            #expect(appleShaped(.param(swift, "m")).parameter == apple, "\(swift)")
        }
        #expect(appleShaped(SecureStoreError(.io, "m")).parameter == nil)
    }
}
