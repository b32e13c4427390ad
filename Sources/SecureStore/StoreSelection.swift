public import Foundation

/// Which backend a program uses, and why.
///
/// The order is the same for the library, the SecItem module and the CLI: an explicit choice in code or on
/// the command line, then the environment (`SECURESTORE_BACKEND` names a backend, `SECURESTORE_CONFIG` a
/// config file), then `$XDG_CONFIG_HOME/securestore/config.json` (or `~/.config/securestore/config.json`),
/// then the default backend. A backend that cannot be used is an error; nothing ever falls back.
public struct StoreSelection: Sendable {
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        case explicit
        case environment(variable: String)
        case configFile(path: String)
        case defaultChoice

        public var description: String {
            switch self {
            case .explicit: "chosen explicitly (in code or on the command line)"
            case .environment(let v): "chosen by the environment variable \(v)"
            case .configFile(let p): "chosen by the config file \(p)"
            case .defaultChoice: "the default (no choice in code, environment or config file)"
            }
        }
    }

    /// The chosen backend's name.
    public let backend: String
    /// Why it was chosen.
    public let reason: Reason
    /// The config file that was read, if any.
    public let configFile: String?
    /// The parsed config file: the chosen backend's section is `settings(for:)`.
    public let sections: [String: [String: ConfigValue]]
    public let environment: [String: String]

    /// The name used when nothing else chooses (``BackendRegistry/defaultBackend``).
    public static var defaultBackend: String { BackendRegistry.defaultBackend }

    /// Works out the selection.
    /// - Parameters:
    ///   - backend: an explicit backend name (code or `--backend`), wins over everything.
    ///   - configFile: an explicit config file (`--config`), read instead of `SECURESTORE_CONFIG` or the XDG file.
    /// - Throws: `param` naming the file and key for an unreadable or invalid config file or an unknown backend.
    public static func resolve(backend explicitBackend: String? = nil, configFile explicitConfig: String? = nil,
                               environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(SecureStoreError) -> StoreSelection
    {
        var path: String? = explicitConfig
        if path == nil, let env = environment["SECURESTORE_CONFIG"], !env.isEmpty {
            path = env
        }
        var mustExist = path != nil
        if path == nil {
            path = XDG.configFolder(environment: environment) + "/config.json"
            mustExist = false
        }
        var fileBackend: String?
        var sections: [String: [String: ConfigValue]] = [:]
        var readPath: String?
        if let path, mustExist || FileManager.default.fileExists(atPath: path) {
            (fileBackend, sections) = try ConfigFile.parse(path: path)
            readPath = path
        }

        let chosen: String
        let reason: Reason
        if let explicitBackend {
            chosen = explicitBackend
            reason = .explicit
        } else if let env = environment["SECURESTORE_BACKEND"], !env.isEmpty {
            chosen = env
            reason = .environment(variable: "SECURESTORE_BACKEND")
        } else if let fileBackend, let readPath {
            chosen = fileBackend
            // A file given explicitly (`--config`) is named as the reason, like any other config file.
            reason = .configFile(path: readPath)
        } else {
            chosen = defaultBackend
            reason = .defaultChoice
        }
        guard BackendRegistry.factory(named: chosen) != nil else {
            let known = BackendRegistry.all.map(\.name).joined(separator: ", ")
            throw .param("backend", "Unknown backend \"\(chosen)\" (\(reason)); known backends: \(known.isEmpty ? "none registered" : known).")
        }
        return StoreSelection(backend: chosen, reason: reason, configFile: readPath, sections: sections, environment: environment)
    }

    /// The settings of `backend`'s section (empty when the file has none).
    public func settings(for factory: BackendFactory, askingPassphrase: PassphrasePrompt? = nil) -> BackendSettings {
        var settings = BackendSettings(values: sections[factory.section] ?? [:],
                                       source: configFile.map { "\($0), section \"\(factory.section)\"" } ?? "defaults",
                                       environment: environment)
        settings.askPassphrase = askingPassphrase
        return settings
    }

    /// Opens the selected store. Never falls back to another backend.
    /// - Parameters:
    ///   - askingPassphrase: asks a person for a passphrase the config names but the environment lacks.
    ///   - creatingStore: false to open only a store that exists (``BackendSettings/createsStore``).
    /// - Throws: the backend's error, prefixed with which backend and why it was selected; `itemNotFound`
    ///   as the backend said it when `creatingStore` is false and there is no store yet.
    public func open(askingPassphrase: PassphrasePrompt? = nil, creatingStore: Bool = true) throws(SecureStoreError)
        -> any SecureStore
    {
        guard let factory = BackendRegistry.factory(named: backend) else {
            throw .param("backend", "Unknown backend \"\(backend)\".")
        }
        do throws(SecureStoreError) {
            var settings = settings(for: factory, askingPassphrase: askingPassphrase)
            settings.createsStore = creatingStore
            return try factory.make(settings)
        } catch {
            if error.code == .itemNotFound, !creatingStore { throw error }
            var e = error
            e.message = "backend \"\(backend)\" (\(reason)) cannot be used: \(error.message)"
            throw e
        }
    }
}

