public import SecureStore
public import SecureStoreCrypto

/// A store in a PostgreSQL database, shared by every process and machine that uses the same URL,
/// namespace and key; the server sees only ciphertexts and keyed indexes.
public typealias PostgresStore = Keychain<PostgresBackend>

extension Keychain where Backend == PostgresBackend {
    /// Opens the store in `namespace` at `url` (a libpq URL without a password), creating the schema and the
    /// namespace on first use. See ``PostgresBackend/init(url:key:namespace:passwordEnv:connectTimeout:statementTimeout:passphraseCost:)``.
    public convenience init(url: String, key: StoreKey = .defaultKeyFile, namespace: String = "securestore",
                            passwordEnv: String? = nil, configuration: StoreConfiguration = StoreConfiguration(),
                            connectTimeout: Duration = .seconds(5), statementTimeout: Duration = .seconds(10),
                            passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        try self.init(backend: PostgresBackend(url: url, key: key, namespace: namespace, passwordEnv: passwordEnv,
                                               connectTimeout: connectTimeout, statementTimeout: statementTimeout,
                                               passphraseCost: passphraseCost),
                      configuration: configuration)
    }
}
