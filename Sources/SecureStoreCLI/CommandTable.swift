public import SecureStoreCore

/// The `securestore` tool's commands and options, written once. The parser (``ArgumentParser``), the help
/// text (``HelpText``) and anything else that describes the command line (completions, a man page) walk
/// this table; nothing else lists an option. Every command also takes ``CLITable/help`` (`-h`, `--help`).
public struct CLIOption: Sendable, Hashable {
    /// The long name without dashes: `service` for `--service`.
    public let name: String
    /// The placeholder of the value (`S`, `FILE`), or nil for a flag that takes no value.
    public let valueName: String?
    /// One line of help.
    public let help: String
    /// Whether the option may be given more than once (each occurrence adds a value).
    public let repeatable: Bool
    /// Whether the command needs it.
    public let required: Bool
    /// A one-letter alias (`h` for `-h`), if any.
    public let short: Character?
    /// The values it accepts when they are a fixed list (completions offer them), else empty.
    public let choices: [String]

    public init(_ name: String, value valueName: String? = nil, _ help: String, repeatable: Bool = false,
                required: Bool = false, short: Character? = nil, choices: [String] = []) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.repeatable = repeatable
        self.required = required
        self.short = short
        self.choices = choices
    }

    /// `--name`.
    public var flag: String { "--" + name }
    public var takesValue: Bool { valueName != nil }
    /// `--name VALUE` or `--name`.
    public var synopsis: String { valueName.map { "\(flag) \($0)" } ?? flag }
    /// Whether the value names a file (completions offer file names).
    public var takesFile: Bool { valueName.map { $0.hasSuffix("FILE") } ?? false }
}

/// One command: its name, what it does, and the options it accepts (besides `--help`).
public struct CLICommand: Sendable {
    public let name: String
    /// One line for the command list.
    public let summary: String
    /// What follows the options in the usage line (`< secret`), if anything.
    public let redirection: String?
    /// A paragraph for `securestore COMMAND --help`.
    public let details: String
    /// Whether the item options (``CLITable/itemOptions``) are accepted; they are listed once, as ITEM-OPTIONS.
    public let takesItemOptions: Bool
    /// The command's own options.
    public let ownOptions: [CLIOption]
    /// The placeholder of the one word the command needs besides its options (`SHELL`), or nil for none.
    public let operandName: String?
    /// The words allowed as that operand.
    public let operands: [String]

    public init(_ name: String, summary: String, redirection: String? = nil, details: String,
                itemOptions: Bool = false, options: [CLIOption] = [], operand: (name: String, choices: [String])? = nil) {
        self.name = name
        self.summary = summary
        self.redirection = redirection
        self.details = details
        self.takesItemOptions = itemOptions
        self.ownOptions = options
        self.operandName = operand?.name
        self.operands = operand?.choices ?? []
    }

    /// What follows `securestore NAME` in a usage line: `[ITEM-OPTIONS] [--json]`, `bash|zsh|fish`.
    public var synopsis: String {
        var parts: [String] = []
        if takesItemOptions { parts.append("[ITEM-OPTIONS]") }
        for o in ownOptions { parts.append(o.required ? o.synopsis : "[\(o.synopsis)]\(o.repeatable ? "..." : "")") }
        if !operands.isEmpty { parts.append(operands.joined(separator: "|")) }
        if let redirection { parts.append(redirection) }
        return parts.joined(separator: " ")
    }

    /// Every option the command accepts (item options first), without `--help`.
    public var options: [CLIOption] { (takesItemOptions ? CLITable.itemOptions : []) + ownOptions }

    /// The accepted option called `name` (`--help` included), if any.
    public func option(named name: String) -> CLIOption? {
        name == CLITable.help.name ? CLITable.help : options.first { $0.name == name }
    }
}

public enum CLITable {
    public static let program = "securestore"
    /// What the tool is, in one line (the man page's NAME).
    public static let summary = "store, find and manage secrets in a SecureStore store"
    /// The tool's version (`securestore --version`).
    public static let version = "1.0.0"

    public static let help = CLIOption("help", "show this help and exit (only where an option is expected)", short: "h")
    public static let versionOption = CLIOption("version", "print the version and exit")

