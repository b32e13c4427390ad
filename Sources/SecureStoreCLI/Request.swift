import Foundation
public import SecureStoreCore

/// The items a command works on: a class and attribute values, each attribute given once.
public struct ItemSelection: Equatable, Sendable {
    public var itemClass: ItemClass = .genericPassword
    /// Whether `--class` was given (`find` searches every class otherwise).
    public var classGiven = false
    public var attributes: [AttributeName: AttributeValue] = [:]

    public init(itemClass: ItemClass = .genericPassword, classGiven: Bool = false,
                attributes: [AttributeName: AttributeValue] = [:]) {
        self.itemClass = itemClass
        self.classGiven = classGiven
        self.attributes = attributes
    }

    public var query: ItemQuery { ItemQuery(itemClass, attributes) }
}

/// The new key of `rekey`.
public enum RekeyTarget: Equatable, Sendable {
    case keyFile(String)
    /// The name of the environment variable that holds the new passphrase.
    case passphraseEnvironment(String)
}

/// What a parsed command line asks the tool to do.
public enum Request: Equatable, Sendable {
    case add(ItemSelection, updateExisting: Bool)
    case get(ItemSelection)
    case find(ItemSelection, json: Bool)
    /// `all`: no attribute to match was given, and `--all` said that is meant.
    case update(ItemSelection, changes: [AttributeName: AttributeValue], dataFromStandardInput: Bool)
    case delete(ItemSelection)
    case clear(classes: Set<ItemClass>)
    case export(output: String)
    case importFile(input: String)
    case migrate(configFile: String)
    case rekey(RekeyTarget)
    case backends
    /// Keep the store's derived key in the kernel keyring for `seconds` (1 s to 24 h).
    case unlock(seconds: Int)
    case lock
    /// The completion script of `shell` (bash, zsh or fish).
    case completions(shell: String)
    case manpage

    /// How long `unlock` keeps a key when `--for` is not given (1 hour), and at most (24 hours; the store
    /// checks its own limit too).
    public static let defaultUnlockSeconds = 3600
    public static let maxUnlockSeconds = 86400

    /// Interprets a command's options (already checked against the table): values parsed, nothing given twice.
    init(command: String, options: [ParsedOption], operands: [String] = []) throws(UsageError) {
        let given = Given(options)
        switch command {
        case "add": self = .add(try given.items(), updateExisting: given.flag("update-existing"))
        case "get": self = .get(try given.items())
        case "find": self = .find(try given.items(), json: given.flag("json"))
        case "update":
            let items = try given.items()
            try given.requireMatchOrAll(items, command: command)
            var changes: [AttributeName: AttributeValue] = [:]
            var sources: [AttributeName: String] = [:]
            for option in options {
                let named: [String: AttributeName] = ["set-label": .label, "set-service": .service, "set-account": .account]
                let (name, text): (AttributeName, String)
                if let n = named[option.name], let v = option.value {
                    (name, text) = (n, v)
                } else if option.name == "set-attr", let pair = option.value {
                    (name, text) = try Given.split(pair, option: "--set-attr")
                } else {
                    continue
                }
                let source = option.name == "set-attr" ? "--set-attr \(name.name)=…" : "--\(option.name)"
                if let earlier = sources[name] {
                    throw UsageError("\(name.name) is set twice (\(earlier) and \(source)); set it once.")
                }
                sources[name] = source
                changes[name] = try Given.value(text, for: name)
            }
            let data = given.flag("data-stdin")
            guard !changes.isEmpty || data else {
                throw UsageError("nothing to change: give --set-label, --set-service, --set-account, --set-attr or --data-stdin.")
            }
            self = .update(items, changes: changes, dataFromStandardInput: data)
        case "delete":
            let items = try given.items()
            try given.requireMatchOrAll(items, command: command)
            self = .delete(items)
        case "clear":
            var classes: Set<ItemClass> = []
            for name in given.values("class") {
                let c = try Given.itemClass(name, option: "--class")
                guard classes.insert(c).inserted else { throw UsageError("--class \(name) is given twice; give each class once.") }
            }
            self = .clear(classes: classes.isEmpty ? Set(ItemClass.allCases) : classes)
        case "export": self = .export(output: given.values("output").first ?? "")
        case "import": self = .importFile(input: given.values("input").first ?? "")
        case "migrate": self = .migrate(configFile: given.values("to").first ?? "")
        case "rekey":
            switch (given.values("new-key-file").first, given.values("new-passphrase-env").first) {
            case (let file?, nil): self = .rekey(.keyFile(file))
            case (nil, let variable?): self = .rekey(.passphraseEnvironment(variable))
            case (nil, nil): throw UsageError("rekey needs --new-key-file FILE or --new-passphrase-env VAR.")
            case (_?, _?): throw UsageError("rekey takes --new-key-file or --new-passphrase-env, not both.")
            }
        case "backends": self = .backends
        case "unlock":
            self = .unlock(seconds: try given.values("for").first.map(Self.duration) ?? Self.defaultUnlockSeconds)
        case "lock": self = .lock
        case "completions": self = .completions(shell: operands.first ?? "")
        case "manpage": self = .manpage
        default: throw UsageError("unknown command \(TextEscaping.quoted(command)).")
        }
    }
}

