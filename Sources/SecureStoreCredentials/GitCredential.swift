public import Foundation
public import SecureStoreCore

/// A credential description of git's credential helper protocol (`git help credential`): one `key=value`
/// line per attribute, ended by a blank line or end of file.
///
/// Only what a helper uses is kept; `wwwauth[]` and every attribute this helper does not know are read and
/// dropped, as git's own helpers do, so newer git versions can send more.
public struct GitCredential: Sendable, Equatable {
    /// `protocol` (`https`).
    public var scheme: String?
    /// `host`, as sent: includes `:port` when the URL had one.
    public var host: String?
    /// `path`: git sends it for HTTP only with `credential.useHttpPath`.
    public var path: String?
    public var username: String?
    /// `password`: bytes as sent (no newline or NUL can be in it).
    public var password: Data?
    /// `password_expiry_utc`: Unix seconds, digits only.
    public var passwordExpiryUTC: String?
    /// `oauth_refresh_token`: confidential like the password.
    public var oauthRefreshToken: Data?
    /// `capability[]` values, in order (an empty value clears the list, as the protocol says).
    public var capabilities: [String] = []
    /// `state[]` values, in order.
    public var state: [String] = []

    public init(scheme: String? = nil, host: String? = nil, path: String? = nil, username: String? = nil,
                password: Data? = nil, passwordExpiryUTC: String? = nil, oauthRefreshToken: Data? = nil) {
        self.scheme = scheme
        self.host = host
        self.path = path
        self.username = username
        self.password = password
        self.passwordExpiryUTC = passwordExpiryUTC
        self.oauthRefreshToken = oauthRefreshToken
    }

    private static let newline = UInt8(ascii: "\n")
    private static let equals = UInt8(ascii: "=")

    /// Whether `data` holds a complete credential: a blank line (at the start, or two newlines in a row) at
    /// or after `start` — so a reader looks only at what it just appended.
    static func endsCredential(_ data: Data, scanningFrom start: Data.Index) -> Bool {
        if data.first == newline { return true }
        var previous: UInt8 = 0
        var i = max(data.startIndex, start)
        if i > data.startIndex { previous = data[data.index(before: i)] }
        while i < data.endIndex {
            let byte = data[i]
            if byte == newline, previous == newline { return true }
            previous = byte
            i = data.index(after: i)
        }
        return false
    }

    /// Parses a credential description. Reading stops at the first blank line; what follows is ignored.
    /// - Throws: for a line without `=`, a NUL byte, a known attribute given twice, text that is not UTF-8, or
    ///   a malformed `password_expiry_utc`. The message names the line and key, never a value.
    public static func parse(_ input: Data) throws(CredentialHelperError) -> GitCredential {
        var credential = GitCredential()
        var seen: Set<String> = []
        let bytes = [UInt8](input)
        var lineStart = 0
        var lineNumber = 0
        while lineStart < bytes.count {
            lineNumber += 1
            var lineEnd = lineStart
            while lineEnd < bytes.count, bytes[lineEnd] != newline { lineEnd += 1 }
            let line = bytes[lineStart..<lineEnd]
            lineStart = lineEnd + 1
            if line.isEmpty { break }
            guard !line.contains(0) else { throw CredentialHelperError("bad input: line \(lineNumber) contains a NUL byte.") }
            guard let eq = line.firstIndex(of: equals) else {
                throw CredentialHelperError("bad input: line \(lineNumber) is not key=value.")
            }
            guard let key = String(validating: line[line.startIndex..<eq], as: UTF8.self) else {
                throw CredentialHelperError("bad input: the key on line \(lineNumber) is not UTF-8.")
            }
            let value = line[(eq + 1)...]
            func text() throws(CredentialHelperError) -> String {
                guard let s = String(validating: value, as: UTF8.self) else {
                    throw CredentialHelperError("bad input: the value of \(key) (line \(lineNumber)) is not UTF-8.")
                }
                return s
            }
            switch key {
            case "protocol", "host", "path", "username", "password", "password_expiry_utc", "oauth_refresh_token":
                guard seen.insert(key).inserted else {
                    throw CredentialHelperError("bad input: \(key) is given twice (line \(lineNumber)); a value is one value.")
                }
                switch key {
                case "protocol": credential.scheme = try text()
                case "host": credential.host = try text()
                case "path": credential.path = try text()
                case "username": credential.username = try text()
                case "password": credential.password = Data(value)
                case "oauth_refresh_token": credential.oauthRefreshToken = Data(value)
                default:
                    let expiry = try text()
                    guard !expiry.isEmpty, expiry.utf8.count <= 20, expiry.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                        throw CredentialHelperError("bad input: password_expiry_utc must be Unix time in seconds (digits only).")
                    }
                    credential.passwordExpiryUTC = expiry
                }
            case "capability[]":
                let v = try text()
                if v.isEmpty { credential.capabilities = [] } else { credential.capabilities.append(v) }
            case "state[]":
                let v = try text()
                if v.isEmpty { credential.state = [] } else { credential.state.append(v) }
            default:
                break   // wwwauth[], url, authtype, ephemeral, …: not used by a storing helper
            }
        }
        return credential
    }

    /// The `key=value` lines of a helper's answer. Values never hold a newline or NUL (the caller checked).
    static func line(_ key: String, _ value: some Sequence<UInt8>) -> Data {
        var out = Data(key.utf8)
        out.append(equals)
        out.append(contentsOf: value)
        out.append(newline)
        return out
    }
}

