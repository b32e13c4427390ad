import Foundation
import SecureStoreCore
import SecureStoreInMemory
import SecItem

/// Fuzz target (a): SecItem dictionaries built from fuzz bytes, driven through `SecItemAdd`,
/// `SecItemCopyMatching`, `SecItemUpdate` and `SecItemDelete` on a fresh in-memory store per input.
///
/// Invariants checked on every call: the status is one the documentation lists; a failing call (and every
/// `SecItemCopyMatching`) leaves the store exactly as it was; a successful add can be read back.
public enum SecItemExercise {
    public static let name = "secitem"

    private static let documented: Set<OSStatus> = [
        errSecSuccess, errSecParam, errSecDuplicateItem, errSecItemNotFound, errSecNoSuchAttr, errSecNoSuchClass,
        errSecMissingEntitlement, errSecUnimplemented,
    ]

    static let keys: [String] = ([
        kSecClass, kSecAttrService, kSecAttrAccount, kSecAttrLabel, kSecAttrServer, kSecAttrPort, kSecAttrProtocol,
        kSecAttrSynchronizable, kSecAttrAccessGroup, kSecAttrAccessible, kSecAttrGeneric, kSecAttrApplicationTag,
        kSecAttrKeyType, kSecAttrIsInvisible, kSecAttrCreationDate, kSecAttrModificationDate, kSecAttrComment,
        kSecAttrPath, kSecAttrAuthenticationType, kSecAttrSecurityDomain, kSecMatchLimit, kSecMatchCaseInsensitive,
        kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecValueData,
        kSecValuePersistentRef, kSecValueRef, kSecMatchItemList, kSecAttrAccessControl, kSecAttrSubject,
        kSecAttrSerialNumber, kSecAttrKeyClass, kSecAttrApplicationLabel,
    ] as [CFString]).map { $0 as String } + ["u_AuthUI", "nleg", "junk", "", "svce ", "🔑"]
    static let classes: [String] = ([
        kSecClassGenericPassword, kSecClassInternetPassword, kSecClassKey, kSecClassCertificate, kSecClassIdentity,
    ] as [CFString]).map { $0 as String } + ["GENP", ""]
    static let words: [String] = ["a", "b", "A", "", "securestore", "group.other", "ß", "SS", "é", "e\u{301}", "ak"]

    /// Runs the program encoded in `bytes`. Throws a finding when an invariant breaks.
    public static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        guard let store = try? InMemoryStore(configuration: StoreConfiguration(accessGroups: ["securestore", "group.other"])) else {
            throw FuzzFinding(name, "could not make an in-memory store")
        }
        // The SecItem functions' process-wide store is this input's fresh store (for this task only, so a
        // test process that also runs the SecItem tests is not disturbed).
        let outcome = SecItemSystem.withStore(store) { Result { () throws(FuzzFinding) in try program(bytes, store) } }
        try outcome.get()
    }

    private static func program(_ bytes: [UInt8], _ store: InMemoryStore) throws(FuzzFinding) {
        var input = FuzzInput(bytes)
        var refs: [Data] = []
        var step = 0
        while !input.isEmpty, step < 64 {
            step += 1
            let op = input.choose(4)
            let before = snapshot(store)
            let query = dictionary(&input, refs: refs)
            var result: CFTypeRef?
            let wantResult = input.bool()
            let status: OSStatus
            switch op {
            case 0: status = wantResult ? SecItemAdd(query as CFDictionary, &result) : SecItemAdd(query as CFDictionary, nil)
            case 1: status = wantResult ? SecItemCopyMatching(query as CFDictionary, &result) : SecItemCopyMatching(query as CFDictionary, nil)
            case 2: status = SecItemUpdate(query as CFDictionary, dictionary(&input, refs: refs) as CFDictionary)
            default: status = SecItemDelete(query as CFDictionary)
            }
            guard documented.contains(status) else {
                throw FuzzFinding(name, "step \(step): op \(op) returned the undocumented status \(status)")
            }
            if status != errSecSuccess || op == 1 {
                guard snapshot(store) == before else {
                    throw FuzzFinding(name, "step \(step): op \(op) returned \(status) but changed the store")
                }
            }
            if status != errSecSuccess {
                guard let message = SecCopyErrorMessageString(status, nil), (message as String).isEmpty == false else {
                    throw FuzzFinding(name, "step \(step): status \(status) without a message")
                }
            }
            if op == 0, status == errSecSuccess {
                guard snapshot(store).count == before.count + 1 else {
                    throw FuzzFinding(name, "step \(step): a successful add did not add exactly one item")
                }
            }
            // Remember persistent references so later steps can use them.
            if let d = result as? Data, refs.count < 8 { refs.append(d) }
            if let dict = result as? [String: Any], let d = dict[kSecValuePersistentRef as String] as? Data, refs.count < 8 { refs.append(d) }
        }
    }

    static func value(_ input: inout FuzzInput, refs: [Data]) -> Any {
        switch input.choose(14) {
        case 0: return input.pick(words)
        case 1: return Data(input.chunk())
        case 2: return Int(input.i64() % 5) - 1
        case 3: return input.bool()
        case 4: return Date(timeIntervalSinceReferenceDate: Double(input.i64() % 100_000))
        case 5: return input.pick([kSecMatchLimitOne, kSecMatchLimitAll, kSecAttrSynchronizableAny] as [CFString])
        case 6: return Double(input.i64() % 1000) / 7
        case 7: return [1, 2, 3] as [Int]
        case 8: return ["k": "v"] as [String: String]
        case 9: return NSNull()
        case 10: return kCFBooleanTrue as Any
        case 11: return refs.isEmpty ? Data([1, 2]) : refs[input.choose(refs.count)]
        case 12: return String(decoding: input.chunk(), as: UTF8.self)
        default: return input.pick(classes)
        }
    }

    static func dictionary(_ input: inout FuzzInput, refs: [Data]) -> [String: Any] {
        var d: [String: Any] = [:]
        if input.choose(5) > 0 { d[kSecClass as String] = input.pick(classes) }
        for _ in 0..<input.choose(6) {
            d[input.pick(keys)] = value(&input, refs: refs)
        }
        return d
    }

    /// Every item of every class, with attributes, data and reference, in store order.
    static func snapshot(_ store: InMemoryStore) -> [Item] {
        var out: [Item] = []
        for c in ItemClass.allCases {
            let query = ItemQuery(c, synchronizableAny: true, returning: [.attributes, .data, .persistentRef])
            if let items = try? store.items(matching: query) { out += items }
        }
        return out
    }
}