extension Request {
    /// `90`, `90s`, `15m`, `8h`, `1d`: whole seconds, 1 second to 24 hours.
    static func duration(_ text: String) throws(UsageError) -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var digits = Substring(text)
        var unit = 1
        if let last = digits.last, let u = units[last] {
            unit = u
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let n = Int(digits), n * unit >= 1, n * unit <= maxUnlockSeconds
        else {
            throw UsageError("--for expects a duration from 1s to 24h such as 90s, 15m or 8h; got \(TextEscaping.quoted(text)).")
        }
        return n * unit
    }
}

/// The options of one command line, read by name.
struct Given {
    let options: [ParsedOption]
    init(_ options: [ParsedOption]) { self.options = options }

    func flag(_ name: String) -> Bool { options.contains { $0.name == name } }
    func values(_ name: String) -> [String] { options.compactMap { $0.name == name ? $0.value : nil } }

    /// The item options: the class and every attribute, each attribute from exactly one option.
    func items() throws(UsageError) -> ItemSelection {
        var selection = ItemSelection()
        if let name = values("class").first {
            selection.itemClass = try Self.itemClass(name, option: "--class")
            selection.classGiven = true
        }
        var sources: [AttributeName: String] = [:]
        for option in options {
            let name: AttributeName
            let text: String
            if let attribute = CLITable.attributeOptions[option.name], let value = option.value {
                (name, text) = (attribute, value)
            } else if option.name == "attr", let pair = option.value {
                (name, text) = try Self.split(pair, option: "--attr")
            } else {
                continue
            }
            let source = option.name == "attr" ? "--attr \(name.name)=…" : "--\(option.name)"
            if let earlier = sources[name] {
                throw UsageError("\(name.name) is given twice (\(earlier) and \(source)); give it once.")
            }
            sources[name] = source
            selection.attributes[name] = try Self.value(text, for: name)
        }
        return selection
    }

    /// A command that changes every match needs an attribute to match, or `--all`; not both.
    func requireMatchOrAll(_ items: ItemSelection, command: String) throws(UsageError) {
        let all = flag("all")
        if all, !items.attributes.isEmpty {
            throw UsageError("--all matches every \(items.itemClass) and cannot be combined with attributes; give one or the other.")
        }
        if !all, items.attributes.isEmpty {
            throw UsageError("\(command) without an attribute to match would \(command) every \(items.itemClass); "
                + "give one (e.g. --service S), or --all if that is meant.")
        }
    }

    static func itemClass(_ name: String, option: String) throws(UsageError) -> ItemClass {
        guard let c = ItemClass(name: name) else {
            throw UsageError("\(option) expects \(CLITable.classNames.joined(separator: ", ")); got \(TextEscaping.quoted(name)).")
        }
        return c
    }

    /// `NAME=VALUE` with NAME an attribute name or Apple code.
    static func split(_ pair: String, option: String) throws(UsageError) -> (AttributeName, String) {
        guard let eq = pair.firstIndex(of: "=") else {
            throw UsageError("\(option) expects NAME=VALUE; got \(TextEscaping.quoted(pair)).")
        }
        let key = String(pair[..<eq])
        guard let name = AttributeName(codeOrName: key) else {
            throw UsageError("\(option): unknown attribute \(TextEscaping.quoted(key)); use a name such as comment or an Apple code such as icmt.")
        }
        return (name, String(pair[pair.index(after: eq)...]))
    }

    /// Text as given; a port 0…65535; other numbers and booleans as text (the core normalizes them and names
    /// the attribute on error); dates as ISO 8601; data as text bytes or `base64:…`.
    static func value(_ text: String, for name: AttributeName) throws(UsageError) -> AttributeValue {
        if name == .port {
            guard let n = Int64(text), (0...65535).contains(n) else {
                throw UsageError("port expects a whole number from 0 to 65535; got \(TextEscaping.quoted(text)).")
            }
            return .number(n)
        }
        switch name.kind {
        case .text, .numberOrText, .textOrNumber: return .string(text)   // the core reads decimal protocols as numbers
        case .data:
            if text.hasPrefix("base64:") {
                guard let d = Data(base64Encoded: String(text.dropFirst(7))) else {
                    throw UsageError("\(name.name): invalid base64 after \"base64:\".")
                }
                return .data(d)
            }
            return .data(Data(text.utf8))
        case .number, .bool: return .string(text)
        case .date:
            guard let d = ISO8601DateFormatter().date(from: text) else {
                throw UsageError("\(name.name) expects an ISO 8601 date such as 2024-05-01T12:00:00Z; got \(TextEscaping.quoted(text)).")
            }
            return .date(d)
        }
    }
}
