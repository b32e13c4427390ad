import Foundation
import SecureStore

/// The item options every item command shares, parsed by hand.
struct ItemOptions {
    var itemClass: ItemClass = .genericPassword
    var classGiven = false
    var attributes: [AttributeName: AttributeValue] = [:]
    var flags: Set<String> = []
    var values: [String: [String]] = [:]

    /// Parses `args`; `flags` are options without a value, `valued` options with one (beyond the item options).
    init(_ args: [String], flags allowedFlags: Set<String> = [], valued: Set<String> = []) throws(CLIError) {
        var rest = args[...]
        func value(_ option: String) throws(CLIError) -> String {
            guard let v = rest.first else { throw .usage("\(option) expects a value.") }
            rest.removeFirst()
            return v
        }
        let named: [String: AttributeName] = [
            "--service": .service, "--account": .account, "--label": .label, "--server": .server,
            "--protocol": .protocol, "--port": .port, "--path": .path, "--access-group": .accessGroup,
        ]
        while let option = rest.first {
            rest.removeFirst()
            if option == "--class" {
                let name = try value(option)
                guard let c = ItemClass(name: name) else {
                    throw .usage("--class expects generic, internet, certificate, key or identity; got \"\(name)\".")
                }
                itemClass = c
                classGiven = true
            } else if let attribute = named[option] {
                attributes[attribute] = try Self.parse(try value(option), for: attribute)
            } else if option == "--attr" {
                let (name, v) = try Self.split(try value(option), option: option)
                attributes[name] = try Self.parse(v, for: name)
            } else if allowedFlags.contains(option) {
                flags.insert(option)
            } else if valued.contains(option) {
                values[option, default: []].append(try value(option))
            } else {
                throw .usage("unknown option \(option); see the command's --help.")
            }
        }
    }

    static func split(_ pair: String, option: String) throws(CLIError) -> (AttributeName, String) {
        guard let eq = pair.firstIndex(of: "=") else { throw .usage("\(option) expects NAME=VALUE; got \"\(pair)\".") }
        let key = String(pair[..<eq])
        guard let name = AttributeName(codeOrName: key) else {
            throw .usage("\(option): unknown attribute \"\(key)\"; use a name such as comment or an Apple code such as icmt.")
        }
        return (name, String(pair[pair.index(after: eq)...]))
    }

    /// Text as given; numbers and booleans parsed; dates as ISO 8601; data as text bytes or `base64:…`.
    static func parse(_ text: String, for name: AttributeName) throws(CLIError) -> AttributeValue {
        switch name.kind {
        case .text: return .string(text)
        case .data:
            if text.hasPrefix("base64:") {
                guard let d = Data(base64Encoded: String(text.dropFirst(7))) else {
                    throw .usage("\(name.name): invalid base64 after \"base64:\".")
                }
                return .data(d)
            }
            return .data(Data(text.utf8))
        case .number, .bool: return .string(text)   // the core normalizes and names the attribute on error
        case .date:
            guard let d = ISO8601DateFormatter().date(from: text) else { throw .usage("\(name.name) expects an ISO 8601 date.") }
            return .date(d)
        }
    }

    var query: ItemQuery { ItemQuery(itemClass, attributes) }
}

enum Commands {
    static func run(_ command: String, _ args: [String], _ context: Context) throws(CLIError) {
        switch command {
        case "add": try add(args, context)
        case "get": try get(args, context)
        case "find": try find(args, context)
        case "update": try update(args, context)
        case "delete": try delete(args, context)
        case "clear": try clear(args, context)
        case "backends": try backends(args, context)
        case "export": try Transfer.export(args, context)
        case "import": try Transfer.importFile(args, context)
        case "migrate": try Transfer.migrate(args, context)
        case "rekey": try Transfer.rekey(args, context)
        case "unlock": try KeyCacheCommands.unlock(args, context)
        case "lock": try KeyCacheCommands.lock(args, context)
        case "completions": try Generators.completions(args)
        case "manpage": try Generators.manpage(args)
        default: throw .usage("unknown command \"\(command)\"; see `securestore --help`.")
        }
    }

