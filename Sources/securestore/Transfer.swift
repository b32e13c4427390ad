import Foundation
import SecureStore
import SQLiteStore

/// export / import / migrate / rekey.
enum Transfer {
    /// The export passphrase: `SECURESTORE_EXPORT_PASSPHRASE`, else asked on the terminal without echo.
    static func passphrase(confirm: Bool) throws(CLIError) -> Data {
        if let p = ProcessInfo.processInfo.environment["SECURESTORE_EXPORT_PASSPHRASE"], !p.isEmpty { return Data(p.utf8) }
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

    static func file(_ args: [String], option: String, command: String) throws(CLIError) -> String {
        guard args.count == 2, args[0] == option else { throw .usage("usage: securestore \(command) \(option) FILE") }
        return args[1]
    }

    static func export(_ args: [String], _ context: Context) throws(CLIError) {
        let output = try file(args, option: "--output", command: "export")
        guard !FileManager.default.fileExists(atPath: output) else {
            throw .usage("\(output) exists; choose a new file (an export never overwrites).")
        }
        let source = try transferable(try context.open())
        let all = try records(source)
        let secret = try passphrase(confirm: true)
        let n = try Commands.store { () throws(SecureStoreError) -> Int in
            let groups = Array(Set(all.compactMap { $0.attributes[.accessGroup]?.text })).sorted()
            let target = try SQLiteStore(path: output, key: .passphrase(secret),
                                         configuration: StoreConfiguration(accessGroups: groups.isEmpty ? ["securestore"] : groups))
            return try target.importRecords(all)
        }
        print("exported \(n) item(s) to \(output)")
    }

    static func importFile(_ args: [String], _ context: Context) throws(CLIError) {
        let input = try file(args, option: "--input", command: "import")
        guard FileManager.default.fileExists(atPath: input) else { throw .usage("\(input) does not exist.") }
        let secret = try passphrase(confirm: false)
        let target = try transferable(try context.open())
        let n = try Commands.store { () throws(SecureStoreError) -> Int in
            let source = try SQLiteStore(path: input, key: .passphrase(secret), readOnly: true)   // the file is never changed
            return try target.importRecords(try source.exportRecords())
        }
        print("imported \(n) item(s) from \(input)")
    }

    /// Copies every record into the store another config selects, in one transaction, then verifies each copy.
    static func migrate(_ args: [String], _ context: Context) throws(CLIError) {
        let config = try file(args, option: "--to", command: "migrate")
        let source = try transferable(try context.open())
        let target = try transferable(try Commands.store { () throws(SecureStoreError) in
            try StoreSelection.resolve(configFile: config, environment: ProcessInfo.processInfo.environment
                .filter { $0.key != "SECURESTORE_BACKEND" }).open()
        })
        let all = try records(source)
        progress("copying \(all.count) item(s) from \(source.storeDescription) to \(target.storeDescription)")
        try Commands.store { () throws(SecureStoreError) in try target.importRecords(all) }
        let copied = Dictionary(try records(target).map { ($0.persistentRef, $0) }, uniquingKeysWith: { a, _ in a })
        for (i, record) in all.enumerated() {
            guard copied[record.persistentRef] == record else {
                throw .store(SecureStoreError(.io, "the copy of item \(i + 1) of \(all.count) differs from the source; "
                    + "the source is unchanged, inspect the target with `securestore --config \(config) find`."))
            }
            if i % 50 == 49 || i == all.count - 1 { progress("verified \(i + 1)/\(all.count)", done: i == all.count - 1) }
        }
        print("migrated \(all.count) item(s); every copy verified; the source is unchanged")
    }

    /// A progress line: redrawn in place on a terminal, one plain line otherwise.
    static func progress(_ line: String, done: Bool = false) {
        let text = isatty(2) == 1 ? "\r\u{1B}[K" + line + (done ? "\n" : "") : line + "\n"
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Rotates the SQLite store's key: `--new-key-file FILE` or `--new-passphrase-env VAR`.
    static func rekey(_ args: [String], _ context: Context) throws(CLIError) {
        guard args.count == 2 else { throw .usage("usage: securestore rekey --new-key-file FILE | --new-passphrase-env VAR") }
        let key: SQLiteKey
        switch args[0] {
        case "--new-key-file": key = .keyFile(args[1])
        case "--new-passphrase-env":
            guard let p = ProcessInfo.processInfo.environment[args[1]], !p.isEmpty else {
                throw .usage("the environment variable \(args[1]) is not set.")
            }
            key = .passphrase(p)
        default: throw .usage("usage: securestore rekey --new-key-file FILE | --new-passphrase-env VAR")
        }
        guard let store = try context.open() as? SQLiteStore else {
            throw .usage("rekey works on the sqlite backend only.")
        }
        try Commands.store { () throws(SecureStoreError) in try store.rekey(to: key) }
        print("re-encrypted every item under the new key; update your config to use it")
    }
}
