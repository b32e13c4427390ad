/// A mistake on the command line: exit status 2 and this message (which never holds a secret: secrets only
/// come from standard input).
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One option as given: its long name and its value (nil for a flag).
public struct ParsedOption: Equatable, Sendable {
    public let name: String
    public let value: String?
    public init(_ name: String, _ value: String?) {
        self.name = name
        self.value = value
    }
}

/// A command line that parsed: the global options, the command, its options in order, and what they mean.
public struct ParsedCommand: Equatable, Sendable {
    public let globals: [ParsedOption]
    public let command: String
    public let options: [ParsedOption]
    /// The words after the options that are not options (`bash` for `completions bash`).
    public let operands: [String]
    /// The options interpreted: what to do.
    public let request: Request

    public var config: String? { globals.last { $0.name == "config" }?.value }
    public var backend: String? { globals.last { $0.name == "backend" }?.value }

    /// The same command line again (`--name VALUE`, or `--name=VALUE` with `inline`), without the program name.
    public func arguments(inline: Bool = false) -> [String] {
        func render(_ o: ParsedOption) -> [String] {
            guard let value = o.value else { return ["--" + o.name] }
            return inline ? ["--\(o.name)=\(value)"] : ["--" + o.name, value]
        }
        return globals.flatMap(render) + [command] + options.flatMap(render) + operands
    }
}

/// What a command line asks for.
public enum Invocation: Equatable, Sendable {
    /// `--help` / `-h`: the global help (nil) or a command's.
    case help(command: String?)
    case version
    case run(ParsedCommand)
}

/// Parses the tool's arguments against ``CLITable``: no I/O, no store, no global state.
///
/// Rules: `--name VALUE` and `--name=VALUE`; a value is whatever follows an option that takes one, even `-h`
/// or `--x`; `-h`/`--help` asks for help only where an option is expected (what follows it is not
/// interpreted, but must be UTF-8); `--version` stands alone; `--` ends the options (only a command with an
/// operand, such as `completions SHELL`, takes a word that is not an option, once); every argument must be valid UTF-8; an option given twice
/// (unless it is repeatable), two options that set the same thing, and an unknown option or command are
/// usage errors, with a hint.
public enum ArgumentParser {
    /// Parses raw arguments (without the program name), as the kernel passed them.
    public static func parse(_ argv: [[UInt8]]) -> Result<Invocation, UsageError> {
        do throws(UsageError) {
            return .success(try parseOrThrow(argv))
        } catch {
            return .failure(error)
        }
    }

    /// Parses arguments that are already text (tests, the fuzz harness's re-rendered lines).
    public static func parse(_ arguments: [String]) -> Result<Invocation, UsageError> {
        parse(arguments.map { Array($0.utf8) })
    }

