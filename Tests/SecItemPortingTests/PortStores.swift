// The stores the porting tests run against, each fresh and empty, used through SecItemSystem.withStore (a
// task-local store, so the Apple-style code under test calls the plain SecItem functions).
import Foundation
import SecureStoreCore
import SecureStoreInMemory
import SecureStoreSQLite
import SecureStoreSecretService
import SecItem
import TestSupport

enum PortStore: String, CustomStringConvertible, Sendable, CaseIterable {
    case memory, sqlite, secretService = "secret-service"
    var description: String { rawValue }

    /// The Secret Service store needs a session bus with a keyring (scripts/with-keyring.sh provides one); the
    /// decision to run, skip or fail is TestSupport's, as for every service-backed test.
    static var hasBus: Bool { TestService.secretService.shouldRun }
    static var skipReason: String { TestService.secretService.skipReason }

    /// Every store available in this run: memory, SQLite, and Secret Service when a bus is there.
    static let available: [PortStore] = hasBus ? allCases : [.memory, .sqlite]

    /// A fresh, empty store of this kind whose default (first) access group is `groups[0]`.
    func open(accessGroups groups: [String] = ["securestore"]) throws -> any SecureStore {
        let configuration = StoreConfiguration(accessGroups: groups)
        switch self {
        case .memory:
            return try InMemoryStore(configuration: configuration)
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("secitem-port-\(UUID().uuidString).db").path
            return try SQLiteStore(path: path, key: .raw(Data((0..<32).map { _ in UInt8.random(in: 0...255) })),
                                   configuration: configuration)
        case .secretService:
            return try SecretServiceStore(namespace: "secitem-port-\(UInt64.random(in: 0...UInt64.max))",
                                          configuration: configuration)
        }
    }

    /// Runs `body` with every SecItem call of this task going to a fresh store of this kind.
    func run<R>(accessGroups: [String] = ["securestore"], _ body: () throws -> R) throws -> R {
        let store = try open(accessGroups: accessGroups)
        return try SecItemSystem.withStore(store, body)
    }
}
