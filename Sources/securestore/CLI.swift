import Foundation
import SecureStore
import SecureStoreBackends

/// `securestore [--config FILE] [--backend NAME] COMMAND [OPTIONS]`. Secrets only ever pass through
/// standard input and standard output, never argv.
@main
struct CLI {
    static func main() {
        var args = Array(CommandLine.arguments.dropFirst())
        do throws(CLIError) {
            var config: String?
            var backend: String?
            while let first = args.first, first.hasPrefix("-") {
                args.removeFirst()
                switch first {
                case "--config": config = try take(&args, for: first)
                case "--backend": backend = try take(&args, for: first)
                case "-h", "--help": print(usage); exit(0)
                default: throw .usage("unknown option \(first) before the command; see `securestore --help`.")
                }
            }
            guard let command = args.first else { throw .usage("no command given; see `securestore --help`.") }
            args.removeFirst()
            if args.contains("--help") || args.contains("-h") {
                print(Help.text(for: command) ?? usage)
                exit(0)
            }
            BuiltinBackends.register()
            let context = Context(config: config, backend: backend)
            try Commands.run(command, args, context)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("securestore: \(error.message)\n".utf8))
            exit(error.exitCode)
        }
    }

    static func take(_ args: inout [String], for option: String) throws(CLIError) -> String {
        guard let value = args.first, !value.hasPrefix("--") else { throw .usage("\(option) expects a value.") }
        args.removeFirst()
        return value
    }

    static let usage = """
        usage: securestore [--config FILE] [--backend NAME] COMMAND [OPTIONS]

        Commands:
          add        store a secret read from standard input (byte for byte)
          get        write the secret of the one matching item to standard output
          find       list matching items' attributes (never secrets); --json for JSON
          update     change matching items' attributes, or their secret with --data-stdin
          delete     delete every matching item and say how many
          clear      delete every item of the store (or of --class); needs --yes
          export     write every item to a passphrase-encrypted file (--output FILE)
          import     add every item of such a file (--input FILE)
          migrate    copy every item into the store another config selects (--to CONFIG_FILE), verified
          rekey      rotate the SQLite key or passphrase
          backends   which backends exist, whether they work here, which is selected and why
          unlock     keep a passphrase store's key in the kernel keyring for a while (--for DURATION)
          lock       drop the key unlock kept
          completions  write the bash, zsh or fish completion script
          manpage    write the securestore(1) man page

        Selection: --backend > SECURESTORE_BACKEND > --config / SECURESTORE_CONFIG / ~/.config/securestore/config.json > sqlite.
        `securestore COMMAND --help` describes a command's options.
        Exit codes: 0 ok, 1 not found, 2 usage or bad parameter, 3 duplicate item, 4 authentication failed,
        5 data corrupted or tampered, 6 backend unavailable or locked, 70 anything else.
        """
}

struct Context {
    let config: String?
    let backend: String?

    func open() throws(CLIError) -> any SecureStore {
        do throws(SecureStoreError) {
            return try StoreSelection.resolve(backend: backend, configFile: config)
                .open(askingPassphrase: TerminalPrompt.passphrasePrompt)
        } catch {
            throw .store(error)
        }
    }
}

/// A failure of the tool: a usage mistake or a store error, with its exit code.
enum CLIError: Error {
    case usage(String)
    case store(SecureStoreError)

    var message: String {
        switch self {
        case .usage(let m): m
        case .store(let e): "\(e.message) [\(e.code.name) \(e.status)]"
        }
    }

    var exitCode: Int32 {
        switch self {
        case .usage: 2
        case .store(let e):
            switch e.code {
            case .itemNotFound: 1
            case .param, .noSuchAttribute, .noSuchClass, .missingEntitlement: 2
            case .duplicateItem: 3
            case .authFailed: 4
            case .decode: 5
            case .notAvailable, .interactionNotAllowed, .readOnly: 6
            default: 70
            }
        }
    }
}