    static func parseOrThrow(_ argv: [[UInt8]]) throws(UsageError) -> Invocation {
        var cursor = Cursor(argv)
        var globals: [ParsedOption] = []
        var command: CLICommand?
        // Global options, up to the command.
        while let (index, raw) = cursor.next() {
            if raw == dashDash {
                guard let (i, name) = cursor.next() else { throw UsageError("no command after --; see `securestore --help`.") }
                command = try commandNamed(try text(name, argument: i, what: "the command"))
                break
            }
            guard raw.first == dash, raw.count > 1 else {
                command = try commandNamed(try text(raw, argument: index, what: "the command"))
                break
            }
            let (name, inline) = try split(raw, argument: index)
            if name == CLITable.help.name || name == "-h" {
                if inline != nil { throw UsageError("--help takes no value.") }
                try cursor.checkRest()
                return .help(command: nil)
            }
            if name == CLITable.versionOption.name {
                if inline != nil { throw UsageError("--version takes no value.") }
                if let (i, extra) = cursor.next() {
                    throw UsageError("unexpected argument \(quoted(extra, argument: i)) after --version.")
                }
                return .version
            }
            guard let option = CLITable.globalOption(named: name) else {
                if CLITable.commands.contains(where: { $0.option(named: name) != nil }) {
                    throw UsageError("\(display(name)) is an option of a command: put it after the command "
                        + "(securestore [--config FILE] [--backend NAME] COMMAND [OPTIONS]).")
                }
                throw UsageError("unknown option \(display(name))\(hint(name, CLITable.globalOptions.map(\.name), dashes: true)); "
                    + "see `securestore --help`.")
            }
            let value = try takeValue(option, inline: inline, cursor: &cursor, argument: index)
            guard !globals.contains(where: { $0.name == option.name }) else {
                throw UsageError("\(option.flag) is given twice; give it once.")
            }
            globals.append(ParsedOption(option.name, value))
        }
        guard let command else { throw UsageError("no command given; see `securestore --help`.") }

        // The command's options.
        var options: [ParsedOption] = []
        var operands: [String] = []
        while let (index, raw) = cursor.next() {
            if raw == dashDash {
                while let (i, extra) = cursor.next() {
                    guard command.operandName != nil, operands.isEmpty else {
                        throw UsageError("unexpected argument \(quoted(extra, argument: i)) after --: "
                            + "`securestore \(command.name)` takes options only; see `securestore \(command.name) --help`.")
                    }
                    operands.append(try operand(extra, argument: i, of: command))
                }
                break
            }
            guard raw.first == dash, raw.count > 1 else {
                guard command.operandName != nil, operands.isEmpty else {
                    throw UsageError("unexpected argument \(quoted(raw, argument: index)): `securestore \(command.name)` takes "
                        + "options only (a value follows its option); see `securestore \(command.name) --help`.")
                }
                operands.append(try operand(raw, argument: index, of: command))
                continue
            }
            let (name, inline) = try split(raw, argument: index)
            if name == CLITable.help.name || name == "-h" {
                if inline != nil { throw UsageError("--help takes no value.") }
                try cursor.checkRest()
                return .help(command: command.name)
            }
            guard let option = command.option(named: name) else {
                if CLITable.globalOption(named: name) != nil {
                    throw UsageError("--\(name) is a global option: put it before the command "
                        + "(securestore --\(name) … \(command.name) …).")
                }
                throw UsageError("unknown option \(display(name)) for \(command.name)"
                    + "\(hint(name, command.options.map(\.name), dashes: true)); see `securestore \(command.name) --help`.")
            }
            let value = try takeValue(option, inline: inline, cursor: &cursor, argument: index)
            if !option.repeatable, options.contains(where: { $0.name == option.name }) {
                throw UsageError("\(option.flag) is given twice; give it once.")
            }
            options.append(ParsedOption(option.name, value))
        }
        for option in command.options where option.required && !options.contains(where: { $0.name == option.name }) {
            throw UsageError("\(command.name) needs \(option.synopsis) (\(option.help)); see `securestore \(command.name) --help`.")
        }
        if let operandName = command.operandName, operands.isEmpty {
            throw UsageError("\(command.name) needs \(operandName) (\(command.operands.joined(separator: ", "))); "
                + "see `securestore \(command.name) --help`.")
        }
        let request = try Request(command: command.name, options: options, operands: operands)
        return .run(ParsedCommand(globals: globals, command: command.name, options: options, operands: operands,
                                  request: request))
    }

    /// The command's one operand: a word of its list.
    static func operand(_ raw: [UInt8], argument: Int, of command: CLICommand) throws(UsageError) -> String {
        let word = try text(raw, argument: argument, what: "\(command.operandName ?? "the operand")")
        guard command.operands.contains(word) else {
            throw UsageError("\(command.name) expects \(command.operands.joined(separator: ", ")); got \(TextEscaping.quoted(word))"
                + "\(hint(word, command.operands, dashes: false)).")
        }
        return word
    }

    // MARK: - Pieces

    static let dash = UInt8(ascii: "-")
    static let dashDash: [UInt8] = [dash, dash]

