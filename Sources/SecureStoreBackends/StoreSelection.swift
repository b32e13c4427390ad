public import Foundation
#if canImport(Glibc)
import Glibc
public import SecureStoreCore
import SecureStorePaths
#endif

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
            // An environment variable left in a shell must not quietly turn a config file's persistent store into
            // one that forgets everything at exit (secrets stored would be lost without a word).
            if let fileBackend, let readPath, fileBackend != env, let from = BackendRegistry.factory(named: fileBackend),
               let to = BackendRegistry.factory(named: env), to.keepsNothing, !from.keepsNothing {
                throw .param("SECURESTORE_BACKEND", "SECURESTORE_BACKEND=\(env) overrides the config file \(readPath), "
                    + "which selects \"\(fileBackend)\", with a backend that keeps nothing after the process ends: "
                    + "what you store would be lost. Unset SECURESTORE_BACKEND, or choose it on purpose with "
                    + "--backend \(env).")
            }
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

extension BackendFactory {
    /// Whether its stores keep nothing after the process ends (the memory backend).
    var keepsNothing: Bool {
        guard let g = guarantees else { return false }
        return g.acrossProcesses == .notShared && !g.durableOnReturn
    }
}

/// The JSON config file: `{"backend": "sqlite", "sqlite": {…}, "secretService": {…}, …}`.
package enum ConfigFile {
    /// The largest config file read (a config file is a few hundred bytes; this stops a huge or endless file).
    package static let maxBytes = 1 << 20

    static func parse(path: String) throws(SecureStoreError) -> (String?, [String: [String: ConfigValue]]) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw .param(path, "Cannot read the config file \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw .param(path, "Cannot inspect the config file \(path): \(String(cString: strerror(errno))).")
        }
        try checkOwnerAndMode(info, path: path)
        // At most maxBytes + 1 bytes are read (parse(data:) rejects more): no endless read.
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while data.count <= maxBytes {
            let n = read(fd, &chunk, chunk.count)
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else {
                throw .param(path, "Cannot read the config file \(path): \(String(cString: strerror(errno))).")
            }
            if n == 0 { break }
            data.append(contentsOf: chunk[0..<n])
        }
        return try parse(data: data, path: path, folder: folder(of: path))
    }

    /// The absolute folder of the config file at `path` (relative paths in it are resolved against it).
    static func folder(of path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return (absolute as NSString).deletingLastPathComponent
    }

    /// Checks a config file like ssh checks its own: a regular file owned by this user (or root, for a
    /// system-wide file) that group and others may not write. Whoever can write the config chooses which store
    /// (and which key file) secrets go to. Reading it is harmless: a config never holds a secret.
    package static func checkOwnerAndMode(_ info: stat, path: String) throws(SecureStoreError) {
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .param(path, "The config file \(path) is not a regular file.")
        }
        let me = geteuid()
        guard info.st_uid == me || info.st_uid == 0 else {
            throw .param(path, "The config file \(path) belongs to another user (uid \(info.st_uid)), not to you "
                + "(uid \(me)) or root; refusing it: whoever owns it chooses where your secrets go. If it really is "
                + "yours, run: chown \(me) \(path) (as root); otherwise use your own config file.")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o022 == 0 else {
            throw .param(path, "The config file \(path) can be written by other users (mode \(String(mode, radix: 8))); "
                + "refusing it: whoever can write it chooses where your secrets go. Run: chmod go-w \(path)")
        }
    }

    /// Parses the bytes of a config file; `path` only names it in messages.
    /// `folder`: the absolute folder relative file paths (`path`, `keyFile`: ``BackendFactory/pathKeys``) are
    /// resolved against (nil: they are kept as they are).
    package static func parse(data: Data, path: String, folder: String? = nil) throws(SecureStoreError)
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
        // JSON parsers keep the last of two equal keys; which one a person meant is unknown, so neither is used.
        if let duplicate = JSONKeys.firstDuplicate(in: data) {
            // The parameter names the key, or the file when the key is the empty string (a name must name something).
            throw .param(duplicate.isEmpty ? path : duplicate, "\(path): the key \"\(duplicate)\" is given twice; keep one.")
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
            var resolved = section
            if let folder {
                for name in factory.pathKeys {
                    if case .string(let file)? = section[name], !file.isEmpty, !file.hasPrefix("/") {
                        resolved[name] = .string(folder + "/" + file)
                    }
                }
            }
            sections[key] = resolved
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