/// Where a git credential lives: the internet-password attributes `git-credential-osxkeychain` uses.
///
/// `protocol` becomes Apple's four-character protocol code (`https` → `htps`), `host` splits into server and
/// port, `path` and `username` map to path and account, and the authentication type is Apple's default
/// (`dflt`), as osxkeychain sets it. The secret is the password, then `\npassword_expiry_utc=…` and
/// `\noauth_refresh_token=…` when given — osxkeychain's layout, so both stay as confidential as the password.
public struct GitCredentialKey: Sendable, Equatable {
    public var protocolCode: String
    public var server: String
    /// 0 when the host names no port.
    public var port: Int
    public var path: String?
    public var account: String?

    /// git protocol names and the Apple codes osxkeychain maps them to. Other protocols (`cert`, …) are not
    /// stored: every action passes over them silently, as osxkeychain does.
    public static let protocols: [String: String] = [
        "https": AppleCode.protocolHTTPS, "http": AppleCode.protocolHTTP,
        "ftp": AppleCode.protocolFTP, "ftps": AppleCode.protocolFTPS,
        "imap": AppleCode.protocolIMAP, "imaps": AppleCode.protocolIMAPS,
        "smtp": AppleCode.protocolSMTP,
    ]

    /// The key of a credential, or nil when it has no supported protocol or no host (then nothing can be
    /// stored or found for it).
    /// - Throws: for a host whose port is not a number from 1 to 65535, or an IPv6 literal without `]`.
    public init?(_ credential: GitCredential) throws(CredentialHelperError) {
        guard let scheme = credential.scheme, let code = Self.protocols[scheme],
              let host = credential.host, !host.isEmpty else { return nil }
        let (server, port) = try Self.splitHost(host)
        guard !server.isEmpty else { return nil }
        protocolCode = code
        self.server = server
        self.port = port ?? 0
        path = credential.path
        account = credential.username
    }

    /// `host` as git sends it: `name`, `name:port`, `[v6]` or `[v6]:port`.
    static func splitHost(_ host: String) throws(CredentialHelperError) -> (String, Int?) {
        var name = Substring(host)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else {
                throw CredentialHelperError("bad input: host starts an IPv6 address with [ but has no ].")
            }
            name = host[host.index(after: host.startIndex)..<close]
            let rest = host[host.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { throw CredentialHelperError("bad input: host has text after ] that is not :port.") }
                portText = rest.dropFirst()
            }
        } else if let colon = host.firstIndex(of: ":") {
            guard host.lastIndex(of: ":") == colon else {
                throw CredentialHelperError("bad input: host has several colons; write an IPv6 address in brackets.")
            }
            name = host[..<colon]
            portText = host[host.index(after: colon)...]
        }
        guard let portText, !portText.isEmpty else { return (String(name), nil) }
        guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let port = Int(portText), (1...65535).contains(port) else {
            throw CredentialHelperError("bad input: the port in host must be a number from 1 to 65535.")
        }
        return (String(name), port)
    }

    /// The attributes every query of this credential pins: server, protocol, port, authentication type, and
    /// path and account when the credential has them (git's rule: a missing path or username matches any).
    var queryAttributes: [AttributeName: AttributeValue] {
        var a: [AttributeName: AttributeValue] = [
            .server: .string(server), .protocol: .string(protocolCode), .port: .number(Int64(port)),
            .authenticationType: .string(AppleCode.authenticationTypeDefault),
        ]
        if let path { a[.path] = .string(path) }
        if let account { a[.account] = .string(account) }
        return a
    }

    /// Every attribute of the uniqueness key, defaults included: matches exactly the one item `store` makes.
    var exactKey: [AttributeName: AttributeValue] {
        var a = queryAttributes
        a[.path] = .string(path ?? "")
        a[.account] = .string(account ?? "")
        a[.securityDomain] = .string("")
        return a
    }

    /// A label like libsecret's (`Git: https://example.com:8443/repo.git`), for people reading the store.
    var label: String {
        let scheme = Self.protocols.first { $0.value == protocolCode }?.key ?? protocolCode
        let hostPart = server.contains(":") ? "[\(server)]" : server
        return "Git: \(scheme)://\(hostPart)\(port == 0 ? "" : ":\(port)")/\(path ?? "")"
    }
}

