import Foundation
import SecureStore
import SecureStoreBackends
import SQLiteStore

/// `unlock` and `lock`: a passphrase store's derived key kept in the kernel keyring for a while.
enum KeyCacheCommands {
    static let unlockHelp = """
        Derives the key of the selected passphrase store once (from the config's passphrase variable, or asked
        on the terminal) and keeps it in the kernel's session keyring for DURATION (default 1h; 30s, 15m, 8h;
        at most 24h). Until then, or until `securestore lock` or a rekey, calls whose passphrase variable is not
        set open the store with it, without asking and without Argon2id. Processes of the same user that
        possess the session keyring can read the kept key.
        """

    /// The default time a store stays unlocked.
    static let defaultSeconds = 3600

    static func unlock(_ args: [String], _ context: Context) throws(CLIError) {
        var seconds = defaultSeconds
        switch args.count {
        case 0: break
        case 2 where args[0] == "--for": seconds = try duration(args[1])
        default: throw .usage("usage: securestore unlock [--for DURATION]")
        }
        _ = try sqlitePath(context, command: "unlock")
        guard let store = try context.open() as? SQLiteStore else {
            throw .usage("unlock works on the sqlite backend only.")
        }
        try Commands.store { () throws(SecureStoreError) in try store.unlock(for: .seconds(seconds)) }
        print("unlocked \(store.storeDescription) for \(format(seconds)); `securestore lock` locks it again")
    }

    static func lock(_ args: [String], _ context: Context) throws(CLIError) {
        guard args.isEmpty else { throw .usage("lock takes no options.") }
        let path = try sqlitePath(context, command: "lock")
        print(SQLiteBackend.lock(path: path) ? "locked sqlite \(path)" : "sqlite \(path) was not unlocked")
    }

    /// The selected SQLite store's file; a usage error for another backend.
    static func sqlitePath(_ context: Context, command: String) throws(CLIError) -> String {
        let path = try Commands.store { () throws(SecureStoreError) in
            try BuiltinBackends.sqlitePath(StoreSelection.resolve(backend: context.backend, configFile: context.config))
        }
        guard let path else { throw .usage("\(command) works on the sqlite backend only (a store with a passphrase).") }
        return path
    }

    /// `90`, `90s`, `15m`, `8h`, `1d`: whole seconds, 1 second to 24 hours.
    static func duration(_ text: String) throws(CLIError) -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var digits = Substring(text)
        var unit = 1
        if let last = digits.last, let u = units[last] {
            unit = u
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let n = Int(digits), n * unit >= 1, n * unit <= Int(KeyringSlot.maxSeconds)
        else {
            throw .usage("--for expects a duration from 1s to 24h such as 90s, 15m or 8h; got \"\(text)\".")
        }
        return n * unit
    }

    static func format(_ seconds: Int) -> String {
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}
