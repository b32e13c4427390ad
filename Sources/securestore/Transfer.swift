import Foundation
import SecureStoreCore
import SecureStoreCLI
import SecureStoreBackends
#if SQLite
import SecureStoreSQLite
#endif
#if SQLite || Postgres
import SecureStoreCrypto
#endif
#if Postgres
import SecureStorePostgres
#endif

/// export / import / migrate / rekey.
enum Transfer {
    /// The export passphrase: `SECURESTORE_EXPORT_PASSPHRASE`, else asked on the terminal without echo.
    static func passphrase(confirm: Bool) throws(CLIError) -> Data {
        if let p = try Commands.store({ () throws(SecureStoreError) in
            try SecretText.environment("SECURESTORE_EXPORT_PASSPHRASE", in: ProcessInfo.processInfo.environment)
        }) { return p }
        guard isatty(0) == 1 else {
            throw .usage("set SECURESTORE_EXPORT_PASSPHRASE, or run on a terminal to be asked for the passphrase.")
        }
        return try Commands.store { () throws(SecureStoreError) in
            try TerminalPrompt.ask("Export passphrase: ", confirm: confirm)
        }
    }

    static func transferable(_ store: any SecureStore) throws(CLIError) -> any RecordTransfer {
        guard let t = store as? any RecordTransfer else {
            throw .usage("the store \(store.storeDescription) cannot export its records.")
        }
        return t
    }

    static func records(_ store: any RecordTransfer) throws(CLIError) -> [ItemRecord] {
        try Commands.store { () throws(SecureStoreError) in try store.exportRecords() }
    }

