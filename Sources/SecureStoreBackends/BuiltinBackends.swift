public import SecureStoreCore
import Foundation
import SecureStoreInMemory
#if SQLite
import SecureStoreSQLite
#endif
#if SQLite || Postgres
import SecureStoreCrypto
#endif
#if SecretService
import SecureStoreSecretService
#endif
#if Postgres
import SecureStorePostgres
#endif

/// Registers this package's backends with the ``BackendRegistry`` (idempotent). The CLI, the SecItem
/// module's default store and ``open(backend:configFile:)`` call it; a program may call it too.
public enum BuiltinBackends {
    /// The backends this package knows, whether built in or not: name, config section and keys, and the
    /// package trait that builds it in. One copy, used for registration and for the "not built" errors.
    private static let memory = Descriptor(name: "memory", section: "memory", allowedKeys: ["accessGroups"], pathKeys: [],
        summary: "in this process's memory only (tests, ephemeral processes)", trait: nil)
    private static let sqlite = Descriptor(name: "sqlite", section: "sqlite",
        allowedKeys: ["path", "keyFile", "passphraseEnv", "accessGroups"], pathKeys: ["path", "keyFile"],
        summary: "encrypted SQLite file (the embedded default)", trait: "SQLite")
    private static let secretServiceBackend = Descriptor(name: "secret-service", section: "secretService",
        allowedKeys: ["collection", "namespace", "accessGroups"], pathKeys: [],
        summary: "the desktop keyring over D-Bus (gnome-keyring, KeePassXC)", trait: "SecretService")
    private static let postgresBackend = Descriptor(name: "postgres", section: "postgres",
        allowedKeys: ["url", "passwordEnv", "keyFile", "passphraseEnv", "namespace", "accessGroups",
                      "connectTimeout", "statementTimeout", "lockTimeout", "poolSize"], pathKeys: ["keyFile"],
        summary: "PostgreSQL shared by many machines, end-to-end encrypted (the server sees no secret)",
        trait: "Postgres")

    private struct Descriptor {
        let name: String, section: String, allowedKeys: Set<String>, pathKeys: Set<String>, summary: String, trait: String?

        func factory(guarantees: StorageGuarantees,
                     availability: @escaping @Sendable (BackendSettings) -> Result<Void, SecureStoreError> = { _ in .success(()) },
                     make: @escaping @Sendable (BackendSettings) throws(SecureStoreError) -> any SecureStore) -> BackendFactory {
            BackendFactory(name: name, section: section, allowedKeys: allowedKeys, pathKeys: pathKeys, summary: summary,
                           guarantees: guarantees, availability: availability, make: make)
        }

        /// A backend whose trait is disabled in this build: its section is still valid in a config file, but
        /// choosing it is an error that names the trait to enable.
        var unbuilt: BackendFactory {
            let error = SecureStoreError(.notAvailable,
                "the \(name) backend is not built into this program: enable the SecureStore package trait \"\(trait ?? "")\" "
                + "(`.package(path: …, traits: [\"\(trait ?? "")\"])` in Package.swift, or `swift build --traits \(trait ?? "")`).")
            return BackendFactory(name: name, section: section, allowedKeys: allowedKeys, pathKeys: pathKeys,
                                  summary: "not built in (enable the package trait \(trait ?? ""))",
                                  availability: { _ in .failure(error) }) { (_: BackendSettings) throws(SecureStoreError) -> any SecureStore in
                throw error
            }
        }
    }

    /// The backends built into this program (their traits enabled), by name.
    public static var builtIn: [String] {
        var names = ["memory"]
        #if SQLite
        names.append("sqlite")
        #endif
        #if SecretService
        names.append("secret-service")
        #endif
        #if Postgres
        names.append("postgres")
        #endif
        return names
    }

