import Foundation
import SecureStoreCore
import SecureStoreCLI
import SecureStoreBackends

enum Commands {
    static func run(_ parsed: ParsedCommand) throws(CLIError) {
        let context = Context(config: parsed.config, backend: parsed.backend)
        switch parsed.request {
        case .add(let items, let updateExisting): try add(items, updateExisting: updateExisting, context)
        case .get(let items): try get(items, context)
        case .find(let items, let json): try find(items, json: json, context)
        case .update(let items, let changes, let data): try update(items, changes, dataFromStandardInput: data, context)
        case .delete(let items): try delete(items, context)
        case .clear(let classes): try clear(classes, context)
        case .backends: try backends(context)
        case .export(let output): try Transfer.export(to: output, context)
        case .importFile(let input): try Transfer.importFile(input, context)
        case .migrate(let config): try Transfer.migrate(to: config, context)
        case .rekey(let target): try Transfer.rekey(to: target, context)
        case .unlock(let seconds): try KeyCacheCommands.unlock(seconds: seconds, context)
        case .lock: try KeyCacheCommands.lock(context)
        case .completions(let shell):
            guard let script = Generators.completion(shell) else { throw .usage("completions expects bash, zsh or fish.") }
            try StandardStreams.output(script)
        case .manpage: try StandardStreams.output(Generators.roff())
        }
    }

    @discardableResult
    static func store<T>(_ body: () throws(SecureStoreError) -> T) throws(CLIError) -> T {
        do throws(SecureStoreError) { return try body() } catch { throw .store(error) }
    }

    /// The new secret: typed at the terminal when stdin is one (twice when `confirm`), else stdin byte for byte
    /// (at most 1 MiB).
    static func secretInput(_ items: ItemSelection, confirm: Bool) throws(CLIError) -> Data {
        let a = items.attributes
        let name: String = if a[.service] != nil || a[.account] != nil {
            "\(a[.service].map(JSONOutput.plain) ?? "")/\(a[.account].map(JSONOutput.plain) ?? "")"
        } else if let server = a[.server] ?? a[.label] {
            JSONOutput.plain(server)
        } else {
            "the \(items.itemClass.rawValue) item"
        }
        return try TerminalPrompt.secret(for: name, confirm: confirm)
    }

    static func add(_ items: ItemSelection, updateExisting: Bool, _ context: Context) throws(CLIError) {
        // Piped input is read first (a store that cannot open does not leave a writer blocked); a person is
        // asked only once the store is open.
        let piped = TerminalPrompt.isInteractive ? nil : try StandardStreams.input()
        let s = try context.open(creating: true)
        let secret: Data
        if let piped { secret = piped } else { secret = try secretInput(items, confirm: true) }
        let item = NewItem(items.itemClass, items.attributes, data: secret)
        let outcome = Result { () throws(SecureStoreError) in try s.add(item) }
        if case .failure(let e) = outcome {
            guard e.code == .duplicateItem, updateExisting else { throw .store(e) }
            var query = items.query
            query.attributes = items.attributes.filter { items.itemClass.uniquenessKey.contains($0.key) }
            let n = try store { () throws(SecureStoreError) in try s.update(query, with: ItemChanges(items.attributes, data: secret)) }
            // Committed: the note is informative, and a failure to write it leaves the exit status 0.
            StandardStreams.note("updated \(n) existing item(s)\n")
        }
    }

    static func get(_ items: ItemSelection, _ context: Context) throws(CLIError) {
        let s = try context.open(creating: false)
        var query = items.query
        query.returning = .data
        query.limit = .all
        let found = try store { () throws(SecureStoreError) in try s.items(matching: query) }
        if found.isEmpty { throw .store(.notFound()) }
        guard found.count == 1, let item = found.first else {
            throw .usage("\(found.count) items match; narrow the query (e.g. --service and --account) so exactly one does.")
        }
        let data = item.data ?? Data()   // an item without a secret prints nothing
        try StandardStreams.output(data)
        // On a terminal the prompt after it starts on a line of its own; to a pipe or file: exactly the bytes.
        if isatty(1) == 1, !data.isEmpty, data.last != UInt8(ascii: "\n") { try StandardStreams.output("\n") }
    }