    /// Writes every item into a new export file: built in a private temporary file next to `output`, sealed as
    /// a whole (FORMAT.md, Export files), its passphrase stretched with Argon2id's moderate costs (the file
    /// travels), and linked into place only when complete. A failure (a full disk, a kill) leaves nothing at
    /// `output`, so a retry is not refused; an existing file is never overwritten.
    static func export(to output: String, _ context: Context) throws(CLIError) {
        #if SQLite
        var entry = stat()
        guard lstat(output, &entry) != 0 else {
            throw .usage("\(output) exists; choose a new file (an export never overwrites).")
        }
        let source = try transferable(try context.open(creating: false))
        let all = try records(source)
        let secret = try passphrase(confirm: true)
        let temporary = Files.temporaryPath(nextTo: output)
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) } }
        let n = try Commands.store { () throws(SecureStoreError) -> Int in
            let n = try fill(temporary, with: all, passphrase: secret)
            guard try Files.linkIntoPlace(temporary, at: output, what: "export file") else {
                throw .param("output", "\(output) appeared while the export was being written; nothing was written "
                    + "there. Choose a new file (an export never overwrites).")
            }
            return n
        }
        StandardStreams.report("exported \(n) item(s) to \(output)")
        #else
        throw notBuilt("export", backend: "sqlite", trait: "SQLite")
        #endif
    }

    /// The usage error of a command whose backend this build leaves out (an export file is an SQLite file).
    static func notBuilt(_ command: String, backend: String, trait: String) -> CLIError {
        .usage("\(command) needs the \(backend) backend, which this securestore was built without (package trait \"\(trait)\").")
    }

    #if SQLite
    /// The export's content in the file at `path` (the store is closed on return).
    private static func fill(_ path: String, with all: [ItemRecord], passphrase: Data) throws(SecureStoreError) -> Int {
        let groups = Array(Set(all.compactMap { $0.attributes[.accessGroup]?.text })).sorted()
        let target = try SQLiteStore(path: path, key: .passphrase(passphrase),
                                     configuration: StoreConfiguration(accessGroups: groups.isEmpty ? [StoreConfiguration.defaultAccessGroup] : groups),
                                     passphraseCost: .moderate)
        let n = try target.importRecords(all)
        try target.backend.sealWhole()
        return n
    }
    #endif

    static func importFile(_ input: String, _ context: Context) throws(CLIError) {
        #if SQLite
        guard FileManager.default.fileExists(atPath: input) else { throw .usage("\(input) does not exist.") }
        let secret = try passphrase(confirm: false)
        let target = try transferable(try context.open(creating: true))
        progress("importing into \(target.storeDescription): \(target.guarantees.transferPromise)")
        let (n, total) = try Commands.store { () throws(SecureStoreError) -> (Int, Int) in
            let source = try SQLiteStore(path: input, key: .passphrase(secret), readOnly: true)   // the file is never changed
            let records = try source.backend.sealedRecords()   // refused unless sealed as a whole
            return (try target.importRecords(records), records.count)
        }
        StandardStreams.report("imported \(n) item(s) from \(input)" + Self.alreadyThere(total - n))
        #else
        throw notBuilt("import", backend: "sqlite", trait: "SQLite")
        #endif
    }

    /// Copies every record into the store another config selects, in one transaction (atomic where the target's
    /// guarantees say so, undone best effort elsewhere; the progress line says which), then verifies each copy.
    static func migrate(to config: String, _ context: Context) throws(CLIError) {
        let source = try transferable(try context.open(creating: false))
        let target = try transferable(try Commands.store { () throws(SecureStoreError) in
            try StoreSelection.resolve(configFile: config, environment: ProcessInfo.processInfo.environment
                .filter { $0.key != "SECURESTORE_BACKEND" }).open()
        })
        let all = try records(source)
        progress("copying \(all.count) item(s) from \(source.storeDescription) to \(target.storeDescription): "
            + target.guarantees.transferPromise)
        let added = try Commands.store { () throws(SecureStoreError) in try target.importRecords(all) }
        if added < all.count { progress("\(all.count - added) item(s) were already in the target (an earlier migrate)") }
        let copied = Dictionary(try records(target).map { ($0.persistentRef, $0) }, uniquingKeysWith: { a, _ in a })
        for (i, record) in all.enumerated() {
            guard copied[record.persistentRef] == record else {
                throw .store(SecureStoreError(.io, "the copy of item \(i + 1) of \(all.count) differs from the source; "
                    + "the source is unchanged, inspect the target with `securestore --config \(config) find`."))
            }
            if i % 50 == 49 || i == all.count - 1 { progress("verified \(i + 1)/\(all.count)", done: i == all.count - 1) }
        }
        StandardStreams.report("migrated \(all.count) item(s); every copy verified; the source is unchanged")
    }

    /// How a report says that items were already there: an earlier import or migrate that was interrupted
    /// stored them, and this run finished the job.
    static func alreadyThere(_ count: Int) -> String {
        count == 0 ? "" : "; \(count) item(s) were already there, exactly as in the file (an earlier import stored them)"
    }

    /// A progress line: redrawn in place on a terminal, one plain line otherwise.
    static func progress(_ line: String, done: Bool = false) {
        let text = isatty(2) == 1 ? "\r\u{1B}[K" + line + (done ? "\n" : "") : line + "\n"
        StandardStreams.note(text)
    }

    /// Rotates the SQLite or PostgreSQL store's key: `--new-key-file FILE` or `--new-passphrase-env VAR`.
    static func rekey(to target: RekeyTarget, _ context: Context) throws(CLIError) {
        #if SQLite || Postgres
        let key: StoreKey
        switch target {
        case .keyFile(let file): key = .keyFile(file)
        case .passphraseEnvironment(let variable):
            guard let p = try Commands.store({ () throws(SecureStoreError) in
                try SecretText.environment(variable, in: ProcessInfo.processInfo.environment)
            }) else {
                throw .usage("the environment variable \(TextEscaping.quoted(variable)) is not set.")
            }
            key = .passphrase(p)
        }
        let store = try context.open(creating: false)
        if try !rekeyEncrypted(store, to: key) {
            throw .usage("rekey works on the sqlite and postgres backends only.")
        }
        StandardStreams.report("re-encrypted every item under the new key; update your config to use it")
        #else
        throw notBuilt("rekey", backend: "sqlite or postgres", trait: "SQLite")
        #endif
    }

    #if SQLite || Postgres
    /// Re-keys `store` when it is an SQLite or a PostgreSQL store (false when it is neither, or its backend is not
    /// built in).
    private static func rekeyEncrypted(_ store: any SecureStore, to key: StoreKey) throws(CLIError) -> Bool {
        #if SQLite
        if let sqlite = store as? SQLiteStore {
            try Commands.store { () throws(SecureStoreError) in try sqlite.rekey(to: key) }
            return true
        }
        #endif
        #if Postgres
        if let postgres = store as? PostgresStore {
            try Commands.store { () throws(SecureStoreError) in try postgres.rekey(to: key) }
            return true
        }
        #endif
        return false
    }
    #endif
}
