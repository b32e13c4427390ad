import Foundation
import SecureStoreCore
import SecureStoreBackends
import SecureStoreCLI
#if SQLite
import SecureStoreSQLite
#endif

/// `unlock` and `lock`: a passphrase store's derived key kept in the kernel keyring for a while.
enum KeyCacheCommands {
    static func unlock(seconds: Int, _ context: Context) throws(CLIError) {
        _ = try sqlitePath(context, command: "unlock")   // a usage error naming the trait when SQLite is not built in
        #if SQLite
        guard let store = try context.open(creating: false) as? SQLiteStore else {
            throw .usage("unlock works on the sqlite backend only.")
        }
        try Commands.store { () throws(SecureStoreError) in try store.unlock(for: .seconds(seconds)) }
        StandardStreams.report("unlocked \(store.storeDescription) for \(format(seconds)); `securestore lock` locks it again")
        #endif
    }

    static func lock(_ context: Context) throws(CLIError) {
        let path = try sqlitePath(context, command: "lock")
        #if SQLite
        StandardStreams.report(SQLiteBackend.lock(path: path) ? "locked sqlite \(path)" : "sqlite \(path) was not unlocked")
        #else
        _ = path   // unreachable: sqlitePath is a usage error when SQLite is not built in
        #endif
    }

    /// The selected SQLite store's file; a usage error for another backend.
    static func sqlitePath(_ context: Context, command: String) throws(CLIError) -> String {
        #if !SQLite
        throw Transfer.notBuilt(command, backend: "sqlite", trait: "SQLite")
        #else
        let selection = try context.selection()
        let path = try Commands.store { () throws(SecureStoreError) in try BuiltinBackends.sqlitePath(selection) }
        guard let path else { throw .usage("\(command) works on the sqlite backend only (a store with a passphrase).") }
        return path
        #endif
    }

    static func format(_ seconds: Int) -> String {
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}
