public import SecureStoreCore
// StoreKey and the other key types are SecureStoreCrypto's (a product of its own): a program that names them
// imports it.
public import SecureStoreCrypto

/// A store in a PostgreSQL database, shared by every process and machine that uses the same URL,
/// namespace and key; the server sees only ciphertexts and keyed indexes.
public typealias PostgresStore = Keychain<PostgresBackend>

extension Keychain where Backend == PostgresBackend {
    /// Opens the store in `namespace` at `url` (a libpq URL without a password), creating the schema and the
    /// namespace on first use. See ``PostgresBackend/init(url:key:namespace:passwordEnv:connectTimeout:statementTimeout:lockTimeout:poolSize:rememberHost:passphraseCost:creatingStore:)``.
    public convenience init(url: String, key: StoreKey = .defaultKeyFile, namespace: String = "securestore",
                            passwordEnv: String? = nil, configuration: StoreConfiguration = StoreConfiguration(),
                            connectTimeout: Duration = .seconds(5), statementTimeout: Duration = .seconds(10),
                            lockTimeout: Duration = .seconds(5), poolSize: Int = PostgresBackend.defaultPoolSize,
                            rememberHost: Bool = true,
                            passphraseCost: PassphraseCost = .interactive, creatingStore: Bool = true) throws(SecureStoreError) {
        try self.init(backend: PostgresBackend(url: url, key: key, namespace: namespace, passwordEnv: passwordEnv,
                                               connectTimeout: connectTimeout, statementTimeout: statementTimeout,
                                               lockTimeout: lockTimeout, poolSize: poolSize, rememberHost: rememberHost,
                                               passphraseCost: passphraseCost, creatingStore: creatingStore),
                      configuration: configuration)
    }

    /// Re-encrypts every item under `newKey` in one transaction; other holders of the old key then fail to
    /// write (`authFailed`). See ``PostgresBackend/rekey(to:passphraseCost:)``.
    public func rekey(to newKey: StoreKey, passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        try backend.rekey(to: newKey, passphraseCost: passphraseCost)
    }
}
