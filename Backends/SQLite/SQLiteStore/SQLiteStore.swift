public import SecureStore
public import Foundation

/// A store in an encrypted SQLite file.
public typealias SQLiteStore = Keychain<SQLiteBackend>

extension Keychain where Backend == SQLiteBackend {
    /// Opens (creating when absent) the store at `path` (default: ``SQLiteBackend/defaultPaths()``).
    public convenience init(path: String? = nil, key: SQLiteKey = .defaultKeyFile,
                            configuration: StoreConfiguration = StoreConfiguration(),
                            passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        var file: String
        if let path { file = path } else { file = try SQLiteBackend.defaultPaths(creatingDirectories: true).database }
        try self.init(backend: SQLiteBackend(path: file, key: key, passphraseCost: passphraseCost),
                      configuration: configuration)
    }

    /// Re-encrypts every item under `newKey`; afterwards only `newKey` opens the store.
    public func rekey(to newKey: SQLiteKey, passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        try backend.rekey(to: newKey, passphraseCost: passphraseCost)
    }
}

/// Where the store's 256-bit master key comes from.
public enum SQLiteKey: Sendable {
    /// A file of 32 random bytes, created (mode 0600) when absent; refused when group or others may read it.
    case keyFile(String)
    /// A passphrase stretched with Argon2id (salt and costs are stored in the database).
    case passphrase(Data)
    /// The 32 key bytes themselves.
    case raw(Data)
    /// The key file at ``SQLiteBackend/defaultPaths()``.
    case defaultKeyFile

    /// A passphrase given as text (its UTF-8 bytes).
    public static func passphrase(_ text: String) -> SQLiteKey { .passphrase(Data(text.utf8)) }

    /// The 32 bytes of a raw or file key.
    func keyBytes() throws(SecureStoreError) -> [UInt8] {
        switch self {
        case .raw(let data):
            guard data.count == Sodium.keyBytes else {
                throw .param("key", "A raw key must be exactly \(Sodium.keyBytes) bytes; got \(data.count).")
            }
            return Array(data)
        case .keyFile(let path):
            return try Files.keyFile(at: path)
        case .defaultKeyFile:
            return try Files.keyFile(at: SQLiteBackend.defaultPaths(creatingDirectories: true).keyFile)
        case .passphrase:
            throw SecureStoreError(.internalError, "A passphrase has no key bytes of its own.")
        }
    }
}

extension SQLiteBackend {
    /// `$XDG_DATA_HOME/securestore/store.db` (else `~/.local/share/securestore/store.db`) and
    /// `$XDG_CONFIG_HOME/securestore/store.key` (else `~/.config/securestore/store.key`).
    public static func defaultPaths() -> (database: String, keyFile: String) {
        let env = ProcessInfo.processInfo.environment
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        func base(_ variable: String, _ fallback: String) -> String {
            if let value = env[variable], value.hasPrefix("/") { return value }
            return home + "/" + fallback
        }
        return (base("XDG_DATA_HOME", ".local/share") + "/securestore/store.db",
                base("XDG_CONFIG_HOME", ".config") + "/securestore/store.key")
    }

    static func defaultPaths(creatingDirectories: Bool) throws(SecureStoreError) -> (database: String, keyFile: String) {
        let paths = defaultPaths()
        for file in [paths.database, paths.keyFile] {
            try Files.createDirectory((file as NSString).deletingLastPathComponent)
        }
        return paths
    }
}