    /// Options before the command.
    public static let globalOptions: [CLIOption] = [
        CLIOption("config", value: "FILE", "read this config file instead of SECURESTORE_CONFIG or ~/.config/securestore/config.json"),
        CLIOption("backend", value: "NAME", "use this backend (wins over SECURESTORE_BACKEND and the config file)",
                  choices: backendNames),
        help,
        versionOption,
    ]

    /// The built-in backends' names, offered by the completions of `--backend` (any registered name is accepted).
    public static let backendNames = ["sqlite", "memory", "secret-service", "postgres"]

    /// The item class names `--class` accepts.
    public static let classNames = ["generic", "internet", "certificate", "key", "identity"]

    /// Options that select items by their class and attributes (add, get, find, update, delete).
    public static let itemOptions: [CLIOption] = [
        CLIOption("class", value: "CLASS", "generic|internet|certificate|key|identity (default generic)", choices: classNames),
        CLIOption("service", value: "S", "the service (attribute service, svce)"),
        CLIOption("account", value: "A", "the account (acct)"),
        CLIOption("label", value: "L", "the label (labl)"),
        CLIOption("server", value: "H", "the server of an internet password (srvr)"),
        CLIOption("protocol", value: "P", "the protocol of an internet password (ptcl)"),
        CLIOption("port", value: "N", "the port of an internet password, 0…65535"),
        CLIOption("path", value: "P", "the path of an internet password"),
        CLIOption("access-group", value: "G", "the access group (agrp)"),
        CLIOption("attr", value: "NAME=VALUE",
                  "any other attribute by name or Apple code (comment=…, icmt=…); data as text or base64:…, dates ISO 8601",
                  repeatable: true),
    ]

    /// The attribute each named item option sets.
    public static let attributeOptions: [String: AttributeName] = [
        "service": .service, "account": .account, "label": .label, "server": .server, "protocol": .protocol,
        "port": .port, "path": .path, "access-group": .accessGroup,
    ]

