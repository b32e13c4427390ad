public import Foundation
public import SecureStoreCore
import SecureStoreCLI

/// docker's credential-helper protocol (docker-credential-helpers' `credentials` package) over a
/// ``SecureStore``: `store` reads `{"ServerURL","Username","Secret"}`, `get` and `erase` read a server URL,
/// `list` writes `{"URL": "username", …}`, `version` writes a line. Errors go to standard output with exit
/// status 1, as docker's helpers do: docker's clients read the message there, and a missing credential is
/// exactly ``notFoundMessage``.
///
/// Items are internet passwords keyed as docker-credential-osxkeychain keys them — protocol `htps` (or `http`
/// for an `http://` URL), server, port, path, account — labelled with docker's `CredsLabel`
/// (``label``) and marked with the description ``marker`` (docker-credential-secretservice's `docker_cli`
/// attribute), so `list`, `get` and `erase` only ever see docker's items. The original URL is kept as the
/// comment: `list` gives back the spelling docker stored.
public enum DockerCredentialHelper {
    /// The message docker's clients recognise as "no credential" (`credentials.IsErrCredentialsNotFoundMessage`).
    public static let notFoundMessage = "credentials not found in native keychain"
    /// docker-credential-helpers' `CredsLabel`.
    public static let label = "Docker Credentials"
    /// The description every docker item carries (docker-credential-secretservice marks its items `docker_cli`).
    public static let marker = "docker_cli"
    /// The package's one version (`CLITable.version`, what `securestore --version` and the Debian package say).
    public static var version: String { CLITable.version }
    public static let usage = "Usage: docker-credential-securestore <store|get|erase|list|version>"

    public static func run(arguments: [String], input: Data, open: StoreOpener) -> HelperOutcome {
        do throws(CredentialHelperError) {
            guard arguments.count == 1, let action = arguments.first else { throw CredentialHelperError(usage) }
            let choice = StoreChoice(creatingStore: action == "store")
            let opener: () throws(SecureStoreError) -> any SecureStore = { () throws(SecureStoreError) in try open(choice) }
            switch action {
            case "store": try store(input, opener)
            case "get": return HelperOutcome(output: try get(input, opener))
            case "erase": try erase(input, opener)
            case "list": return HelperOutcome(output: try list(opener))
            case "version": return HelperOutcome(output: Data("docker-credential-securestore (SecureStore) \(version)\n".utf8))
            default: throw CredentialHelperError("Unknown credential action `\(action)`")
            }
            return HelperOutcome()
        } catch {
            return HelperOutcome(output: Data((error.message + "\n").utf8), status: 1)
        }
    }

    /// The attributes that find docker's item(s) for a URL.
    static func query(_ url: RegistryURL) -> [AttributeName: AttributeValue] {
        [
            .server: .string(url.hostname),
            .protocol: .string(url.scheme == "http" ? AppleCode.protocolHTTP : AppleCode.protocolHTTPS),
            .port: .number(Int64(url.port)), .path: .string(url.path),
            .label: .string(label), .description: .string(marker),
        ]
    }