/// git's credential helper protocol (`get`, `store`, `erase`) over a ``SecureStore``.
public enum GitCredentialHelper {
    /// The `state[]` value this helper hands out with a credential it found, when git announced the `state`
    /// capability: git sends it back with `store`, which then has nothing to do (as osxkeychain does).
    public static let seenState = "securestore:seen=1"

    public static let usage = "usage: git credential-securestore [--config FILE] [--backend NAME] <get|store|erase>"

    /// Runs one action. `arguments` are the helper's arguments (without the program name): options, then the
    /// action. `open` opens the configured store, only when the action needs it.
    public static func run(arguments: [String], input: Data, open: StoreOpener) -> HelperOutcome {
        do throws(CredentialHelperError) {
            let (selection, action) = try parseArguments(arguments)
            // git's rule: an action a helper does not know is ignored silently (room for future actions).
            guard ["get", "store", "erase"].contains(action) else { return HelperOutcome() }
            let credential = try GitCredential.parse(input)
            guard let key = try GitCredentialKey(credential) else { return HelperOutcome() }
            var choice = selection
            choice.creatingStore = action == "store"
            let opener: () throws(SecureStoreError) -> any SecureStore = { () throws(SecureStoreError) in try open(choice) }
            switch action {
            case "get": return HelperOutcome(output: try get(credential, key, opener))
            case "store": try store(credential, key, opener)
            default: try erase(credential, key, opener)
            }
            return HelperOutcome()
        } catch {
            return HelperOutcome(diagnostic: error.message, status: 1)
        }
    }

    /// `[--config FILE] [--backend NAME] ACTION`: the options choose the store as for `securestore`.
    static func parseArguments(_ arguments: [String]) throws(CredentialHelperError) -> (StoreChoice, String) {
        var choice = StoreChoice()
        var rest = arguments[...]
        while let option = rest.first, option.hasPrefix("-") {
            rest.removeFirst()
            guard let value = rest.popFirst() else { throw CredentialHelperError("\(option) expects a value; \(usage)") }
            switch option {
            case "--config": choice.configFile = value
            case "--backend": choice.backend = value
            default: throw CredentialHelperError("unknown option \(option); \(usage)")
            }
        }
        guard let action = rest.popFirst(), rest.isEmpty else { throw CredentialHelperError(usage) }
        return (choice, action)
    }

    /// The first matching item: `username` (when git did not send one), `password`, and the expiry and
    /// refresh token stored with it. Nothing at all when nothing matches.
    static func get(_ credential: GitCredential, _ key: GitCredentialKey, _ open: () throws(SecureStoreError) -> any SecureStore)
        throws(CredentialHelperError) -> Data
    {
        guard let store = try existingStore(open) else { return Data() }   // no store yet: nothing stored
        let query = ItemQuery(.internetPassword, key.queryAttributes, returning: [.data, .attributes])
        guard let item = try storeCall({ () throws(SecureStoreError) in try store.item(matching: query) }) else {
            return Data()
        }
        guard let secret = StoredSecret(item.data ?? Data()) else {
            // Refused as a NUL or newline in the password is: never a first line passed off as the whole secret.
            throw CredentialHelperError("the stored password has more than one line (other than git's "
                + "password_expiry_utc= and oauth_refresh_token= lines), which git's protocol cannot carry; nothing "
                + "was sent. Store it without line breaks, or read it with `securestore get`.")
        }
        var out = Data()
        if credential.username == nil {
            let account = item.attributes?[.account]?.bytes ?? []
            try checkSendable(account, what: "username")
            out.append(GitCredential.line("username", account))
        }
        try checkSendable(secret.password, what: "password")
        out.append(GitCredential.line("password", secret.password))
        if let expiry = secret.expiry { out.append(GitCredential.line("password_expiry_utc", expiry)) }
        if let token = secret.refreshToken { out.append(GitCredential.line("oauth_refresh_token", token)) }
        if credential.capabilities.contains("state") {
            out.append(GitCredential.line("capability[]", "state".utf8))
            out.append(GitCredential.line("state[]", seenState.utf8))
        }
        return out
    }

