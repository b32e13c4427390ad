import Foundation
import SecureStoreCore
import SecureStoreInMemory
import SecureStoreSQLite
import SecItem

extension BackendEntry {
    /// The SecItem functions over a memory store, against the typed API on the same store: what Apple's
    /// dictionaries, status codes and result shapes cost on top.
    static let secItem: BackendEntry = {
        var entry = BackendEntry(
            name: "secitem",
            makeStore: { (_: String) throws -> any SecureStore in try InMemoryStore() },
            databaseFile: nil,
            limits: [LimitEntry(name: "typed API (memory)",
                                make: { (_: String) throws -> any BenchTarget in
                                    StoreTarget(try InMemoryStore(), databasePath: nil) }),
                     // The SecItem functions' own cost: the same calls without the caller's Foundation
                     // conversions (`[String: Any] as CFDictionary`, `result as? Data`).
                     LimitEntry(name: "SecItem calls alone (NSDictionary built directly, result read as NSData)",
                                make: { (_: String) throws -> any BenchTarget in SecItemDirectTarget() })],
            goals: [
                Goal(text: "lookup through SecItem within 1 µs of the typed API", kind: .overLimit(.lookup, micros: 1)),
                Goal(text: "add through SecItem within 1 µs of the typed API", kind: .overLimit(.add, micros: 1)),
            ])
        entry.interleave = false
        entry.makeTarget = { store in SecItemTarget(store) }   // `store` is not used: see SecItemTarget
        return entry
    }()
}

extension BackendEntry {
    /// The SecItem functions over an encrypted SQLite store, against sqlite3 and libsodium called directly
    /// (the SQLite backend's limit) and the typed API on a SQLite store of its own: Apple-shaped code's
    /// whole cost over the raw lookup, in one run.
    static let secItemSQLite = BackendEntry(
        name: "secitem-sqlite",
        makeStore: { (folder: String) throws -> any SecureStore in try makeSQLiteStore(folder) },
        databaseFile: { (folder: String) -> String in folder + "/store.db" },
        limits: [rawSQLiteLimit,
                 LimitEntry(name: "typed API (SQLite)",
                            make: { (folder: String) throws -> any BenchTarget in
                                StoreTarget(try makeSQLiteStore(folder, file: "typed.db"),
                                            databasePath: folder + "/typed.db")
                            }),
                 // The SecItem functions' own cost on SQLite (see the memory entry's limit of that name).
                 LimitEntry(name: "SecItem calls alone (SQLite)",
                            make: { (folder: String) throws -> any BenchTarget in
                                SecItemDirectTarget(scopedTo: try makeSQLiteStore(folder, file: "direct.db"))
                            })],
        goals: [
            Goal(text: "lookup through SecItem within 2× of raw sqlite3+XChaCha20", kind: .ratioToLimit(.lookup, max: 2)),
        ],
        makeTarget: { (store: any SecureStore) -> any BenchTarget in SecItemTarget(scopedTo: store) })
}

/// `SecItemAdd`, `SecItemCopyMatching`, `SecItemUpdate` and `SecItemDelete` with the dictionaries Apple code
/// passes: over one in-memory store bootstrapped as the process-wide SecItem store (bootstrap is once per
/// process), emptied for each new target, or over a store of its own that every call of the target is
/// scoped to (`SecItemSystem.withStore`).
final class SecItemTarget: BenchTarget {
    private static let bootstrapped: Void = {
        do throws(SecureStoreError) {
            SecItemSystem.bootstrap(try InMemoryStore())
        } catch {
            fatalError("An in-memory store cannot fail to open: \(error)")
        }
    }()

    private var scope: SecItemScope

    init(_: any SecureStore) {
        scope = .processWide
        Self.prepareProcessStore()
    }

    init(scopedTo store: any SecureStore) {
        scope = .own(store)
    }

    private func call<R>(_ body: () throws -> R) throws -> R { try scope.run(body) }

    /// Bootstraps the process-wide store (once) and empties it.
    static func prepareProcessStore() {
        bootstrapped
        _ = SecItemDelete([kSecClass as String: kSecClassGenericPassword,
                           kSecAttrSynchronizable as String: kSecAttrSynchronizableAny] as CFDictionary)
    }

    private static func query(_ service: String, _ account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
         kSecAttrAccount as String: account]
    }

    private static func check(_ status: OSStatus, _ what: String) throws {
        guard status == errSecSuccess else { throw BenchFailure("\(what): OSStatus \(status)") }
    }

    func add(service: String, account: String, secret: Data) throws {
        try call {
            var attributes = Self.query(service, account)
            attributes[kSecValueData as String] = secret
            try Self.check(SecItemAdd(attributes as CFDictionary, nil), "SecItemAdd")
        }
    }

    func lookup(service: String, account: String) throws -> Int {
        return try call {
            var query = Self.query(service, account)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            try Self.check(SecItemCopyMatching(query as CFDictionary, &result), "SecItemCopyMatching")
            guard let data = result as? Data else { throw BenchFailure("A lookup returned no secret.") }
            return data.count
        }
    }

    func list(service: String) throws -> Int {
        return try call {
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                        kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]
            var result: CFTypeRef?
            try Self.check(SecItemCopyMatching(query as CFDictionary, &result), "SecItemCopyMatching (all)")
            guard let items = result as? [Any] else { throw BenchFailure("A list returned no array.") }
            return items.count
        }
    }

    func update(service: String, account: String, secret: Data) throws {
        try call {
            try Self.check(SecItemUpdate(Self.query(service, account) as CFDictionary,
                                         [kSecValueData as String: secret] as CFDictionary), "SecItemUpdate")
        }
    }

    func delete(service: String, account: String) throws {
        try call {
            try Self.check(SecItemDelete(Self.query(service, account) as CFDictionary), "SecItemDelete")
        }
    }

    func clear() throws {
        try call {
            let status = SecItemDelete([kSecClass as String: kSecClassGenericPassword,
                                        kSecAttrSynchronizable as String: kSecAttrSynchronizableAny] as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw BenchFailure("clear: OSStatus \(status)") }
        }
    }

    func storageBytes() throws -> Int? { nil }
    func close() { scope.close() }
}

