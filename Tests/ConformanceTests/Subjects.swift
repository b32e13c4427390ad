import Foundation
import SecureStoreCore
import SecureStoreConformance
import SecureStoreInMemory
import SecureStoreSQLite
import SecureStoreSecretService
import SecureStorePostgres
import TestSupport

/// Every store implementation the conformance suite runs against. Each backend adds itself here.
enum Subjects {
    static let inMemory = ConformanceSubject(name: "memory") { groups in
        try InMemoryStore(configuration: StoreConfiguration(accessGroups: groups))
    }

    /// A fresh encrypted SQLite file in a fresh temporary folder for every store (removed with the store).
    static let sqlite = ConformanceSubject(name: "sqlite") { groups in
        try TemporarySQLiteStore(accessGroups: groups)
    }

    /// gnome-keyring (or any Secret Service) on the session bus; run under scripts/with-keyring.sh.
    /// Every store gets a fresh random namespace, so it starts empty.
    static let secretService = ConformanceSubject(name: "secret-service", differentialOperations: 300) { groups in
        try SecretServiceStore(namespace: "conformance-\(UInt64.random(in: 0...UInt64.max))",
                               configuration: StoreConfiguration(accessGroups: groups))
    }

    /// The real PostgreSQL server of scripts/with-postgres.sh (scripts/test.sh starts it). Every store gets a
    /// fresh random namespace and key, so it starts empty. Without the server the subject fails, saying how
    /// to run it.
    static let postgres = ConformanceSubject(name: "postgres") { groups in
        let env = ProcessInfo.processInfo.environment
        guard let url = env["SECURESTORE_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw SecureStoreError(.notAvailable,
                "SECURESTORE_TEST_POSTGRES_URL is not set: run the tests under scripts/with-postgres.sh (scripts/test.sh does), e.g. scripts/with-postgres.sh swift test --filter Conformance")
        }
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        return try PostgresStore(url: url, key: .raw(key), namespace: "conformance-\(UInt64.random(in: 0...UInt64.max))",
                                 passwordEnv: "SECURESTORE_TEST_POSTGRES_PASSWORD",
                                 configuration: StoreConfiguration(accessGroups: groups))
    }

    /// The backends under test (the reference model is run as well, as its own subject). A backend whose
    /// service is absent is left out (``ConformanceTests`` reports it as skipped) unless every backend is
    /// required (TestSupport decides).
    static let backends: [ConformanceSubject] = [inMemory, sqlite]
        + (TestService.secretService.shouldRun ? [secretService] : [])
        + (TestService.postgres.shouldRun ? [postgres] : [])

    static let all: [ConformanceSubject] = [.reference] + backends
}

/// A ``SQLiteStore`` on a file in its own temporary folder, which goes away when the store does.
final class TemporarySQLiteStore: SecureStore, @unchecked Sendable {   // `store` is only set in init and deinit
    private var store: SQLiteStore?
    private let dir: URL

    init(accessGroups: [String]) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("securestore-conf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        store = try SQLiteStore(path: dir.appendingPathComponent("store.db").path, key: .raw(key),
                                configuration: StoreConfiguration(accessGroups: accessGroups))
    }

    deinit {
        store = nil   // closes the database first
        try? FileManager.default.removeItem(at: dir)
    }

    private var open: SQLiteStore {
        get throws(SecureStoreError) {
            guard let store else { throw SecureStoreError(.notAvailable, "closed") }
            return store
        }
    }

    var storeDescription: String { store?.storeDescription ?? "closed" }
    var guarantees: StorageGuarantees { SQLiteBackend.guarantees }

    func add(_ item: NewItem, returning: ReturnOptions) throws(SecureStoreError) -> Item {
        try open.add(item, returning: returning)
    }

    func items(matching query: ItemQuery) throws(SecureStoreError) -> [Item] {
        try open.items(matching: query)
    }

    func update(_ query: ItemQuery, with changes: ItemChanges) throws(SecureStoreError) -> Int {
        try open.update(query, with: changes)
    }

    func delete(_ query: ItemQuery) throws(SecureStoreError) -> Int {
        try open.delete(query)
    }

    func clear(_ classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
        try open.clear(classes)
    }
}