    private static let once: Void = {
        BackendRegistry.register(memory.factory(guarantees: InMemoryBackend.guarantees) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try InMemoryStore(configuration: StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? [StoreConfiguration.defaultAccessGroup]))
        })
        #if SQLite
        BackendRegistry.register(sqlite.factory(guarantees: SQLiteBackend.guarantees, availability: { s in
            Result { () throws(SecureStoreError) in _ = try storeKey(s, cached: true) }
        }) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            // Every setting is checked before anything is looked at or opened: a bad config is a bad config (exit 2),
            // never "there is no store".
            let key = try storeKey(s, cached: true)
            let configuration = StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? [StoreConfiguration.defaultAccessGroup])
            if let path = try s.string("path") { try SQLiteBackend.checkPath(path) }
            if !s.createsStore {
                let path = try s.string("path") ?? SQLiteBackend.defaultPaths().database
                var entry = stat()
                if lstat(path, &entry) != 0, errno == ENOENT {
                    // What the settings would refuse comes first; then: no store, and nothing is made.
                    try key.checkWithoutCreating()
                    if let variable = try s.string("passphraseEnv"), (s.environment[variable] ?? "").isEmpty,
                       s.askPassphrase == nil {
                        throw passphraseUnavailable(s.source, variable)
                    }
                    throw SecureStoreError(.itemNotFound, "There is no store at \(path) yet: nothing has been stored in it.")
                }
            }
            return try SQLiteStore(path: try s.string("path"), key: key, configuration: configuration)
        })
        #else
        BackendRegistry.register(sqlite.unbuilt)
        #endif
        #if SecretService
        var secretServiceFactory = secretServiceBackend.factory(guarantees: SecretServiceBackend.guarantees, availability: { s in
            // A report starts nothing: without a session bus address, connecting would autolaunch a bus
            // (dbus-launch, when DISPLAY is set) and create files; say so instead.
            guard let bus = s.environment["DBUS_SESSION_BUS_ADDRESS"], !bus.isEmpty else {
                return .failure(SecureStoreError(.notAvailable, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set); "
                    + "nothing was started to look. Run inside a desktop session, or start one with dbus-run-session."))
            }
            return Result { () throws(SecureStoreError) in _ = try secretService(s) }
        }) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try secretService(s)
        }
        secretServiceFactory.detail = { SecretServiceProvider.current().map { "provider: \($0)" } }
        BackendRegistry.register(secretServiceFactory)
        #else
        BackendRegistry.register(secretServiceBackend.unbuilt)
        #endif
        #if Postgres
        BackendRegistry.register(postgresBackend.factory(guarantees: PostgresBackend.guarantees, availability: { s in
            Result { () throws(SecureStoreError) in try PostgresBackend.checkLibrary(); _ = try postgresSettingsCheck(s) }
        }) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try postgres(s)
        })
        #else
        BackendRegistry.register(postgresBackend.unbuilt)
        #endif
        // The default store: the embedded SQLite file when built in, else the desktop keyring when built in.
        // With neither, the default stays "sqlite", whose error names the trait to enable; nothing falls
        // back to memory (a keychain that forgets everything at exit).
        #if !SQLite && SecretService
        BackendRegistry.setDefault("secret-service")
        #endif
    }()

    #if Postgres
    /// The PostgreSQL store from settings: `url` (required, no password in it), `passwordEnv`, the key as for
    /// SQLite (`passphraseEnv` > `keyFile` > the default key file), `namespace` (default `securestore`), the
    /// deadlines in seconds `connectTimeout` (per host, default 5), `statementTimeout` (each statement and
    /// COMMIT, default 10), `lockTimeout` (waiting for another writer, default 5), and `poolSize` (default 4).
    static func postgres(_ s: BackendSettings) throws(SecureStoreError) -> PostgresStore {
        let (url, passwordEnv) = try postgresSettingsCheck(s)
        func seconds(_ key: String, _ fallback: Double) throws(SecureStoreError) -> Duration {
            guard let value = try number(s, key) else { return .milliseconds(Int(fallback * 1000)) }
            guard value >= 0.001, value <= 3600 else {
                throw .param(key, "\(s.source): \"\(key)\" must be a number of seconds from 0.001 to 3600.")
            }
            return .milliseconds(Int((value * 1000).rounded()))
        }
        let poolSize = try number(s, "poolSize") ?? Double(PostgresBackend.defaultPoolSize)
        guard poolSize == poolSize.rounded(), (1...64).contains(poolSize) else {
            throw .param("poolSize", "\(s.source): \"poolSize\" must be a whole number from 1 to 64.")
        }
        return try PostgresStore(url: url, key: try storeKey(s), namespace: try s.string("namespace") ?? "securestore",
                                 passwordEnv: passwordEnv,
                                 configuration: StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? [StoreConfiguration.defaultAccessGroup]),
                                 connectTimeout: try seconds("connectTimeout", 5),
                                 statementTimeout: try seconds("statementTimeout", 10),
                                 lockTimeout: try seconds("lockTimeout", 5), poolSize: Int(poolSize),
                                 creatingStore: s.createsStore)
    }

    /// The number at `key`, or nil when absent.
    static func number(_ s: BackendSettings, _ key: String) throws(SecureStoreError) -> Double? {
        switch s.values[key] {
        case nil, .null?: return nil
        case .number(let n)?: return n
        default: throw .param(key, "\(s.source): \"\(key)\" must be a number.")
        }
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
        _ = try storeKey(s)
        return (url, passwordEnv)
    }

    #endif

    #if SecretService
    static func secretService(_ s: BackendSettings) throws(SecureStoreError) -> SecretServiceStore {
        let namespace = try s.string("namespace") ?? "securestore"
        let groups = try s.strings("accessGroups") ?? SecretServiceStore.defaultAccessGroups(namespace: namespace)
        return try SecretServiceStore(collection: try s.string("collection") ?? "default", namespace: namespace,
                                      configuration: StoreConfiguration(accessGroups: groups))
    }

    #endif

    #if SQLite || Postgres
    /// The store key from settings: a passphrase from the environment variable `passphraseEnv` names, else
    /// `keyFile`, else the default key file (both is an error). The passphrase itself is never in the file.
    ///
    /// A SQLite store (`cached`) opens with the key an unlock left in the kernel keyring (`securestore unlock`)
    /// when there is one, whether or not the variable `passphraseEnv` names is set; otherwise the variable's
    /// passphrase is stretched, or, when it is not set, the passphrase is asked of a person by `askPassphrase`;
    /// with nobody to ask, it fails saying what to do.
    static func storeKey(_ s: BackendSettings, cached: Bool = false) throws(SecureStoreError) -> StoreKey {
        let variable = try s.string("passphraseEnv")
        if variable != nil, try s.string("keyFile") != nil {
            throw .param("keyFile", "\(s.source): both \"keyFile\" and \"passphraseEnv\" are set; the key comes from one "
                + "of them. Remove the one you do not use.")
        }
        if let variable {
            if let passphrase = try SecretText.environment(variable, in: s.environment) {
                // An unlocked store opens with its cached key even where the variable is exported (the shells
                // where people keep it): Argon2id runs only when there is no cached key for this store generation.
                guard cached else { return .passphrase(passphrase) }
                return .unlocked(orPassphrase: { (_: Bool) throws(SecureStoreError) -> Data in passphrase })
            }
            let source = s.source, ask = s.askPassphrase
            guard cached || ask != nil else {
                throw SecureStoreError(.notAvailable,
                    "\(source): passphraseEnv names \(variable), but that environment variable is not set; export it.")
            }
            return .unlocked(orPassphrase: { (newStore: Bool) throws(SecureStoreError) -> Data in
                guard let ask else { throw passphraseUnavailable(source, variable) }
                let passphrase = try ask(newStore ? "New store passphrase: " : "Store passphrase: ", newStore)
                guard !passphrase.isEmpty else { throw .param(variable, "The passphrase is empty.") }
                return passphrase
            })
        }
        if let file = try s.string("keyFile") {
            guard !file.isEmpty else {
                throw .param("keyFile", "\(s.source): \"keyFile\" is empty; give the key file's path, or remove the key.")
            }
            return .keyFile(file)
        }
        return .defaultKeyFile
    }

    /// A passphrase store's passphrase: not in the environment, not unlocked, and nobody to ask.
    static func passphraseUnavailable(_ source: String, _ variable: String) -> SecureStoreError {
        SecureStoreError(.interactionNotAllowed, "\(source): passphraseEnv names \(variable), but that "
            + "environment variable is not set and the store is not unlocked; export it, run "
            + "`securestore unlock` on a terminal, or run on a terminal to be asked.")
    }

    #endif

    public static func register() { once }

    /// The file of the SQLite store `selection` selects (its `path`, else the default), or nil when it selects
    /// another backend or SQLite is not built in. For `lock`, which needs no key.
    public static func sqlitePath(_ selection: StoreSelection) throws(SecureStoreError) -> String? {
        #if SQLite
        guard selection.backend == "sqlite", let factory = BackendRegistry.factory(named: "sqlite") else { return nil }
        return try selection.settings(for: factory).string("path") ?? SQLiteBackend.defaultPaths().database
        #else
        return nil
        #endif
    }

    /// Resolves the selection (explicit > environment > config file > default) and opens it.
    /// - Parameter creatingStore: false to open only a store that exists (`itemNotFound` when there is none,
    ///   and nothing is created: ``BackendSettings/createsStore``).
    public static func open(backend: String? = nil, configFile: String? = nil, creatingStore: Bool = true)
        throws(SecureStoreError) -> any SecureStore
    {
        register()
        return try StoreSelection.resolve(backend: backend, configFile: configFile).open(creatingStore: creatingStore)
    }
}
