import Foundation

/// XDG base directories, from an environment the caller passes (the process's by default), so every path
/// of the package follows one rule: `$variable` when it is an absolute path, else `$HOME/fallback`
/// (`HOME` unset or empty: the user's home directory from the password database).
package enum XDG {
    package static func base(_ variable: String, _ fallback: String,
                             environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let value = environment[variable], value.hasPrefix("/") { return value }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/" + fallback
    }

    /// `$XDG_CONFIG_HOME/securestore` (else `~/.config/securestore`).
    package static func configFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        base("XDG_CONFIG_HOME", ".config", environment: environment) + "/securestore"
    }

    /// `$XDG_DATA_HOME/securestore` (else `~/.local/share/securestore`).
    package static func dataFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        base("XDG_DATA_HOME", ".local/share", environment: environment) + "/securestore"
    }

    /// `$XDG_RUNTIME_DIR/securestore` when `XDG_RUNTIME_DIR` is an absolute path, else `nil` (no login
    /// session: there is no fallback under the home directory for runtime files).
    package static func runtimeFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let value = environment["XDG_RUNTIME_DIR"], value.hasPrefix("/") else { return nil }
        return value + "/securestore"
    }
}