    public static let commands: [CLICommand] = [
        CLICommand("add", summary: "store a secret read from standard input (byte for byte)", redirection: "< secret",
                   details: """
                       Stores standard input byte for byte as the secret (at most 1 MiB). On a terminal, asks for it
                       twice without echo (the line end is not part of it).
                       """,
                   itemOptions: true,
                   options: [CLIOption("update-existing", "replace the secret and attributes of an item with the same key instead of failing")]),
        CLICommand("get", summary: "write the secret of the one matching item to standard output", redirection: "> secret",
                   details: """
                       Writes the one matching item's secret to standard output, nothing else: to a pipe or file exactly
                       the stored bytes; to a terminal, followed by a newline when the secret does not end with one.
                       """,
                   itemOptions: true),
        CLICommand("find", summary: "list matching items' attributes (never secrets); --json for JSON",
                   details: """
                       Lists matching items' attributes (never secrets), synced or not; without --class, of every class.
                       One line per item: the class code, then NAME=VALUE pairs. Text is in double quotes with \\" for a quote,
                       \\\\ for a backslash, \\n \\r \\t, and \\uXXXX for any other control character (U+2028 and U+2029 included),
                       so a value can never start a new line; data is base64:…, dates are ISO 8601.
                       """,
                   itemOptions: true,
                   options: [CLIOption("json", "print a JSON array of objects instead (data as {\"base64\": …})")]),
        CLICommand("update", summary: "change matching items' attributes, or their secret with --data-stdin",
                   details: "Changes every matching item and says how many. It needs at least one attribute to match, or --all.",
                   itemOptions: true,
                   options: [
                       CLIOption("set-label", value: "L", "the new label"),
                       CLIOption("set-service", value: "S", "the new service"),
                       CLIOption("set-account", value: "A", "the new account"),
                       CLIOption("set-attr", value: "NAME=VALUE", "a new value of any attribute", repeatable: true),
                       CLIOption("data-stdin", "the new secret, read from standard input (on a terminal, asked without echo)"),
                       CLIOption("all", "match every item of the class (no attribute given)"),
                   ]),
        CLICommand("delete", summary: "delete every matching item and say how many",
                   details: "Deletes every matching item and says how many. It needs at least one attribute to match, or --all.",
                   itemOptions: true,
                   options: [CLIOption("all", "delete every item of the class (no attribute given)")]),
        CLICommand("clear", summary: "delete every item of the store (or of --class); needs --yes",
                   details: "Deletes every item of the selected store (or of the given classes).",
                   options: [
                       CLIOption("yes", "confirm", required: true),
                       CLIOption("class", value: "CLASS", "only this class (repeat for several)", repeatable: true,
                                 choices: classNames),
                   ]),
        CLICommand("export", summary: "write every item to a passphrase-encrypted file (--output FILE)",
                   details: """
                       Writes every item, with all attributes, to a new file encrypted with a passphrase
                       (SECURESTORE_EXPORT_PASSPHRASE, or asked on the terminal without echo).
                       """,
                   options: [CLIOption("output", value: "FILE", "the new file (never overwritten)", required: true)]),
        CLICommand("import", summary: "add every item of such a file (--input FILE)",
                   details: "Adds every item of an export file (all or nothing; a clash is an error).",
                   options: [CLIOption("input", value: "FILE", "the export file (never changed)", required: true)]),
        CLICommand("migrate", summary: "copy every item into the store another config selects (--to CONFIG_FILE), verified",
                   details: """
                       Copies every item into the store CONFIG_FILE selects, in one transaction,
                       verifies every copy, and leaves the source unchanged; on failure the target stays as it was.
                       """,
                   options: [CLIOption("to", value: "CONFIG_FILE", "the config file that selects the target store", required: true)]),
        CLICommand("rekey", summary: "rotate the SQLite or PostgreSQL key or passphrase",
                   details: "Re-encrypts the SQLite or PostgreSQL store under a new key or passphrase (give exactly one of the two options).",
                   options: [
                       CLIOption("new-key-file", value: "FILE", "the new key file (created)"),
                       CLIOption("new-passphrase-env", value: "VAR", "the environment variable holding the new passphrase"),
                   ]),
        CLICommand("backends", summary: "which backends exist, whether they work here, which is selected and why",
                   details: "Lists each backend, whether it works here (and why not), and which is selected and why."),
        CLICommand("unlock", summary: "keep a passphrase store's key in the kernel keyring for a while (--for DURATION)",
                   details: """
                       Derives the key of the selected SQLite passphrase store once (from the config's passphrase
                       variable, or asked on the terminal) and keeps it in the kernel's session keyring for DURATION.
                       Until then, or until `securestore lock` or a rekey, calls whose passphrase variable is not set
                       open the store with it, without asking and without Argon2id. Processes of the same user that
                       possess the session keyring (and root) can read the kept key.
                       """,
                   options: [CLIOption("for", value: "DURATION", "how long: 90s, 15m, 8h, 1d or seconds (default 1h, at most 24h)")]),
        CLICommand("lock", summary: "drop the key unlock kept; the next call asks again",
                   details: "Drops the key `securestore unlock` kept for the selected store; the next call asks again."),
        CLICommand("completions", summary: "write the bash, zsh or fish completion script",
                   details: "Writes the shell's completion script, e.g. `source <(securestore completions bash)`.",
                   operand: ("SHELL", ["bash", "zsh", "fish"])),
        CLICommand("manpage", summary: "write the securestore(1) man page (roff)",
                   details: "Writes the securestore(1) man page (roff) to standard output."),
    ]

    /// Sections of the man page after the commands, in order: a title and its paragraphs (exit statuses
    /// come from ``ExitStatus/table``).
    public static let manSections: [(title: String, paragraphs: [String])] = [
        ("Terminal use", [
            "On a terminal, add and update --data-stdin ask for the secret without echo (add asks twice), and the line end is not part of it; from a pipe or a file, standard input is the secret byte for byte (at most 1 MiB). get on a terminal ends its output with a newline; to a pipe or a file it writes exactly the stored bytes.",
            "When the config names a passphrase variable (passphraseEnv) that is not set, the store passphrase is asked the same way on a terminal, and is an error in a script. securestore unlock keeps the SQLite store's derived key in the kernel session keyring for a while, so later calls neither ask nor run Argon2id; securestore lock, a rekey or the timeout ends that. Processes of the same user that possess the session keyring can read the kept key.",
        ]),
        ("Environment", [
            "SECURESTORE_BACKEND names the backend; SECURESTORE_CONFIG the config file; SECURESTORE_EXPORT_PASSPHRASE the passphrase of export and import files.",
        ]),
    ]

    /// The command called `name`, if any.
    public static func command(named name: String) -> CLICommand? { commands.first { $0.name == name } }

    /// The global option called `name`, if any.
    public static func globalOption(named name: String) -> CLIOption? { globalOptions.first { $0.name == name } }
}
