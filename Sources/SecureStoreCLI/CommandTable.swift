public import SecureStore

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

    public init(_ name: String, value valueName: String? = nil, _ help: String, repeatable: Bool = false,
                required: Bool = false, short: Character? = nil) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.repeatable = repeatable
        self.required = required
        self.short = short
    }

    /// `--name`.
    public var flag: String { "--" + name }
    public var takesValue: Bool { valueName != nil }
    /// `--name VALUE` or `--name`.
    public var synopsis: String { valueName.map { "\(flag) \($0)" } ?? flag }
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

    public init(_ name: String, summary: String, redirection: String? = nil, details: String,
                itemOptions: Bool = false, options: [CLIOption] = []) {
        self.name = name
        self.summary = summary
        self.redirection = redirection
        self.details = details
        self.takesItemOptions = itemOptions
        self.ownOptions = options
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
    /// The tool's version (`securestore --version`).
    public static let version = "1.0.0"

    public static let help = CLIOption("help", "show this help and exit (only where an option is expected)", short: "h")
    public static let versionOption = CLIOption("version", "print the version and exit")

    /// Options before the command.
    public static let globalOptions: [CLIOption] = [
        CLIOption("config", value: "FILE", "read this config file instead of SECURESTORE_CONFIG or ~/.config/securestore/config.json"),
        CLIOption("backend", value: "NAME", "use this backend (wins over SECURESTORE_BACKEND and the config file)"),
        help,
        versionOption,
    ]

    /// The item class names `--class` accepts.
    public static let classNames = ["generic", "internet", "certificate", "key", "identity"]

    /// Options that select items by their class and attributes (add, get, find, update, delete).
    public static let itemOptions: [CLIOption] = [
        CLIOption("class", value: "CLASS", "generic|internet|certificate|key|identity (default generic)"),
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
                   details: "Stores standard input byte for byte as the secret (at most 1 MiB).",
                   itemOptions: true,
                   options: [CLIOption("update-existing", "replace the secret and attributes of an item with the same key instead of failing")]),
        CLICommand("get", summary: "write the secret of the one matching item to standard output", redirection: "> secret",
                   details: "Writes the one matching item's secret to standard output, nothing else.",
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
                       CLIOption("data-stdin", "the new secret, read from standard input"),
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
                       CLIOption("class", value: "CLASS", "only this class (repeat for several)", repeatable: true),
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
    ]

    /// The command called `name`, if any.
    public static func command(named name: String) -> CLICommand? { commands.first { $0.name == name } }

    /// The global option called `name`, if any.
    public static func globalOption(named name: String) -> CLIOption? { globalOptions.first { $0.name == name } }
}
