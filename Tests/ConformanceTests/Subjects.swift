import SecureStore
import SecureStoreConformance
import InMemoryStore

/// Every store implementation the conformance suite runs against. Each backend adds itself here.
enum Subjects {
    static let inMemory = ConformanceSubject(name: "memory") { groups in
        try InMemoryStore(configuration: StoreConfiguration(accessGroups: groups))
    }

    /// The backends under test (the reference model is run as well, as its own subject).
    static let backends: [ConformanceSubject] = [inMemory]

    static let all: [ConformanceSubject] = [.reference] + backends
}
