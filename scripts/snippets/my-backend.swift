// The `MyBackend` of "Implementing a backend", made real for the article's later blocks: it keeps its
// records in an `InMemoryBackend`.
final class MyBackend: StorageBackend {
    static let guarantees = InMemoryBackend.guarantees
    private let records = InMemoryBackend()

    init(path: String = "/var/lib/app") {}
    static func fresh() -> MyBackend { MyBackend() }

    var backendDescription: String { "my-backend" }

    func withTransaction<T>(writing: Bool, _ body: (inout InMemoryBackend.State) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        try records.withTransaction(writing: writing, body)
    }
}