    /// The arguments with their 1-based positions (for messages).
    struct Cursor {
        let argv: [[UInt8]]
        var at = 0
        init(_ argv: [[UInt8]]) { self.argv = argv }
        mutating func next() -> (Int, [UInt8])? {
            guard at < argv.count else { return nil }
            defer { at += 1 }
            return (at + 1, argv[at])
        }

        /// Help ignores the arguments after it, but they must still be UTF-8 (nothing is accepted unread).
        mutating func checkRest() throws(UsageError) {
            while let (i, raw) = next() { _ = try text(raw, argument: i, what: "an argument after --help") }
        }
    }

    /// `--name=value` → (name, value); `--name` → (name, nil); `-h` → ("-h", nil). Names must be UTF-8.
    static func split(_ raw: [UInt8], argument: Int) throws(UsageError) -> (String, [UInt8]?) {
        if raw.count == 2, raw[1] != dash {
            // A one-letter option: only -h exists.
            let name = try text(raw, argument: argument, what: "an option")
            guard name == "-h" else {
                throw UsageError("unknown option \(display(name)); options are long (--name), except -h for help.")
            }
            return (name, nil)
        }
        guard raw.count > 2, raw[1] == dash else {
            let name = try text(raw, argument: argument, what: "an option")
            throw UsageError("unknown option \(display(name)); options are long (--name), except -h for help.")
        }
        let body = raw[2...]
        let eq = body.firstIndex(of: UInt8(ascii: "="))
        let nameBytes = Array(eq.map { body[..<$0] } ?? body)
        let name = try text(nameBytes, argument: argument, what: "an option name")
        return (name, eq.map { Array(body[body.index(after: $0)...]) })
    }

    static func takeValue(_ option: CLIOption, inline: [UInt8]?, cursor: inout Cursor, argument: Int)
        throws(UsageError) -> String?
    {
        guard let valueName = option.valueName else {
            if inline != nil { throw UsageError("\(option.flag) takes no value.") }
            return nil
        }
        if let inline { return try text(inline, argument: argument, what: "the value of \(option.flag)") }
        guard let (i, raw) = cursor.next() else { throw UsageError("\(option.flag) expects a value (\(option.flag) \(valueName)).") }
        return try text(raw, argument: i, what: "the value of \(option.flag)")
    }

    static func text(_ bytes: [UInt8], argument: Int, what: String) throws(UsageError) -> String {
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw UsageError("\(what) (argument \(argument)) is not valid UTF-8; every argument must be UTF-8 text "
                + "(bytes of a data attribute can be given as --attr NAME=base64:…).")
        }
        return s
    }

    static func commandNamed(_ name: String) throws(UsageError) -> CLICommand {
        guard let command = CLITable.command(named: name) else {
            throw UsageError("unknown command \(TextEscaping.quoted(name))\(hint(name, CLITable.commands.map(\.name), dashes: false)); "
                + "see `securestore --help`.")
        }
        return command
    }

    static func display(_ name: String) -> String {
        name.hasPrefix("-") ? TextEscaping.escaped(name) : "--" + TextEscaping.escaped(name)
    }

    static func quoted(_ raw: [UInt8], argument: Int) -> String {
        String(validating: raw, as: UTF8.self).map(TextEscaping.quoted) ?? "(argument \(argument), not UTF-8)"
    }

    /// " (did you mean --service?)" for a near miss, else "".
    static func hint(_ given: String, _ candidates: [String], dashes: Bool) -> String {
        let g = Array(given.lowercased().utf8.prefix(64))
        guard !g.isEmpty else { return "" }
        let best = candidates.map { ($0, distance(g, Array($0.utf8))) }.min { $0.1 < $1.1 }
        guard let (name, d) = best, d < g.count, d <= min(3, max(2, name.utf8.count / 3)) || name.hasPrefix(given.lowercased())
        else { return "" }
        return " (did you mean \(dashes ? "--" : "")\(name)?)"
    }

    /// Levenshtein distance.
    static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
