import Foundation
import Glibc
import SecureStoreCore
import SecureStoreBackends
import SecureStoreCLI
#if SQLite || Postgres
import SecureStoreCrypto
#endif

/// `securestore [--config FILE] [--backend NAME] COMMAND [OPTIONS]`. Secrets only ever pass through
/// standard input and standard output, never argv. The command line is parsed by `ArgumentParser` against
/// `CLITable` (SecureStoreCLI); this executable does the I/O.
@main
struct CLI {
    static func main() {
        StandardStreams.prepare()
        do throws(CLIError) {
            try ProcessGuard.harden()
            switch ArgumentParser.parse(rawArguments()) {
            case .failure(let usage):
                throw .usage(usage.message)
            case .success(.help(let command)):
                try StandardStreams.output((command.flatMap(HelpText.command) ?? HelpText.global) + "\n")
            case .success(.version):
                try StandardStreams.output("securestore \(CLITable.version)\n")
            case .success(.run(let parsed)):
                BuiltinBackends.register()
                try Commands.run(parsed)
            }
            exit(ExitStatus.ok)
        } catch {
            // When standard error cannot be written either, the exit status alone says what happened.
            StandardStreams.note("securestore: \(TextEscaping.controlsEscaped(error.message))\n")
            exit(error.exitCode)
        }
    }

    /// The arguments as the kernel passed them (CommandLine.arguments has already replaced bytes that are
    /// not UTF-8 with U+FFFD, which would make different names collide).
    static func rawArguments() -> [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { i in
            guard let p = CommandLine.unsafeArgv[i] else { return [] }
            return Array(UnsafeRawBufferPointer(start: p, count: strlen(p)))
        }
    }
}

struct Context {
    let config: String?
    let backend: String?

    /// SecurityModel.md promises keys that are never swapped: where memory cannot be locked, say so (once, on
    /// standard error) before a store's keys are made.
    private static let memoryWarning: Void = {
        #if SQLite || Postgres   // the encrypted backends' keys; memory and the Secret Service hold none here
        if let problem = MemoryLock.problem { StandardStreams.note("securestore: warning: \(problem)\n") }
        #endif
    }()

    static func warnOnceIfMemoryCannotBeLocked() { memoryWarning }

    func selection() throws(CLIError) -> StoreSelection {
        do throws(SecureStoreError) {
            return try StoreSelection.resolve(backend: backend, configFile: config)
        } catch {
            throw .store(error)
        }
    }

    /// Opens the selected store. `creating`: whether this command may create a store that does not exist
    /// yet (only the commands that add items do); the others fail with `itemNotFound` and create nothing.
    func open(creating: Bool) throws(CLIError) -> any SecureStore {
        let selection = try selection()
        Self.warnOnceIfMemoryCannotBeLocked()
        return try Commands.store { () throws(SecureStoreError) in
            try selection.open(askingPassphrase: TerminalPrompt.passphrasePrompt, creatingStore: creating)
        }
    }
}

/// A failure of the tool: a usage mistake, a store error, or failed standard I/O, with its exit status.
enum CLIError: Error {
    case usage(String)
    case store(SecureStoreError)
    /// Standard input could not be read or standard output written.
    case io(String)
    case other(String)

    var message: String {
        switch self {
        case .usage(let m), .io(let m), .other(let m): m
        case .store(let e): "\(e.message) [\(e.code.name) \(e.status)]"
        }
    }

    var exitCode: Int32 {
        switch self {
        case .usage: ExitStatus.usage
        case .store(let e): ExitStatus.code(for: e.code)
        case .io: ExitStatus.io
        case .other: ExitStatus.other
        }
    }
}