    private static func checkSendable(_ bytes: some Collection<UInt8>, what: String) throws(CredentialHelperError) {
        guard !bytes.contains(0), !bytes.contains(UInt8(ascii: "\n")) else {
            throw CredentialHelperError("the stored \(what) contains a newline or NUL byte, which git's protocol cannot carry.")
        }
    }

    /// Stores a complete credential (protocol, host, username, password), replacing the secret of the item
    /// with the same key. An incomplete one is ignored, as git's own `credential-store` ignores it.
    static func store(_ credential: GitCredential, _ key: GitCredentialKey, _ open: () throws(SecureStoreError) -> any SecureStore) throws(CredentialHelperError) {
        if credential.state.contains(seenState) { return }
        guard key.account != nil, let password = credential.password else { return }
        let secret = StoredSecret(password: password, expiry: credential.passwordExpiryUTC,
                                  refreshToken: credential.oauthRefreshToken).data
        var attributes = key.queryAttributes
        attributes[.label] = .string(key.label)
        if key.path?.isEmpty ?? true { attributes[.path] = nil }
        if key.port == 0 { attributes[.port] = nil }
        let store = try storeCall(open)
        let added = Result { () throws(SecureStoreError) in try store.add(NewItem(.internetPassword, attributes, data: secret)) }
        guard case .failure(let error) = added else { return }
        guard error.code == .duplicateItem else { throw CredentialHelperError(error) }
        try storeCall { () throws(SecureStoreError) in
            try store.update(ItemQuery(.internetPassword, key.exactKey), with: ItemChanges([.label: .string(key.label)], data: secret))
        }
    }

    /// Erases every matching item (path and username only when given); with a password, only items holding
    /// that password — git's `credential-store` and osxkeychain rule, so a reject cannot erase a credential
    /// that another process has just replaced.
    static func erase(_ credential: GitCredential, _ key: GitCredentialKey, _ open: () throws(SecureStoreError) -> any SecureStore) throws(CredentialHelperError) {
        guard let store = try existingStore(open) else { return }   // no store yet: nothing to erase
        let query = ItemQuery(.internetPassword, key.queryAttributes, limit: .all,
                              returning: credential.password == nil ? [.persistentRef] : [.persistentRef, .data])
        let items = try storeCall { () throws(SecureStoreError) in try store.items(matching: query) }
        for item in items {
            guard let ref = item.persistentRef else { continue }
            if let password = credential.password, StoredSecret(item.data ?? Data())?.password != [UInt8](password) { continue }
            let deleted = Result { () throws(SecureStoreError) in try store.delete(.item(ref)) }
            if case .failure(let e) = deleted, e.code != .itemNotFound { throw CredentialHelperError(e) }
        }
    }
}

/// The secret of a git item: the password line, then optional `key=value` lines (osxkeychain's layout).
struct StoredSecret {
    var password: [UInt8]
    var expiry: [UInt8]?
    var refreshToken: [UInt8]?

    init(password: Data, expiry: String?, refreshToken: Data?) {
        self.password = [UInt8](password)
        self.expiry = expiry.map { [UInt8]($0.utf8) }
        self.refreshToken = refreshToken.map { [UInt8]($0) }
    }

    /// Splits stored bytes: the first line is the password; later lines must be the two known keys. Nil when
    /// another line follows (a multi-line secret stored by other means): its first line is not the password.
    init?(_ data: Data) {
        let bytes = [UInt8](data)
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        password = lines.first.map(Array.init) ?? []
        for line in lines.dropFirst() {
            guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            let value = Array(line[(eq + 1)...])
            switch String(decoding: line[line.startIndex..<eq], as: UTF8.self) {
            case "password_expiry_utc": expiry = value
            case "oauth_refresh_token": refreshToken = value
            default: return nil
            }
        }
    }

    var data: Data {
        var out = Data(password)
        if let expiry { out.append(contentsOf: Array("\npassword_expiry_utc=".utf8) + expiry) }
        if let refreshToken { out.append(contentsOf: Array("\noauth_refresh_token=".utf8) + refreshToken) }
        return out
    }
}