/// Where a SecItem target's calls go: the process-wide store, or a store of the target's own that each call
/// is scoped to (`SecItemSystem.withStore`).
enum SecItemScope {
    case processWide
    case own(any SecureStore)
    case closed

    /// Runs `body`, whose SecItem calls go to this scope's store.
    func run<R>(_ body: () throws -> R) throws -> R {
        switch self {
        case .processWide: return try body()
        case .own(let store): return try SecItemSystem.withStore(store, body)
        case .closed: throw BenchFailure("The store was already closed.")
        }
    }

    mutating func close() {
        if case .own = self { self = .closed }
    }
}

/// The calls of ``SecItemTarget`` with the Foundation work Apple code does around them taken out: each
/// dictionary is an `NSDictionary` made from its key and value objects (no `[String: Any]` bridged), and a
/// result is read as the `NSData` it is (no `Data` made). What is left is what the SecItem functions
/// themselves cost; the difference to ``SecItemTarget`` is the caller's side.
final class SecItemDirectTarget: BenchTarget {
    private var scope: SecItemScope

    init() {
        scope = .processWide
        SecItemTarget.prepareProcessStore()
    }

    init(scopedTo store: any SecureStore) {
        scope = .own(store)
    }

    private func call<R>(_ body: () throws -> R) throws -> R { try scope.run(body) }

    private static func dictionary(_ pairs: [(CFString, AnyObject)]) -> NSDictionary {
        let keys = pairs.map { $0.0 as NSObject }, values = pairs.map { $0.1 }
        return values.withUnsafeBufferPointer { v in
            keys.withUnsafeBufferPointer { k in NSDictionary(objects: v.baseAddress, forKeys: k.baseAddress, count: k.count) }
        }
    }

    private static func query(_ service: String, _ account: String, _ extra: [(CFString, AnyObject)] = []) -> NSDictionary {
        dictionary([(kSecClass, kSecClassGenericPassword), (kSecAttrService, service as NSString),
                    (kSecAttrAccount, account as NSString)] + extra)
    }

    private static func check(_ status: OSStatus, _ what: String) throws {
        guard status == errSecSuccess else { throw BenchFailure("\(what): OSStatus \(status)") }
    }

    func add(service: String, account: String, secret: Data) throws {
        try call {
            try Self.check(SecItemAdd(Self.query(service, account, [(kSecValueData, secret as NSData)]), nil), "SecItemAdd")
        }
    }

    func lookup(service: String, account: String) throws -> Int {
        return try call {
            var result: CFTypeRef?
            try Self.check(SecItemCopyMatching(Self.query(service, account, [(kSecReturnData, kCFBooleanTrue),
                                                                             (kSecMatchLimit, kSecMatchLimitOne)]), &result),
                           "SecItemCopyMatching")
            guard let data = result as? NSData else { throw BenchFailure("A lookup returned no secret.") }
            return data.length
        }
    }

    func list(service: String) throws -> Int {
        return try call {
            var result: CFTypeRef?
            try Self.check(SecItemCopyMatching(Self.dictionary([(kSecClass, kSecClassGenericPassword), (kSecAttrService, service as NSString),
                                                                (kSecReturnAttributes, kCFBooleanTrue),
                                                                (kSecMatchLimit, kSecMatchLimitAll)]), &result),
                           "SecItemCopyMatching (all)")
            guard let items = result as? NSArray else { throw BenchFailure("A list returned no array.") }
            return items.count
        }
    }

    func update(service: String, account: String, secret: Data) throws {
        try call {
            try Self.check(SecItemUpdate(Self.query(service, account), Self.dictionary([(kSecValueData, secret as NSData)])),
                           "SecItemUpdate")
        }
    }

    func delete(service: String, account: String) throws {
        try call {
            try Self.check(SecItemDelete(Self.query(service, account)), "SecItemDelete")
        }
    }

    func clear() throws {
        try call {
            let status = SecItemDelete(Self.dictionary([(kSecClass, kSecClassGenericPassword),
                                                        (kSecAttrSynchronizable, kSecAttrSynchronizableAny)]))
            guard status == errSecSuccess || status == errSecItemNotFound else { throw BenchFailure("clear: OSStatus \(status)") }
        }
    }

    func storageBytes() throws -> Int? { nil }
    func close() { scope.close() }
}