    /// The server URL of `get` and `erase`: all of standard input, surrounding white space trimmed.
    static func serverURL(_ input: Data) throws(CredentialHelperError) -> (String, RegistryURL) {
        guard let text = String(validating: input, as: UTF8.self) else { throw CredentialHelperError("the server URL is not UTF-8") }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw CredentialHelperError("no credentials server URL") }
        return (trimmed, try RegistryURL(parsing: trimmed))
    }

    /// Stores the credential, replacing docker's credential for the same URL (whatever its user name).
    static func store(_ input: Data, _ open: () throws(SecureStoreError) -> any SecureStore) throws(CredentialHelperError) {
        let fields = try JSONText.credentials(input)
        guard let serverURL = fields["ServerURL"] ?? nil, !serverURL.isEmpty else { throw CredentialHelperError("no credentials server URL") }
        guard let username = fields["Username"] ?? nil, !username.isEmpty else { throw CredentialHelperError("no credentials username") }
        let secret = Data(((fields["Secret"] ?? nil) ?? "").utf8)
        let url = try RegistryURL(parsing: serverURL)
        let store = try storeCall(open)
        var attributes = query(url)
        attributes[.account] = .string(username)
        attributes[.comment] = .string(serverURL)
        if url.port == 0 { attributes[.port] = nil }
        if url.path.isEmpty { attributes[.path] = nil }
        let added = Result { () throws(SecureStoreError) in try store.add(NewItem(.internetPassword, attributes, data: secret)) }
        if case .failure(let error) = added {
            guard error.code == .duplicateItem else { throw CredentialHelperError(error) }
            // Ours (label and marker match): replace its secret. Anything else with the same key is not docker's.
            var mine = query(url)
            mine[.account] = .string(username)
            let updated = Result { () throws(SecureStoreError) in
                try store.update(ItemQuery(.internetPassword, mine), with: ItemChanges([.comment: .string(serverURL)], data: secret))
            }
            switch updated {
            case .success: break
            case .failure(let e) where e.code == .itemNotFound:
                throw CredentialHelperError("an internet password for \(url.text) and this user name exists that "
                    + "docker-credential-securestore did not store; nothing was changed (see `securestore find --class internet`).")
            case .failure(let e): throw CredentialHelperError(e)
            }
        }
        // One credential per registry: docker's items for this URL under another user name go, after the new
        // one is safely in (a failure before this point leaves the old credential).
        let items = try storeCall { () throws(SecureStoreError) in
            try store.items(matching: ItemQuery(.internetPassword, query(url), returning: [.attributes, .persistentRef]))
        }
        for item in items where item.attributes?[.account]?.text != username {
            guard let ref = item.persistentRef else { continue }
            let deleted = Result { () throws(SecureStoreError) in try store.delete(.item(ref)) }
            if case .failure(let e) = deleted, e.code != .itemNotFound { throw CredentialHelperError(e) }
        }
    }

    static func get(_ input: Data, _ open: () throws(SecureStoreError) -> any SecureStore) throws(CredentialHelperError) -> Data {
        let (serverURL, url) = try serverURL(input)
        guard let store = try existingStore(open) else { throw CredentialHelperError(notFoundMessage) }
        let found = try storeCall { () throws(SecureStoreError) in
            try store.item(matching: ItemQuery(.internetPassword, query(url), returning: [.attributes, .data]))
        }
        guard let item = found else { throw CredentialHelperError(notFoundMessage) }
        guard let secret = String(validating: item.data ?? Data(), as: UTF8.self) else {
            throw CredentialHelperError("the stored secret for this registry is not UTF-8 text, which docker's protocol cannot carry.")
        }
        let username = item.attributes?[.account]?.text ?? ""
        return Data(("{\"ServerURL\":\(JSONText.quoted(serverURL)),\"Username\":\(JSONText.quoted(username)),"
            + "\"Secret\":\(JSONText.quoted(secret))}\n").utf8)
    }

    static func erase(_ input: Data, _ open: () throws(SecureStoreError) -> any SecureStore) throws(CredentialHelperError) {
        let (_, url) = try serverURL(input)
        guard let store = try existingStore(open) else { throw CredentialHelperError(notFoundMessage) }
        let deleted = Result { () throws(SecureStoreError) in try store.delete(ItemQuery(.internetPassword, query(url))) }
        switch deleted {
        case .success: return
        case .failure(let e) where e.code == .itemNotFound: throw CredentialHelperError(notFoundMessage)
        case .failure(let e): throw CredentialHelperError(e)
        }
    }

    /// Every docker item: its URL as docker stored it (rebuilt from the attributes if the comment is gone)
    /// and its user name.
    static func list(_ open: () throws(SecureStoreError) -> any SecureStore) throws(CredentialHelperError) -> Data {
        guard let store = try existingStore(open) else { return Data("{}\n".utf8) }   // no store yet: no items
        let marked: [AttributeName: AttributeValue] = [.label: .string(label), .description: .string(marker)]
        let items = try storeCall { () throws(SecureStoreError) in
            try store.items(matching: ItemQuery(.internetPassword, marked, returning: .attributes))
        }
        var entries: [String: String] = [:]
        for item in items {
            let a = item.attributes ?? [:]
            let rebuilt = RegistryURL(scheme: a[.protocol]?.text == AppleCode.protocolHTTP ? "http" : "https",
                                      hostname: a[.server]?.text ?? "", port: Int(a[.port]?.integer ?? 0),
                                      path: a[.path]?.text ?? "").text
            let url = a[.comment]?.text.flatMap { $0.isEmpty ? nil : $0 } ?? rebuilt
            entries[url] = a[.account]?.text ?? ""
        }
        let body = entries.keys.sorted().map { "\(JSONText.quoted($0)):\(JSONText.quoted(entries[$0] ?? ""))" }
        return Data(("{" + body.joined(separator: ",") + "}\n").utf8)
    }
}

/// The JSON docker's helpers read and write, with Go's `encoding/json` conventions.
enum JSONText {
    /// A JSON string as Go writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped too.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                out += String(format: "\\u%04x", scalar.value)
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }

    /// The fields of a `Credentials` object. As Go decodes it: names match case-insensitively, unknown names
    /// are ignored, `null` is empty. Stricter: two names for one field, or a value that is not a string, is an
    /// error (no message repeats a value).
    static func credentials(_ input: Data) throws(CredentialHelperError) -> [String: String?] {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: input, options: [])
        } catch {
            throw CredentialHelperError("the credentials are not valid JSON")
        }
        guard let dictionary = object as? [String: Any] else {
            throw CredentialHelperError("the credentials must be a JSON object {\"ServerURL\", \"Username\", \"Secret\"}")
        }
        var fields: [String: String?] = [:]
        for (name, value) in dictionary {
            guard let field = ["ServerURL", "Username", "Secret"].first(where: { $0.lowercased() == name.lowercased() }) else { continue }
            guard fields[field] == nil else { throw CredentialHelperError("the credentials give \(field) twice") }
            switch value {
            case let s as String: fields[field] = .some(s)
            case is NSNull: fields[field] = .some(nil)
            default: throw CredentialHelperError("\(field) must be a string")
            }
        }
        return fields
    }
}