    @discardableResult
    static func store<T>(_ body: () throws(SecureStoreError) -> T) throws(CLIError) -> T {
        do throws(SecureStoreError) { return try body() } catch { throw .store(error) }
    }

    /// The new secret: typed at the terminal when stdin is one (twice when `confirm`), else stdin byte for byte.
    static func secretInput(_ options: ItemOptions, confirm: Bool) throws(CLIError) -> Data {
        let a = options.attributes
        let name: String = if a[.service] != nil || a[.account] != nil {
            "\(a[.service].map(JSONOutput.plain) ?? "")/\(a[.account].map(JSONOutput.plain) ?? "")"
        } else if let server = a[.server] ?? a[.label] {
            JSONOutput.plain(server)
        } else {
            "the \(options.itemClass.rawValue) item"
        }
        return try store { () throws(SecureStoreError) in try TerminalPrompt.secret(for: name, confirm: confirm) }
    }

    static func add(_ args: [String], _ context: Context) throws(CLIError) {
        let options = try ItemOptions(args, flags: ["--update-existing"])
        let s = try context.open()
        let secret = try secretInput(options, confirm: true)
        let item = NewItem(options.itemClass, options.attributes, data: secret)
        let outcome = Result { () throws(SecureStoreError) in try s.add(item) }
        if case .failure(let e) = outcome {
            guard e.code == .duplicateItem, options.flags.contains("--update-existing") else { throw .store(e) }
            var query = options.query
            query.attributes = options.attributes.filter { options.itemClass.uniquenessKey.contains($0.key) }
            let n = try store { () throws(SecureStoreError) in try s.update(query, with: ItemChanges(options.attributes, data: secret)) }
            FileHandle.standardError.write(Data("updated \(n) existing item(s)\n".utf8))
        }
    }

    static func get(_ args: [String], _ context: Context) throws(CLIError) {
        let options = try ItemOptions(args)
        let s = try context.open()
        var query = options.query
        query.returning = .data
        query.limit = .all
        let items = try store { () throws(SecureStoreError) in try s.copyMatching(query).items }
        guard items.count == 1, let data = items.first?.data else {
            throw .usage("\(items.count) items match; narrow the query (e.g. --service and --account) so exactly one does.")
        }
        FileHandle.standardOutput.write(data)
        // On a terminal the prompt after it starts on a line of its own; to a pipe or file: exactly the bytes.
        if isatty(1) == 1, data.last != UInt8(ascii: "\n") { FileHandle.standardOutput.write(Data("\n".utf8)) }
    }

