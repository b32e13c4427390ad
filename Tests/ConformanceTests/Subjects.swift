import SecureStore
import SecureStoreConformance
import InMemoryStore
import SecretServiceStore

/// Every store implementation the conformance suite runs against. Each backend adds itself here.
enum Subjects {
    static let inMemory = ConformanceSubject(name: "memory") { groups in
        try InMemoryStore(configuration: StoreConfiguration(accessGroups: groups))
    }

    /// gnome-keyring (or any Secret Service) on the session bus; run under scripts/with-keyring.sh.
    /// Every store gets a fresh random namespace, so it starts empty.
    static let secretService = ConformanceSubject(name: "secret-service", differentialOperations: 300) { groups in
        try SecretServiceStore(namespace: "conformance-\(UInt64.random(in: 0...UInt64.max))",
                               configuration: StoreConfiguration(accessGroups: groups))
    }

    /// The backends under test (the reference model is run as well, as its own subject).
    static let backends: [ConformanceSubject] = [inMemory, secretService]

    static let all: [ConformanceSubject] = [.reference] + backends
}
