import Foundation
import SecureStore
import SecureStoreConformance
import InMemoryStore
import SQLiteStore

/// Every store implementation the conformance suite runs against. Each backend adds itself here.
enum Subjects {
    static let inMemory = ConformanceSubject(name: "memory") { groups in
        try InMemoryStore(configuration: StoreConfiguration(accessGroups: groups))
    }

    /// A fresh encrypted SQLite file in a fresh temporary folder for every store.
    static let sqlite = ConformanceSubject(name: "sqlite") { groups in
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("securestore-conf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var key = Data(count: 32)
        for i in 0..<32 { key[i] = UInt8.random(in: 0...255) }
        return try SQLiteStore(path: dir.appendingPathComponent("store.db").path, key: .raw(key),
                               configuration: StoreConfiguration(accessGroups: groups))
    }

    /// The backends under test (the reference model is run as well, as its own subject).
    static let backends: [ConformanceSubject] = [inMemory, sqlite]

    static let all: [ConformanceSubject] = [.reference] + backends
}