    static func find(_ args: [String], _ context: Context) throws(CLIError) {
        let options = try ItemOptions(args, flags: ["--json"])
        let s = try context.open()
        // Without --class, every class that defines the given attributes is searched.
        let classes = options.classGiven ? [options.itemClass]
            : ItemClass.allCases.filter { c in options.attributes.keys.allSatisfy { c.attributes.contains($0) } }
        var items: [ResultItem] = []
        for itemClass in classes {
            var query = ItemQuery(itemClass, options.attributes, limit: .all, returning: .attributes)
            query.synchronizableAny = options.attributes[.synchronizable] == nil
            let outcome = Result { () throws(SecureStoreError) in try s.copyMatching(query).items }
            switch outcome {
            case .success(let found): items += found
            case .failure(let e): if e.code != .itemNotFound { throw .store(e) }
            }
        }
        if items.isEmpty { throw .store(.notFound()) }
        if options.flags.contains("--json") {
            let array = items.map { JSONOutput.object($0) }
            guard let data = try? JSONSerialization.data(withJSONObject: array, options: [.prettyPrinted, .sortedKeys]) else {
                throw .usage("cannot encode the result as JSON")
            }
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else {
            for item in items {
                let attrs = (item.attributes ?? [:]).sorted { $0.key.name < $1.key.name }
                    .map { "\($0.key.name)=\(JSONOutput.text($0.value))" }.joined(separator: " ")
                print("\(item.itemClass.rawValue) \(attrs)")
            }
        }
    }

    static func update(_ args: [String], _ context: Context) throws(CLIError) {
        let options = try ItemOptions(args, flags: ["--data-stdin"], valued: ["--set-label", "--set-service", "--set-account", "--set-attr"])
        var changes = ItemChanges()
        if let v = options.values["--set-label"]?.last { changes.attributes[.label] = .string(v) }
        if let v = options.values["--set-service"]?.last { changes.attributes[.service] = .string(v) }
        if let v = options.values["--set-account"]?.last { changes.attributes[.account] = .string(v) }
        for pair in options.values["--set-attr"] ?? [] {
            let (name, v) = try ItemOptions.split(pair, option: "--set-attr")
            changes.attributes[name] = try ItemOptions.parse(v, for: name)
        }
        guard !changes.attributes.isEmpty || options.flags.contains("--data-stdin") else {
            throw .usage("nothing to change: give --set-label, --set-service, --set-account, --set-attr or --data-stdin.")
        }
        let s = try context.open()
        if options.flags.contains("--data-stdin") { changes.data = try secretInput(options, confirm: false) }
        let n = try store { () throws(SecureStoreError) in try s.update(options.query, with: changes) }
        print("updated \(n) item(s)")
    }

    static func delete(_ args: [String], _ context: Context) throws(CLIError) {
        let options = try ItemOptions(args)
        let s = try context.open()
        let n = try store { () throws(SecureStoreError) in try s.delete(options.query) }
        print("deleted \(n) item(s)")
    }

    static func clear(_ args: [String], _ context: Context) throws(CLIError) {
        var classes = Set(ItemClass.allCases)
        var yes = false
        var rest = args[...]
        while let option = rest.first {
            rest.removeFirst()
            switch option {
            case "--yes": yes = true
            case "--class":
                guard let name = rest.first, let c = ItemClass(name: name) else {
                    throw .usage("--class expects generic, internet, certificate, key or identity.")
                }
                rest.removeFirst()
                if classes.count == ItemClass.allCases.count { classes = [] }
                classes.insert(c)
            default: throw .usage("unknown option \(option); see `securestore clear --help`.")
            }
        }
        let s = try context.open()
        guard yes else {
            throw .usage("clear deletes every item of \(s.storeDescription); add --yes to confirm.")
        }
        let n = try store { () throws(SecureStoreError) in try s.clear(classes) }
        print("cleared \(n) item(s)")
    }

    static func backends(_ args: [String], _ context: Context) throws(CLIError) {
        guard args.isEmpty else { throw .usage("backends takes no options.") }
        let selection: StoreSelection
        do throws(SecureStoreError) {
            selection = try StoreSelection.resolve(backend: context.backend, configFile: context.config)
        } catch {
            throw .store(error)
        }
        for factory in BackendRegistry.all {
            let availability: String = switch factory.availability(selection.settings(for: factory)) {
            case .success: "available"
            case .failure(let e): "unavailable: \(e.message)"
            }
            let mark = factory.name == selection.backend ? "*" : " "
            print("\(mark) \(factory.name.padding(toLength: 15, withPad: " ", startingAt: 0)) \(availability) — \(factory.summary)")
        }
        print("selected: \(selection.backend), \(selection.reason)")
    }
}

/// JSON and text renderings of attributes (never secrets).
enum JSONOutput {
    static var dates: ISO8601DateFormatter {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }

