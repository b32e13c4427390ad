import Foundation
import SecureStoreCore
import SecureStoreBackends

/// Fuzz target (b): the JSON config file parser (`ConfigFile.parse`) and the typed accessors every backend
/// factory uses on its section.
///
/// Invariants: any bytes give either a parsed file or a `param` error that names the file or key with a
/// message; each parsed section only holds keys its backend allows; reading a section's settings fails with
/// `param` (or `notAvailable` for an unset passphrase variable), never anything else.
public enum ConfigExercise {
    public static let name = "config"
    private static let registered: Void = { BuiltinBackends.register() }()

    public static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        _ = registered
        let path = "/fuzz/config.json"
        let parsed: (backend: String?, sections: [String: [String: ConfigValue]])
        do throws(SecureStoreError) {
            parsed = try ConfigFile.parse(data: Data(bytes), path: path)
        } catch {
            try check(error, allowed: [.param], what: "parse")
            return
        }
        if let backend = parsed.backend, backend.isEmpty, parsed.sections.isEmpty { /* allowed: "" is an unknown name later */ }
        let factories = BackendRegistry.all
        for (section, values) in parsed.sections {
            guard let factory = factories.first(where: { $0.section == section }) else {
                throw FuzzFinding(name, "parse accepted the unknown section \"\(section)\"")
            }
            for key in values.keys where !factory.allowedKeys.contains(key) {
                throw FuzzFinding(name, "parse accepted the unknown key \"\(key)\" in \"\(section)\"")
            }
            let settings = BackendSettings(values: values, source: "\(path), section \"\(section)\"", environment: [:])
            for key in factory.allowedKeys.sorted() {
                do throws(SecureStoreError) { _ = try settings.string(key) } catch { try check(error, allowed: [.param], what: "string(\(key))") }
                do throws(SecureStoreError) { _ = try settings.strings(key) } catch { try check(error, allowed: [.param], what: "strings(\(key))") }
            }
            // The availability check of the backends that open nothing outside the process.
            if factory.name == "sqlite" || factory.name == "memory", case .failure(let error) = factory.availability(settings) {
                try check(error, allowed: [.param, .notAvailable], what: "availability of \(factory.name)")
            }
        }
    }

    private static func check(_ error: SecureStoreError, allowed: [SecureStoreError.Code], what: String) throws(FuzzFinding) {
        guard allowed.contains(error.code) else {
            throw FuzzFinding(name, "\(what) failed with \(error.code), expected one of \(allowed): \(error.message)")
        }
        guard !error.message.isEmpty else { throw FuzzFinding(name, "\(what): an error without a message") }
        if error.code == .param, (error.parameter ?? "").isEmpty {
            throw FuzzFinding(name, "\(what): a param error that names no file or key: \(error.message)")
        }
    }
}
