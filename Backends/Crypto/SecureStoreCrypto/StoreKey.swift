public import SecureStoreCore
public import Foundation
import SecureStorePaths

/// Where a store's 256-bit master key comes from (shared by every encrypted backend).
public enum StoreKey: Sendable {
    /// A file of 32 random bytes, created (mode 0600) with a new store; refused unless it is a regular file of
    /// this user that group and others may neither read nor write. A store that exists is never given a new
    /// key file: a missing one is an error.
    case keyFile(String)
    /// A passphrase stretched with Argon2id (salt and costs are stored with the store).
    case passphrase(Data)
    /// The 32 key bytes themselves.
    case raw(Data)
    /// The key file at ``StoreKey/defaultKeyFilePath``.
    case defaultKeyFile
    /// A passphrase store opened with the master key an unlock left in the kernel keyring for it (see
    /// `SQLiteStore.unlock(for:)`): no Argon2id. When there is none, it expired, or it does not open the
    /// store, `orPassphrase` is called for the passphrase (`true` when a new store is being created) and it
    /// is stretched as for ``passphrase(_:)-swift.enum.case``; it may ask a person, or throw.
    case unlocked(orPassphrase: @Sendable (_ newStore: Bool) throws(SecureStoreError) -> Data)

    /// A passphrase given as text (its UTF-8 bytes).
    public static func passphrase(_ text: String) -> StoreKey { .passphrase(Data(text.utf8)) }

    /// `$XDG_CONFIG_HOME/securestore/store.key` (else `~/.config/securestore/store.key`).
    public static var defaultKeyFilePath: String {
        XDG.configFolder() + "/store.key"
    }

    /// Whether the master key is stretched from a passphrase (Argon2id).
    package var isPassphrase: Bool {
        switch self {
        case .passphrase, .unlocked: true
        case .keyFile, .raw, .defaultKeyFile: false
        }
    }

    /// The 32 bytes of a raw or file key (the caller zeroes them). A missing key file is created only when
    /// `creating` (a new store); the key file of an existing store is never replaced by a new one.
    package func keyBytes(creating: Bool = true) throws(SecureStoreError) -> [UInt8] {
        switch self {
        case .raw(let data):
            guard data.count == Sodium.keyBytes else {
                throw .param("key", "A raw key must be exactly \(Sodium.keyBytes) bytes; got \(data.count).")
            }
            return Array(data)
        case .keyFile(let path):
            return try Files.keyFile(at: path, creating: creating)
        case .defaultKeyFile:
            let path = Self.defaultKeyFilePath
            if creating { try Files.createDirectory((path as NSString).deletingLastPathComponent) }
            return try Files.keyFile(at: path, creating: creating)
        case .passphrase, .unlocked:
            throw SecureStoreError(.internalError, "A passphrase has no key bytes of its own.")
        }
    }
}

extension StoreKey {
    /// What opening a new store with this key would refuse about the key itself, found without creating or
    /// changing anything (for a command that reads a store that does not exist yet, so a broken key setting
    /// is reported first): a raw key must have 32 bytes, and a key file that exists must be one (a regular
    /// file of this user, private, of 32 bytes). A key file that does not exist and a passphrase are fine.
    package func checkWithoutCreating() throws(SecureStoreError) {
        let path: String
        switch self {
        case .raw: var bytes = try keyBytes(creating: false); Sodium.zero(&bytes); return
        case .passphrase, .unlocked: return
        case .keyFile(let file): path = file
        case .defaultKeyFile: path = Self.defaultKeyFilePath
        }
        var entry = stat()
        guard lstat(path, &entry) == 0 else { return }
        var bytes = try Files.keyFile(at: path, creating: false)
        Sodium.zero(&bytes)
    }
}

/// How hard a passphrase is stretched (Argon2id) when a store or a new key is created.
public struct PassphraseCost: Sendable, Hashable {
    public var operations: UInt64
    public var memoryBytes: UInt64

    public init(operations: UInt64, memoryBytes: UInt64) {
        self.operations = operations
        self.memoryBytes = memoryBytes
    }

    /// libsodium's INTERACTIVE limits (about 64 MiB, a fraction of a second).
    public static let interactive = PassphraseCost(operations: Sodium.interactiveOps, memoryBytes: Sodium.interactiveMem)
    /// libsodium's MODERATE limits (256 MiB, about a second): for files that travel, such as exports, which
    /// an attacker who has a copy can try passphrases on at leisure.
    public static let moderate = PassphraseCost(operations: Sodium.moderateOps, memoryBytes: Sodium.moderateMem)
    /// libsodium's minimum limits: for tests only.
    public static let minimum = PassphraseCost(operations: Sodium.minimumOps, memoryBytes: Sodium.minimumMem)

    /// The most a store may demand: 1 GiB of memory (libsodium's SENSITIVE level).
    public static let maxMemoryBytes: UInt64 = 1 << 30
    /// The most passes a store may demand.
    public static let maxOperations: UInt64 = 16
    /// The most work a store may demand, passes × memory: SENSITIVE's 4 passes over 1 GiB (a few seconds).
    public static let maxWork: UInt64 = 4 << 30

    /// Why these costs are not allowed (nil when they are): below libsodium's minimum or over the limits
    /// above. The costs are read from the store file, so without limits a hostile file could make opening
    /// it take any amount of memory and time.
    package var problem: String? {
        if operations < Sodium.minimumOps || memoryBytes < Sodium.minimumMem {
            return "below libsodium's minimum (\(Sodium.minimumOps) passes, \(Sodium.minimumMem) bytes)"
        }
        if memoryBytes > Self.maxMemoryBytes {
            return "\(memoryBytes) bytes of memory; the limit is \(Self.maxMemoryBytes) (1 GiB)"
        }
        if operations > Self.maxOperations {
            return "\(operations) passes; the limit is \(Self.maxOperations)"
        }
        if operations.multipliedReportingOverflow(by: memoryBytes).overflow || operations * memoryBytes > Self.maxWork {
            return "\(operations) passes over \(memoryBytes) bytes; the limit is \(Self.maxWork) bytes × passes (4 passes over 1 GiB)"
        }
        return nil
    }
}