    static func object(_ item: ResultItem) -> [String: Any] {
        var out: [String: Any] = ["class": item.itemClass.rawValue]
        for (name, value) in item.attributes ?? [:] {
            switch value {
            case .string(let s): out[name.name] = s
            case .data(let d): out[name.name] = ["base64": d.base64EncodedString()]
            case .number(let n): out[name.name] = n
            case .bool(let b): out[name.name] = b
            case .date(let d): out[name.name] = dates.string(from: d)
            }
        }
        return out
    }

    /// The value as a person reads it in a prompt (text unquoted).
    static func plain(_ value: AttributeValue) -> String {
        if case .string(let s) = value { return s }
        return text(value)
    }

    static func text(_ value: AttributeValue) -> String {
        switch value {
        case .string(let s): "\"\(s)\""
        case .data(let d): "base64:\(d.base64EncodedString())"
        case .number(let n): String(n)
        case .bool(let b): String(b)
        case .date(let d): dates.string(from: d)
        }
    }
}

enum Help {
    static let item = """
          --class generic|internet|certificate|key|identity   (default generic)
          --service S  --account A  --label L  --server H  --protocol P  --port N  --path P  --access-group G
          --attr NAME=VALUE        any other attribute (name or Apple code; data as text or base64:…)
        """

    static func text(for command: String) -> String? {
        switch command {
        case "add": "usage: securestore add ITEM-OPTIONS [--update-existing] < secret\n"
            + "Stores standard input byte for byte as the secret. On a terminal, asks for it twice without echo\n"
            + "(the line end is not part of it).\n" + item
            + "\n  --update-existing        replace the secret of an item with the same key instead of failing"
        case "get": "usage: securestore get ITEM-OPTIONS > secret\nWrites the one matching item's secret to standard output, nothing else.\n"
            + "To a pipe or file: exactly the stored bytes. To a terminal: a newline follows when the secret does not end with one.\n" + item
        case "find": "usage: securestore find ITEM-OPTIONS [--json]\nLists matching items' attributes (never secrets), synced or not; without --class, of every class.\n" + item
        case "update": "usage: securestore update ITEM-OPTIONS [--set-label L] [--set-service S] [--set-account A] [--set-attr NAME=VALUE] [--data-stdin]\n"
            + "Changes every matching item and says how many. --data-stdin: the new secret from standard input,\n"
            + "byte for byte; on a terminal, asked without echo.\n" + item
        case "delete": "usage: securestore delete ITEM-OPTIONS\nDeletes every matching item and says how many.\n" + item
        case "clear": "usage: securestore clear --yes [--class C]...\nDeletes every item of the selected store (or of the given classes)."
        case "export": "usage: securestore export --output FILE\nWrites every item, with all attributes, to a new file encrypted with a passphrase\n"
            + "(SECURESTORE_EXPORT_PASSPHRASE, or asked on the terminal without echo)."
        case "import": "usage: securestore import --input FILE\nAdds every item of an export file (all or nothing; a clash is an error)."
        case "migrate": "usage: securestore migrate --to CONFIG_FILE\nCopies every item into the store CONFIG_FILE selects, in one transaction,\n"
            + "verifies every copy, and leaves the source unchanged; on failure the target stays as it was."
        case "rekey": "usage: securestore rekey --new-key-file FILE | --new-passphrase-env VAR\nRe-encrypts the SQLite store under a new key or passphrase."
        case "backends": "usage: securestore backends\nLists each backend, whether it works here (and why not), and which is selected and why."
        case "unlock": "usage: securestore unlock [--for DURATION]\n" + KeyCacheCommands.unlockHelp
        case "lock": "usage: securestore lock\nDrops the key `securestore unlock` kept for the selected store; the next call asks again."
        case "completions": "usage: securestore completions bash|zsh|fish\nWrites the shell's completion script, e.g. `source <(securestore completions bash)`."
        case "manpage": "usage: securestore manpage\nWrites the securestore(1) man page (roff) to standard output."
        default: nil
        }
    }
}
