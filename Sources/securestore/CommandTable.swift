/// The tool's commands and options as data: the source of the completions and the man page
/// (``Generators``). Every command `Commands.run` dispatches is here with every option it parses.
enum CommandTable {
    static let classes = ["generic", "internet", "certificate", "key", "identity"]

    /// The item options every item command shares (`ItemOptions`).
    static let item: [OptionSpec] = [
        OptionSpec(name: "--class", valueName: "CLASS", help: "the item class (default generic)", choices: classes),
        OptionSpec(name: "--service", valueName: "S", help: "the service attribute (generic passwords)"),
        OptionSpec(name: "--account", valueName: "A", help: "the account attribute"),
        OptionSpec(name: "--label", valueName: "L", help: "the label attribute"),
        OptionSpec(name: "--server", valueName: "H", help: "the server attribute (internet passwords)"),
        OptionSpec(name: "--protocol", valueName: "P", help: "the protocol attribute (internet passwords)"),
        OptionSpec(name: "--port", valueName: "N", help: "the port attribute (internet passwords)"),
        OptionSpec(name: "--path", valueName: "P", help: "the path attribute (internet passwords)"),
        OptionSpec(name: "--access-group", valueName: "G", help: "the access group"),
        OptionSpec(name: "--attr", valueName: "NAME=VALUE",
                   help: "any other attribute, by name or Apple code; data as text or base64:..."),
    ]

    static let tool = ToolSpec(
        name: "securestore",
        summary: "store, find and manage secrets in a SecureStore store",
        globalOptions: [
            OptionSpec(name: "--config", valueName: "FILE", help: "the config file to read (else SECURESTORE_CONFIG, else ~/.config/securestore/config.json)"),
            OptionSpec(name: "--backend", valueName: "NAME", help: "the backend to use, over the environment and the config file",
                       choices: ["sqlite", "memory", "secret-service", "postgres"]),
            OptionSpec(name: "--help", valueName: nil, help: "describe the tool, or with a command, the command"),
        ],
        commands: [
            CommandSpec(name: "add", summary: "store a secret read from standard input (byte for byte); on a terminal, asked twice without echo",
                        synopsis: "ITEM-OPTIONS [--update-existing] < secret",
                        options: item + [OptionSpec(name: "--update-existing", valueName: nil,
                                                    help: "replace the secret of an item with the same key instead of failing")]),
            CommandSpec(name: "get", summary: "write the secret of the one matching item to standard output (on a terminal, followed by a newline)",
                        synopsis: "ITEM-OPTIONS > secret", options: item),
            CommandSpec(name: "find", summary: "list matching items' attributes (never secrets)",
                        synopsis: "ITEM-OPTIONS [--json]",
                        options: item + [OptionSpec(name: "--json", valueName: nil, help: "print JSON")]),
            CommandSpec(name: "update", summary: "change matching items' attributes, or their secret with --data-stdin",
                        synopsis: "ITEM-OPTIONS [--set-label L] [--set-service S] [--set-account A] [--set-attr NAME=VALUE] [--data-stdin]",
                        options: item + [
                            OptionSpec(name: "--set-label", valueName: "L", help: "the new label"),
                            OptionSpec(name: "--set-service", valueName: "S", help: "the new service"),
                            OptionSpec(name: "--set-account", valueName: "A", help: "the new account"),
                            OptionSpec(name: "--set-attr", valueName: "NAME=VALUE", help: "a new value of any attribute"),
                            OptionSpec(name: "--data-stdin", valueName: nil,
                                       help: "the new secret from standard input (on a terminal, asked without echo)"),
                        ]),
            CommandSpec(name: "delete", summary: "delete every matching item and say how many",
                        synopsis: "ITEM-OPTIONS", options: item),
            CommandSpec(name: "clear", summary: "delete every item of the store (or of --class)",
                        synopsis: "--yes [--class CLASS]...",
                        options: [OptionSpec(name: "--yes", valueName: nil, help: "confirm"),
                                  OptionSpec(name: "--class", valueName: "CLASS", help: "only this class (repeatable)", choices: classes)]),
            CommandSpec(name: "export", summary: "write every item to a passphrase-encrypted file",
                        synopsis: "--output FILE",
                        options: [OptionSpec(name: "--output", valueName: "FILE", help: "the new export file")]),
            CommandSpec(name: "import", summary: "add every item of an export file",
                        synopsis: "--input FILE",
                        options: [OptionSpec(name: "--input", valueName: "FILE", help: "the export file")]),
            CommandSpec(name: "migrate", summary: "copy every item into the store another config selects, verified",
                        synopsis: "--to CONFIG_FILE",
                        options: [OptionSpec(name: "--to", valueName: "CONFIG_FILE", help: "the config file of the target store")]),
            CommandSpec(name: "rekey", summary: "re-encrypt the SQLite store under a new key or passphrase",
                        synopsis: "--new-key-file FILE | --new-passphrase-env VAR",
                        options: [OptionSpec(name: "--new-key-file", valueName: "FILE", help: "the new key file"),
                                  OptionSpec(name: "--new-passphrase-env", valueName: "VAR",
                                             help: "the environment variable holding the new passphrase")]),
            CommandSpec(name: "backends", summary: "which backends exist, whether they work here, which is selected and why",
                        synopsis: "", options: []),
            CommandSpec(name: "unlock", summary: "keep a passphrase store's key in the kernel keyring for a while",
                        synopsis: "[--for DURATION]",
                        options: [OptionSpec(name: "--for", valueName: "DURATION", help: "how long: 90s, 15m, 8h (default 1h, at most 24h)")]),
            CommandSpec(name: "lock", summary: "drop the key unlock kept; the next call asks again", synopsis: "", options: []),
            CommandSpec(name: "completions", summary: "write the bash, zsh or fish completion script",
                        synopsis: "bash|zsh|fish", options: [], arguments: ["bash", "zsh", "fish"]),
            CommandSpec(name: "manpage", summary: "write this man page (roff)", synopsis: "", options: []),
        ],
        sections: [
            ("Terminal use", [
                "On a terminal, add and update --data-stdin ask for the secret without echo (add asks twice), and the line end is not part of it; from a pipe or a file, standard input is the secret byte for byte. get on a terminal ends its output with a newline; to a pipe or a file it writes exactly the stored bytes.",
                "When the config names a passphrase variable (passphraseEnv) that is not set, the store passphrase is asked the same way on a terminal, and is an error in a script. securestore unlock keeps the store's derived key in the kernel session keyring for a while, so later calls neither ask nor run Argon2id; securestore lock, a rekey or the timeout ends that. Processes of the same user that possess the session keyring can read the kept key.",
            ]),
            ("Environment", [
                "SECURESTORE_BACKEND names the backend; SECURESTORE_CONFIG the config file; SECURESTORE_EXPORT_PASSPHRASE the passphrase of export and import files.",
            ]),
            ("Exit status", [
                "0 ok, 1 not found, 2 usage or bad parameter, 3 duplicate item, 4 authentication failed, 5 data corrupted or tampered, 6 backend unavailable or locked, 70 anything else.",
            ]),
        ])
}