    static func find(_ items: ItemSelection, json: Bool, _ context: Context) throws(CLIError) {
        let s = try context.open(creating: false)
        // Without --class, every class that defines the given attributes is searched.
        let classes = items.classGiven ? [items.itemClass]
            : ItemClass.allCases.filter { c in items.attributes.keys.allSatisfy { c.attributes.contains($0) } }
        var found: [Item] = []
        for itemClass in classes {
            var query = ItemQuery(itemClass, items.attributes, limit: .all, returning: .attributes)
            query.synchronizableAny = items.attributes[.synchronizable] == nil
            found += try store { () throws(SecureStoreError) in try s.items(matching: query) }
        }
        if found.isEmpty { throw .store(.notFound()) }
        if json {
            let array = found.map { JSONOutput.object($0) }
            guard let data = try? JSONSerialization.data(withJSONObject: array, options: [.prettyPrinted, .sortedKeys]) else {
                throw .other("cannot encode the result as JSON")
            }
            try StandardStreams.output(data + Data("\n".utf8))
        } else {
            try StandardStreams.output(found.map(JSONOutput.line).joined())
        }
    }

    static func update(_ items: ItemSelection, _ attributes: [AttributeName: AttributeValue], dataFromStandardInput: Bool,
                       _ context: Context) throws(CLIError) {
        var changes = ItemChanges()
        changes.attributes = attributes
        let piped = dataFromStandardInput && !TerminalPrompt.isInteractive ? try StandardStreams.input() : nil
        let s = try context.open(creating: false)
        if let piped {
            changes.data = piped
        } else if dataFromStandardInput {
            changes.data = try secretInput(items, confirm: false)
        }
        let n = try store { () throws(SecureStoreError) in try s.update(items.query, with: changes) }
        StandardStreams.report("updated \(n) item(s)")
    }

    static func delete(_ items: ItemSelection, _ context: Context) throws(CLIError) {
        let s = try context.open(creating: false)
        let n = try store { () throws(SecureStoreError) in try s.delete(items.query) }
        StandardStreams.report("deleted \(n) item(s)")
    }

    static func clear(_ classes: Set<ItemClass>, _ context: Context) throws(CLIError) {
        // No store yet: nothing to clear (and none is created for it).
        let n: Int
        do throws(CLIError) {
            let s = try context.open(creating: false)
            n = try store { () throws(SecureStoreError) in try s.clear(classes) }
        } catch .store(let e) where e.code == .itemNotFound {
            n = 0
        }
        StandardStreams.report("cleared \(n) item(s)")
    }

    static func backends(_ context: Context) throws(CLIError) {
        let selection = try context.selection()
        var lines: [String] = []
        for factory in BackendRegistry.all {
            let availability: String = switch factory.availability(selection.settings(for: factory)) {
            case .success: "available" + (factory.detail().map { " (\($0))" } ?? "")
            case .failure(let e): "unavailable: \(e.message)"
            }
            let mark = factory.name == selection.backend ? "*" : " "
            lines.append("\(mark) \(factory.name.padding(toLength: 15, withPad: " ", startingAt: 0)) \(availability) — \(factory.summary)")
            lines.append("    guarantees: \(factory.guarantees.map { "\($0)" } ?? "not declared")")
        }
        var reason = selection.reason.description
        if let config = context.config, selection.reason == .configFile(path: config) { reason += " (given with --config)" }
        lines.append("selected: \(selection.backend), \(reason)")
        try StandardStreams.output(lines.map { $0 + "\n" }.joined())
    }
}

/// JSON and text renderings of attributes (never secrets).
enum JSONOutput {
    static var dates: ISO8601DateFormatter {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }

    static func object(_ item: Item) -> [String: Any] {
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

    /// One line of `find`'s text output: the class code, then NAME=VALUE pairs by name; text escaped
    /// (`TextEscaping`), so a value can never end the line or its quotes.
    static func line(_ item: Item) -> String {
        let attrs = (item.attributes ?? [:]).sorted { $0.key.name < $1.key.name }
            .map { "\($0.key.name)=\(text($0.value))" }.joined(separator: " ")
        return "\(item.itemClass.rawValue) \(attrs)\n"
    }

    /// The value as a person reads it in a prompt (text unquoted, control characters escaped).
    static func plain(_ value: AttributeValue) -> String {
        if case .string(let s) = value { return TextEscaping.controlsEscaped(s) }
        return text(value)
    }

    static func text(_ value: AttributeValue) -> String {
        switch value {
        case .string(let s): TextEscaping.quoted(s)
        case .data(let d): "base64:\(d.base64EncodedString())"
        case .number(let n): String(n)
        case .bool(let b): String(b)
        case .date(let d): dates.string(from: d)
        }
    }
}
