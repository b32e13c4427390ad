public import SecureStore
import Foundation
import InMemoryStore
import SQLiteStore
import SecretServiceStore
import PostgresStore

/// Registers this package's backends with the ``BackendRegistry`` (idempotent). The CLI, the SecItem
/// module's default store and ``open(backend:configFile:)`` call it; a program may call it too.
public enum BuiltinBackends {
    private static let once: Void = {
        BackendRegistry.register(BackendFactory(
            name: "memory", section: "memory", allowedKeys: ["accessGroups"],
            summary: "in this process's memory only (tests, ephemeral processes)"
        ) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try InMemoryStore(configuration: StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? ["securestore"]))
        })
        BackendRegistry.register(BackendFactory(
            name: "sqlite", section: "sqlite", allowedKeys: ["path", "keyFile", "passphraseEnv", "accessGroups"],
            summary: "encrypted SQLite file (the embedded default)",
            availability: { s in
                Result { () throws(SecureStoreError) in _ = try sqliteKey(s) }
            }
        ) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try SQLiteStore(path: try s.string("path"), key: try sqliteKey(s),
                            configuration: StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? ["securestore"]))
        })
        BackendRegistry.register(BackendFactory(
            name: "secret-service", section: "secretService", allowedKeys: ["collection", "namespace", "accessGroups"],
            summary: "the desktop keyring over D-Bus (gnome-keyring, KeePassXC)",
            availability: { s in
                Result { () throws(SecureStoreError) in _ = try secretService(s) }
            }
        ) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try secretService(s)
        })
        BackendRegistry.register(BackendFactory(
            name: "postgres", section: "postgres",
            allowedKeys: ["url", "passwordEnv", "keyFile", "passphraseEnv", "namespace", "accessGroups"],
            summary: "PostgreSQL shared by many machines, end-to-end encrypted (the server sees no secret)",
            availability: { s in
                Result { () throws(SecureStoreError) in try postgresSettingsCheck(s) }
            }
        ) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try postgres(s)
        })
    }()

    /// The PostgreSQL store from settings: `url` (required, no password in it), `passwordEnv`, the key as for
    /// SQLite (`passphraseEnv` > `keyFile` > the default key file), `namespace` (default `securestore`).
    static func postgres(_ s: BackendSettings) throws(SecureStoreError) -> PostgresStore {
        let (url, passwordEnv) = try postgresSettingsCheck(s)
        return try PostgresStore(url: url, key: try sqliteKey(s), namespace: try s.string("namespace") ?? "securestore",
                                 passwordEnv: passwordEnv,
                                 configuration: StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? ["securestore"]))
    }

    /// Checks the PostgreSQL settings without connecting: a URL is given, the password and passphrase
    /// variables they name are set, the key is usable.
    @discardableResult
    static func postgresSettingsCheck(_ s: BackendSettings) throws(SecureStoreError) -> (url: String, passwordEnv: String?) {
        guard let url = try s.string("url"), !url.isEmpty else {
            throw .param("url", "\(s.source): the postgres backend needs \"url\" (a libpq URL such as postgresql://user@host:5432/db).")
        }
        let passwordEnv = try s.string("passwordEnv")
        if let passwordEnv, (s.environment[passwordEnv] ?? "").isEmpty {
            throw SecureStoreError(.notAvailable,
                "\(s.source): passwordEnv names \(passwordEnv), but that environment variable is not set; export it.")
        }
        _ = try sqliteKey(s)
        return (url, passwordEnv)
    }

    static func secretService(_ s: BackendSettings) throws(SecureStoreError) -> SecretServiceStore {
        let namespace = try s.string("namespace") ?? "securestore"
        return try SecretServiceStore(collection: try s.string("collection") ?? "default", namespace: namespace,
                                      configuration: StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? [namespace]))
    }

    /// The SQLite key from settings: a passphrase from the environment variable `passphraseEnv` names, else
    /// `keyFile`, else the default key file. The passphrase itself is never in the file.
    ///
    /// When `passphraseEnv` names a variable that is not set, the store opens with the key an unlock left in
    /// the kernel keyring (`securestore unlock`), else with a passphrase `askPassphrase` gets from a person,
    /// else it fails saying what to do.
    static func sqliteKey(_ s: BackendSettings) throws(SecureStoreError) -> SQLiteKey {
        if let variable = try s.string("passphraseEnv") {
            if let passphrase = s.environment[variable], !passphrase.isEmpty { return .passphrase(passphrase) }
            let source = s.source, ask = s.askPassphrase
            return .unlocked(orPassphrase: { (newStore: Bool) throws(SecureStoreError) -> Data in
                guard let ask else {
                    throw SecureStoreError(.interactionNotAllowed, "\(source): passphraseEnv names \(variable), but that "
                        + "environment variable is not set and the store is not unlocked; export it, run "
                        + "`securestore unlock` on a terminal, or run on a terminal to be asked.")
                }
                let passphrase = try ask(newStore ? "New store passphrase: " : "Store passphrase: ", newStore)
                guard !passphrase.isEmpty else { throw .param(variable, "The passphrase is empty.") }
                return passphrase
            })
        }
        if let file = try s.string("keyFile") { return .keyFile(file) }
        return .defaultKeyFile
    }

    public static func register() { once }

    /// The file of the SQLite store `selection` selects (its `path`, else the default), or nil when it selects
    /// another backend. For `lock`, which needs no key.
    public static func sqlitePath(_ selection: StoreSelection) throws(SecureStoreError) -> String? {
        guard selection.backend == "sqlite", let factory = BackendRegistry.factory(named: "sqlite") else { return nil }
        return try selection.settings(for: factory).string("path") ?? SQLiteBackend.defaultPaths().database
    }

    /// Resolves the selection (explicit > environment > config file > default) and opens it.
    public static func open(backend: String? = nil, configFile: String? = nil) throws(SecureStoreError) -> any SecureStore {
        register()
        return try StoreSelection.resolve(backend: backend, configFile: configFile).open()
    }
}
