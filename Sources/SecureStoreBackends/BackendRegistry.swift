public import Foundation
public import SecureStoreCore

/// A JSON value from a configuration file.
public enum ConfigValue: Sendable, Hashable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([ConfigValue])
    case object([String: ConfigValue])
    case null

    var typeName: String {
        switch self {
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .array: "an array"
        case .object: "an object"
        case .null: "null"
        }
    }
}

/// One backend's configuration section, with typed accessors that name the file and key on error.
public struct BackendSettings: Sendable {
    /// The section's values (`{"path": …, "keyFile": …}` for SQLite).
    public let values: [String: ConfigValue]
    /// Where the values came from, for messages (`"/home/u/.config/securestore/config.json, section \"sqlite\""`).
    public let source: String
    /// The environment, for settings that name environment variables (a passphrase is never in the file).
    public let environment: [String: String]
    /// Asks a person for a passphrase the settings name but the environment lacks; nil when there is nobody to
    /// ask (a script), and a missing passphrase is then an error. The CLI sets it when stdin is a terminal.
    public var askPassphrase: PassphrasePrompt?
    /// Whether opening may create a store that does not exist yet (the default). False for work that only
    /// reads or changes existing items (the CLI's `get`, `find`, `update`, `delete`, `clear`, `export`): a backend
    /// whose store is missing then throws `itemNotFound` and creates nothing (no file, no key).
    public var createsStore = true

    public init(values: [String: ConfigValue] = [:], source: String = "defaults",
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
        self.source = source
        self.environment = environment
    }

    /// The string at `key`, or `nil` when absent. Throws `param` naming the source and key for another type.
    public func string(_ key: String) throws(SecureStoreError) -> String? {
        switch values[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        case let other?:
            throw .param(key, "\(source): \"\(key)\" must be a string, not \(other.typeName).")
        }
    }

    /// The strings at `key` (a string array), or `nil` when absent.
    public func strings(_ key: String) throws(SecureStoreError) -> [String]? {
        switch values[key] {
        case nil, .null?: return nil
        case .array(let a)?:
            var out: [String] = []
            for v in a {
                guard case .string(let s) = v else {
                    throw .param(key, "\(source): \"\(key)\" must be an array of strings.")
                }
                out.append(s)
            }
            return out
        case let other?:
            throw .param(key, "\(source): \"\(key)\" must be an array of strings, not \(other.typeName).")
        }
    }
}

/// Asks for a passphrase: `prompt` says for which store, `confirm` asks twice (a new store or key). The bytes
/// typed, without the line end.
public typealias PassphrasePrompt = @Sendable (_ prompt: String, _ confirm: Bool) throws(SecureStoreError) -> Data

/// How a registered backend is built and checked.
public struct BackendFactory: Sendable {
    /// The backend's name, as chosen by `--backend`, `SECURESTORE_BACKEND` or `"backend"` in the file.
    public let name: String
    /// The key of its section in the config file (`"sqlite"`, `"secretService"`).
    public let section: String
    /// The keys its section may hold; any other key is an error naming it.
    public let allowedKeys: Set<String>
    /// The keys of its section that name files (`"path"`, `"keyFile"`): a relative one is resolved against the
    /// config file's folder, so one config names one file whatever the working folder.
    public let pathKeys: Set<String>
    /// One line on what it is.
    public let summary: String
    /// What its stores promise (`nil`: not declared), shown by `securestore backends` without opening one.
    public let guarantees: StorageGuarantees?
    /// Builds a store from its settings. Must fail with a clear error rather than fall back to anything.
    public let make: @Sendable (BackendSettings) throws(SecureStoreError) -> any SecureStore
    /// Whether it can be used here, and why not (without opening or changing any store).
    public let availability: @Sendable (BackendSettings) -> Result<Void, SecureStoreError>
    /// What `securestore backends` adds to "available", asked only after ``availability`` succeeded (the Secret
    /// Service: which program answers, e.g. "KeePassXC (keepassxc, pid 4242)").
    public var detail: @Sendable () -> String? = { nil }

    public init(name: String, section: String, allowedKeys: Set<String>, pathKeys: Set<String> = [], summary: String,
                guarantees: StorageGuarantees? = nil,
                availability: @escaping @Sendable (BackendSettings) -> Result<Void, SecureStoreError> = { _ in .success(()) },
                make: @escaping @Sendable (BackendSettings) throws(SecureStoreError) -> any SecureStore) {
        self.name = name
        self.section = section
        self.allowedKeys = allowedKeys
        self.pathKeys = pathKeys
        self.summary = summary
        self.guarantees = guarantees
        self.make = make
        self.availability = availability
    }
}

/// The backends that can be chosen by name. Ours register themselves through `SecureStoreBackends`; a
/// backend defined anywhere else registers the same way and is then chosen exactly like ours.
public enum BackendRegistry {
    private static let factories = Locked<[String: BackendFactory]>([:])
    private static let defaultName = Locked("sqlite")

    /// The backend chosen when nothing else chooses: `"sqlite"` unless the program's built-in backends set
    /// another (`SecureStoreBackends` picks `"secret-service"` when SQLite is not built in).
    public static var defaultBackend: String { defaultName.withLock { $0 } }

    /// Sets the backend chosen when nothing else chooses.
    public static func setDefault(_ name: String) {
        defaultName.withLock { $0 = name }
    }

    /// Adds (or replaces) a backend under its name.
    public static func register(_ factory: BackendFactory) {
        factories.withLock { $0[factory.name] = factory }
    }

    /// The backend registered under `name`.
    public static func factory(named name: String) -> BackendFactory? {
        factories.withLock { $0[name] }
    }

    /// Every registered backend, by name.
    public static var all: [BackendFactory] {
        factories.withLock { $0.values.sorted { $0.name < $1.name } }
    }
}