/// The JSON config file: `{"backend": "sqlite", "sqlite": {…}, "secretService": {…}, …}`.
package enum ConfigFile {
    /// The largest config file read (a config file is a few hundred bytes; this stops a huge or endless file).
    package static let maxBytes = 1 << 20

    static func parse(path: String) throws(SecureStoreError) -> (String?, [String: [String: ConfigValue]]) {
        // At most maxBytes + 1 bytes are read (parse(data:) rejects more): no stat dictionary, no endless read.
        guard let handle = FileHandle(forReadingAtPath: path),
              let data = try? handle.read(upToCount: maxBytes + 1) ?? Data() else {
            throw .param(path, "Cannot read the config file \(path): it does not exist or is not readable.")
        }
        try? handle.close()
        return try parse(data: data, path: path)
    }

    /// Parses the bytes of a config file; `path` only names it in messages.
    package static func parse(data: Data, path: String) throws(SecureStoreError)
        -> (backend: String?, sections: [String: [String: ConfigValue]])
    {
        guard data.count <= maxBytes else {
            throw .param(path, "The config file \(path) is larger than \(maxBytes) bytes; it is not a SecureStore config file.")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw .param(path, "The config file \(path) is not valid JSON.")
        }
        guard let top = object as? [String: Any] else {
            throw .param(path, "The config file \(path) must hold a JSON object.")
        }
        var backend: String?
        var sections: [String: [String: ConfigValue]] = [:]
        let factories = BackendRegistry.all
        for key in top.keys.sorted() {
            guard let raw = top[key] else { continue }
            let value = convert(raw)
            if key == "backend" {
                guard case .string(let s) = value else {
                    throw .param("backend", "\(path): \"backend\" must be a string, not \(value.typeName).")
                }
                backend = s
                continue
            }
            guard let factory = factories.first(where: { $0.section == key }) else {
                let known = (["backend"] + factories.map(\.section)).joined(separator: ", ")
                // An empty key cannot name itself: the error names the file instead.
                throw .param(key.isEmpty ? path : key, "\(path): unknown key \"\(key)\"; expected one of: \(known).")
            }
            guard case .object(let section) = value else {
                throw .param(key, "\(path): \"\(key)\" must be an object, not \(value.typeName).")
            }
            for inner in section.keys.sorted() where !factory.allowedKeys.contains(inner) {
                throw .param("\(key).\(inner)", "\(path): unknown key \"\(inner)\" in \"\(key)\"; expected one of: "
                    + factory.allowedKeys.sorted().joined(separator: ", ") + ".")
            }
            sections[key] = section
        }
        return (backend, sections)
    }

    package static func convert(_ raw: Any) -> ConfigValue {
        switch raw {
        case let s as String: return .string(s)
        case let n as NSNumber:
            // JSONSerialization gives booleans as NSNumber too; their ObjC type is "c".
            return String(cString: n.objCType) == "c" ? .bool(n.boolValue) : .number(n.doubleValue)
        case let b as Bool: return .bool(b)
        case let a as [Any]: return .array(a.map(convert))
        case let o as [String: Any]: return .object(o.mapValues(convert))
        default: return .null
        }
    }
}
