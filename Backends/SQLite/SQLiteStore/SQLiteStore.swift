public import SecureStoreCore
import Foundation
import SecureStorePaths
// StoreKey and the other key types are SecureStoreCrypto's (a product of its own): a program that names them
// imports it.
public import SecureStoreCrypto

/// A store in an encrypted SQLite file.
public typealias SQLiteStore = Keychain<SQLiteBackend>

extension Keychain where Backend == SQLiteBackend {
    /// Opens (creating when absent) the store at `path` (default: ``SQLiteBackend/defaultPaths()``).
    public convenience init(path: String? = nil, key: StoreKey = .defaultKeyFile,
                            configuration: StoreConfiguration = StoreConfiguration(),
                            passphraseCost: PassphraseCost = .interactive, readOnly: Bool = false,
                            readerConnections: Int = SQLiteBackend.defaultReaderConnections) throws(SecureStoreError) {
        var file: String
        if let path { file = path } else { file = try SQLiteBackend.defaultPaths(creatingDirectories: true).database }
        try self.init(backend: SQLiteBackend(path: file, key: key, passphraseCost: passphraseCost, readOnly: readOnly,
                                             readerConnections: readerConnections),
                      configuration: configuration)
    }

    /// Re-encrypts every item under `newKey`; afterwards only `newKey` opens the store.
    public func rekey(to newKey: StoreKey, passphraseCost: PassphraseCost = .interactive) throws(SecureStoreError) {
        try backend.rekey(to: newKey, passphraseCost: passphraseCost)
    }

    /// Keeps the master key of this passphrase store in the kernel keyring for `duration`
    /// (``SQLiteBackend/unlock(for:)``); ``SQLiteBackend/lock(path:)`` drops it.
    public func unlock(for duration: Duration) throws(SecureStoreError) {
        try backend.unlock(for: duration)
    }
}

extension SQLiteBackend {
    /// `$XDG_DATA_HOME/securestore/store.db` (else `~/.local/share/securestore/store.db`) and
    /// `$XDG_CONFIG_HOME/securestore/store.key` (else `~/.config/securestore/store.key`).
    public static func defaultPaths() -> (database: String, keyFile: String) {
        (XDG.dataFolder() + "/store.db", StoreKey.defaultKeyFilePath)
    }

    static func defaultPaths(creatingDirectories: Bool) throws(SecureStoreError) -> (database: String, keyFile: String) {
        let paths = defaultPaths()
        for file in [paths.database, paths.keyFile] {
            try Files.createDirectory((file as NSString).deletingLastPathComponent)
        }
        return paths
    }
}
