import Foundation
import Testing
import SecureStoreConformance
import SecureStoreCore
import SecureStoreInMemory
@testable import SecureStoreCredentials

/// One in-memory store shared by the helper runs of a test, as one store file is shared by processes.
final class Harness: @unchecked Sendable {
    let store: InMemoryStore
    var opened = 0

    init() throws { store = try InMemoryStore() }

    func git(_ action: String, _ lines: [String], terminator: String = "\n") -> HelperOutcome {
        let input = Data((lines.map { $0 + "\n" }.joined() + terminator).utf8)
        return GitCredentialHelper.run(arguments: [action], input: input) { (_: StoreChoice) throws(SecureStoreError) in
            self.opened += 1
            return self.store
        }
    }

    func docker(_ action: String, _ input: String = "") -> HelperOutcome {
        DockerCredentialHelper.run(arguments: [action], input: Data(input.utf8)) { (_: StoreChoice) throws(SecureStoreError) in
            self.opened += 1
            return self.store
        }
    }

    func items() throws -> [Item] {
        try store.items(matching: ItemQuery(.internetPassword, returning: [.attributes, .data]))
    }
}

extension HelperOutcome {
    var text: String { String(decoding: output, as: UTF8.self) }
}

@Suite("git credential protocol")
struct GitProtocolTests {
    @Test("store then get: osxkeychain's attributes, username filled in, path only when sent")
    func storeGet() throws {
        let h = try Harness()
        #expect(h.git("store", ["protocol=https", "host=example.com", "username=bob", "password=s3cret"]) == HelperOutcome())
        let items = try h.items()
        #expect(items.count == 1)
        let a = items.first?.attributes ?? [:]
        #expect(a[.protocol] == .string("htps"))
        #expect(a[.server] == .string("example.com"))
        #expect(a[.account] == .string("bob"))
        #expect(a[.authenticationType] == .string("dflt"))
        #expect(a[.port] == nil || a[.port] == .number(0))
        #expect(items.first?.data == Data("s3cret".utf8))
        #expect(h.git("get", ["protocol=https", "host=example.com"]).text == "username=bob\npassword=s3cret\n")
        #expect(h.git("get", ["protocol=https", "host=example.com", "username=bob"]).text == "password=s3cret\n")
        #expect(h.git("get", ["protocol=https", "host=example.com", "username=alice"]).output.isEmpty)
        #expect(h.git("get", ["protocol=http", "host=example.com"]).output.isEmpty, "protocols compare exactly")
        #expect(h.git("get", ["protocol=https", "host=example.com:8443"]).output.isEmpty, "a port is part of the host")
        #expect(h.git("get", ["protocol=https", "host=EXAMPLE.com"]).output.isEmpty, "hosts compare exactly")
        #expect(h.git("get", ["protocol=https", "host=example.com", "path=a.git"]).output.isEmpty,
                "a path sent must match; the stored item has none")
        // Stored with a path (credential.useHttpPath): found with that path, and by a get without a path.
        #expect(h.git("store", ["protocol=https", "host=git.test:8443", "path=team/repo.git", "username=carol",
                                "password=pw2"]).status == 0)
        #expect(h.git("get", ["protocol=https", "host=git.test:8443", "path=team/repo.git"]).text == "username=carol\npassword=pw2\n")
        #expect(h.git("get", ["protocol=https", "host=git.test:8443", "path=other.git"]).output.isEmpty)
        #expect(h.git("get", ["protocol=https", "host=git.test:8443"]).text == "username=carol\npassword=pw2\n")
        #expect(h.git("get", ["protocol=https", "host=git.test"]).output.isEmpty)
        let carol = try h.items().first { $0.attributes?[.account] == .string("carol") }?.attributes
        #expect(carol?[.port] == .number(8443))
        #expect(carol?[.path] == .string("team/repo.git"))
        #expect(carol?[.label] == .string("Git: https://git.test:8443/team/repo.git"))
    }

    @Test("store replaces the password of the same key; expiry and refresh token round-trip in the secret")
    func replaceAndOAuth() throws {
        let h = try Harness()
        #expect(h.git("store", ["protocol=https", "host=example.com", "username=bob", "password=old"]).status == 0)
        #expect(h.git("store", ["protocol=https", "host=example.com", "username=bob", "password=new",
                                "password_expiry_utc=2147483640", "oauth_refresh_token=refresh-me"]).status == 0)
        #expect(try h.items().count == 1)
        #expect(h.git("get", ["protocol=https", "host=example.com"]).text
                == "username=bob\npassword=new\npassword_expiry_utc=2147483640\noauth_refresh_token=refresh-me\n")
        #expect(try h.items().first?.attributes?[.comment] == nil, "no secret-bearing attribute: the token is in the secret only")
        // A second account for the same host is another item; get without username returns the first stored.
        #expect(h.git("store", ["protocol=https", "host=example.com", "username=zed", "password=z"]).status == 0)
        #expect(try h.items().count == 2)
        #expect(h.git("get", ["protocol=https", "host=example.com", "username=zed"]).text == "password=z\n")
    }

    @Test("erase: matching items; with a password only items holding it; path and username narrow it")
    func erase() throws {
        let h = try Harness()
        for (user, pw, path) in [("bob", "b1", nil), ("alice", "a1", nil), ("bob", "b2", "x.git")] as [(String, String, String?)] {
            var lines = ["protocol=https", "host=example.com", "username=\(user)", "password=\(pw)"]
            if let path { lines.append("path=\(path)") }
            #expect(h.git("store", lines).status == 0)
        }
        #expect(h.git("store", ["protocol=https", "host=other.com", "username=bob", "password=b1"]).status == 0)
        #expect(try h.items().count == 4)
        // A rejected password that is not the stored one erases nothing (another process may have replaced it).
        #expect(h.git("erase", ["protocol=https", "host=example.com", "username=bob", "password=wrong"]) == HelperOutcome())
        #expect(try h.items().count == 4)
        #expect(h.git("erase", ["protocol=https", "host=example.com", "username=bob", "password=b1"]) == HelperOutcome())
        #expect(try h.items().count == 3)
        #expect(h.git("get", ["protocol=https", "host=example.com", "username=bob"]).text == "password=b2\n",
                "the item with a path is still there")
        #expect(h.git("erase", ["protocol=https", "host=example.com"]).status == 0)
        let left = try h.items()
        #expect(left.count == 1 && left.first?.attributes?[.server] == .string("other.com"))
        #expect(h.git("erase", ["protocol=https", "host=nothing.test"]) == HelperOutcome(), "nothing to erase is not an error")
        #expect(h.git("erase", ["username=bob"]) == HelperOutcome(), "no protocol and host: nothing is erased")
        #expect(try h.items().count == 1)
    }

    @Test("the protocol's edges: blank line or EOF ends input, unknown keys and wwwauth[] ignored, unknown actions silent")
    func edges() throws {
        let h = try Harness()
        #expect(h.git("store", ["protocol=https", "host=example.com", "username=bob", "password=pw",
                                "wwwauth[]=Basic realm=\"x\"", "wwwauth[]=Bearer", "future_key=whatever", "url=ignored"],
                      terminator: "").status == 0, "EOF without a blank line ends the credential")
        // After the blank line nothing is read.
        #expect(h.git("get", ["protocol=https", "host=example.com", "", "host=evil.test"]).text == "username=bob\npassword=pw\n")
        #expect(h.git("list", ["protocol=https"]) == HelperOutcome())
        #expect(h.git("frobnicate", []) == HelperOutcome())
        // Unsupported protocols (as in osxkeychain) pass silently, without opening the store.
        let before = h.opened
        #expect(h.git("store", ["protocol=cert", "host=", "path=/etc/cert.p12", "username=u", "password=p"]) == HelperOutcome())
        #expect(h.git("get", ["protocol=cert", "path=/etc/cert.p12"]) == HelperOutcome())
        #expect(h.git("store", ["protocol=https", "host=example.com", "password=no-user"]) == HelperOutcome(),
                "an incomplete credential is not stored")
        #expect(h.opened == before)
        #expect(try h.items().count == 1)
        // capability[]=state: the answer carries a state that makes the following store a no-op.
        let got = h.git("get", ["capability[]=state", "protocol=https", "host=example.com"])
        #expect(got.text == "username=bob\npassword=pw\ncapability[]=state\nstate[]=securestore:seen=1\n")
        #expect(h.git("store", ["protocol=https", "host=example.com", "username=bob", "password=changed",
                                "state[]=securestore:seen=1"]).status == 0)
        #expect(h.git("get", ["protocol=https", "host=example.com"]).text == "username=bob\npassword=pw\n")
        // IPv6 hosts.
        #expect(h.git("store", ["protocol=http", "host=[::1]:8080", "username=v6", "password=p6"]).status == 0)
        #expect(h.git("get", ["protocol=http", "host=[::1]:8080"]).text == "username=v6\npassword=p6\n")
        #expect(try h.items().contains { $0.attributes?[.server] == .string("::1") && $0.attributes?[.port] == .number(8080) })
    }

    @Test("bad input: a clear error, no secret in it, nothing changed", arguments: [
        (["protocol=https", "host=example.com", "username=bob", "password=topsecret", "garbage-line-topsecret"], "line 5 is not key=value"),
        (["protocol=https", "host=example.com", "host=evil.com", "username=bob", "password=topsecret"], "host is given twice"),
        (["protocol=https", "host=example.com:99999", "username=bob", "password=topsecret"], "port in host"),
        (["protocol=https", "host=example.com:8a", "username=bob", "password=topsecret"], "port in host"),
        (["protocol=https", "host=::1:80", "username=bob", "password=topsecret"], "several colons"),
        (["protocol=https", "host=example.com", "username=bob", "password=topsecret", "password_expiry_utc=soon"], "password_expiry_utc"),
        (["protocol=https", "host=example.com", "username=bob", "password=top\u{0}secret"], "NUL"),
    ])
    func badInput(lines: [String], expected: String) throws {
        let h = try Harness()
        #expect(h.git("store", ["protocol=https", "host=example.com", "username=bob", "password=keep"]).status == 0)
        for action in ["store", "get", "erase"] {
            let outcome = h.git(action, lines)
            #expect(outcome.status == 1)
            #expect(outcome.output.isEmpty)
            #expect(outcome.diagnostic?.contains(expected) == true, "\(outcome.diagnostic ?? "nil")")
            #expect(outcome.diagnostic?.contains("topsecret") == false)
            #expect(outcome.diagnostic?.contains("secret") == false)
        }
        #expect(h.git("get", ["protocol=https", "host=example.com"]).text == "username=bob\npassword=keep\n")
        let notUTF8 = GitCredentialHelper.run(arguments: ["store"], input: Data([0x68, 0x6f, 0x73, 0x74, 0x3d, 0xff, 0x0a])) {
            (_: StoreChoice) throws(SecureStoreError) in h.store
        }
        #expect(notUTF8.status == 1 && notUTF8.diagnostic?.contains("not UTF-8") == true)
    }

    @Test("arguments: options before the action, usage without one; a store that cannot open is an error")
    func arguments() throws {
        #expect(try GitCredentialHelper.parseArguments(["--config", "/c.json", "--backend", "sqlite", "get"]).0
                == StoreChoice(configFile: "/c.json", backend: "sqlite"))
        let noAction = GitCredentialHelper.run(arguments: [], input: Data()) { (_: StoreChoice) throws(SecureStoreError) in
            throw SecureStoreError(.notAvailable, "unused")
        }
        #expect(noAction.status == 1 && noAction.diagnostic?.hasPrefix("usage:") == true)
        #expect(GitCredentialHelper.run(arguments: ["--bogus", "x", "get"], input: Data()) { (_: StoreChoice) throws(SecureStoreError) in
            throw SecureStoreError(.notAvailable, "unused")
        }.status == 1)
        let locked = GitCredentialHelper.run(arguments: ["get"], input: Data("protocol=https\nhost=a.test\n\n".utf8)) {
            (_: StoreChoice) throws(SecureStoreError) in throw SecureStoreError(.interactionNotAllowed, "The keyring is locked.")
        }
        #expect(locked.status == 1 && locked.diagnostic == "The keyring is locked. [interactionNotAllowed -25308]")
    }

    @Test("endsCredential finds a blank line only at a line start")
    func blankLine() {
        #expect(GitCredential.endsCredential(Data("\n".utf8), scanningFrom: 0))
        #expect(GitCredential.endsCredential(Data("a=b\n\n".utf8), scanningFrom: 0))
        #expect(GitCredential.endsCredential(Data("a=b\n\n".utf8), scanningFrom: 4))
        #expect(!GitCredential.endsCredential(Data("a=b\nc=d\n".utf8), scanningFrom: 0))
    }
}

@Suite("docker credential protocol")
struct DockerProtocolTests {
    @Test("store, get, list, erase; URLs normalised as docker-credential-helpers does")
    func roundTrip() throws {
        let h = try Harness()
        let store = h.docker("store", #"{"ServerURL":"https://registry.test:5000/v2","Username":"bob","Secret":"s3<cret>&"}"#)
        #expect(store == HelperOutcome())
        let a = try h.items().first?.attributes ?? [:]
        #expect(a[.protocol] == .string("htps") && a[.server] == .string("registry.test") && a[.port] == .number(5000))
        #expect(a[.path] == .string("/v2") && a[.label] == .string("Docker Credentials") && a[.description] == .string("docker_cli"))
        #expect(a[.comment] == .string("https://registry.test:5000/v2"))
        // The same registry however it is spelt (no scheme means https; query and fragment dropped).
        for spelling in ["https://registry.test:5000/v2", "registry.test:5000/v2", "//registry.test:5000/v2",
                         "HTTPS://registry.test:5000/v2?x=1#frag", "  registry.test:5000/v2\n", "registry.test:5000/%76%32"] {
            let got = h.docker("get", spelling)
            #expect(got.status == 0, "\(spelling)")
            let trimmed = spelling.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(got.text == "{\"ServerURL\":\(JSONText.quoted(trimmed)),\"Username\":\"bob\",\"Secret\":\"s3\\u003ccret\\u003e\\u0026\"}\n")
        }
        for other in ["http://registry.test:5000/v2", "registry.test/v2", "registry.test:5000", "registry.test:5000/v2/"] {
            let got = h.docker("get", other)
            #expect(got.status == 1 && got.text == "credentials not found in native keychain\n", "\(other)")
        }
        #expect(h.docker("store", #"{"ServerURL":"localhost:5001","Username":"ci","Secret":""}"#).status == 0)
        #expect(h.docker("list").text == #"{"https://registry.test:5000/v2":"bob","localhost:5001":"ci"}"# + "\n")
        // A new user name for a registry replaces the old credential.
        #expect(h.docker("store", #"{"serverurl":"localhost:5001","USERNAME":"ci2","secret":"t"}"#).status == 0)
        #expect(h.docker("get", "localhost:5001").text == #"{"ServerURL":"localhost:5001","Username":"ci2","Secret":"t"}"# + "\n")
        #expect(try h.items().count == 2)
        #expect(h.docker("erase", "localhost:5001") == HelperOutcome())
        #expect(h.docker("erase", "localhost:5001").text == "credentials not found in native keychain\n")
        #expect(h.docker("list").text == #"{"https://registry.test:5000/v2":"bob"}"# + "\n")
        #expect(h.docker("version").text.hasPrefix("docker-credential-securestore (SecureStore) "))
    }

    @Test("only docker's items: git's items and other internet passwords are never listed, read or replaced")
    func isolation() throws {
        let h = try Harness()
        #expect(h.git("store", ["protocol=https", "host=registry.test", "username=bob", "password=git-pw"]).status == 0)
        #expect(h.docker("list").text == "{}\n")
        #expect(h.docker("get", "registry.test").text == "credentials not found in native keychain\n")
        #expect(h.docker("store", #"{"ServerURL":"registry.test","Username":"bob","Secret":"docker-pw"}"#).status == 0)
        #expect(h.git("get", ["protocol=https", "host=registry.test"]).text == "username=bob\npassword=git-pw\n")
        #expect(h.docker("get", "registry.test").text.contains("docker-pw"))
        // Someone else's item with docker's key (no authentication type, no label): store refuses to touch it.
        try h.store.add(NewItem(.internetPassword, [.server: "own.test", .protocol: "htps", .account: "me"], data: Data("mine".utf8)))
        let clash = h.docker("store", #"{"ServerURL":"own.test","Username":"me","Secret":"theirs"}"#)
        #expect(clash.status == 1 && clash.text.contains("did not store"))
        let mine = try h.items().first { $0.attributes?[.server] == .string("own.test") }
        #expect(mine?.data == Data("mine".utf8))
    }

    @Test("errors: docker's messages on standard output, exit 1, no secret in them", arguments: [
        ("store", #"{"ServerURL":"","Username":"u","Secret":"topsecret"}"#, "no credentials server URL"),
        ("store", #"{"ServerURL":"r.test","Username":"","Secret":"topsecret"}"#, "no credentials username"),
        ("store", #"{"ServerURL":"ftp://r.test","Username":"u","Secret":"topsecret"}"#, "unsupported scheme: ftp"),
        ("store", #"{"ServerURL":"https://u:topsecret@r.test","Username":"u","Secret":"topsecret"}"#, "must not contain a user name"),
        ("store", #"{"ServerURL":"r.test:99999","Username":"u","Secret":"topsecret"}"#, "invalid port"),
        ("store", #"{"ServerURL":"r.test","Username":"u","Secret":42}"#, "Secret must be a string"),
        ("store", #"{"ServerURL":"r.test","Username":"u","Secret":"topsecret""#, "not valid JSON"),
        ("store", #"["r.test","u","topsecret"]"#, "must be a JSON object"),
        ("get", "", "no credentials server URL"),
        ("get", "https://", "no hostname in URL"),
        ("get", "https://r.test/%zz", "invalid URL escape"),
        ("erase", "r .test", "invalid character in host name"),
    ])
    func errors(action: String, input: String, expected: String) throws {
        let h = try Harness()
        #expect(h.docker("store", #"{"ServerURL":"keep.test","Username":"k","Secret":"kept"}"#).status == 0)
        let outcome = h.docker(action, input)
        #expect(outcome.status == 1)
        #expect(outcome.text.contains(expected), "\(outcome.text)")
        #expect(!outcome.text.contains("topsecret"))
        #expect(try h.items().count == 1)
        #expect(h.docker("get", "keep.test").text.contains("kept"))
    }

    @Test("usage and unknown actions")
    func usage() throws {
        let h = try Harness()
        #expect(DockerCredentialHelper.run(arguments: [], input: Data()) { (_: StoreChoice) throws(SecureStoreError) in h.store }
            .text == "Usage: docker-credential-securestore <store|get|erase|list|version>\n")
        #expect(h.docker("frob").text == "Unknown credential action `frob`\n")
        #expect(h.opened == 0)
    }

    @Test("RegistryURL keeps docker's distinctions and writes URLs back")
    func registryURL() throws {
        #expect(try RegistryURL(parsing: "[::1]:5000/x") == RegistryURL(scheme: "https", hostname: "::1", port: 5000, path: "/x"))
        #expect(try RegistryURL(parsing: "http://h.test") == RegistryURL(scheme: "http", hostname: "h.test", port: 0, path: ""))
        #expect(try RegistryURL(parsing: "https://h.test/").path == "/")
        #expect(RegistryURL(scheme: "https", hostname: "::1", port: 5000, path: "/x").text == "https://[::1]:5000/x")
    }
}


@Suite("credential helpers on random credentials")
struct RandomCredentialTests {
    @Test("git: any password bytes (no newline or NUL), user, host, port and path round-trip exactly; erase removes exactly one")
    func gitRoundTrips() throws {
        var rng = SplitMix64(seed: 0x5EC0_5702E)
        let h = try Harness()
        var stored: [(lines: [String], user: String, password: [UInt8])] = []
        for i in 0..<200 {
            let passwordBytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in
                var b = UInt8.random(in: 1...255, using: &rng)
                while b == 10 { b = UInt8.random(in: 1...255, using: &rng) }
                return b
            }
            let user = "u\(i)-" + String((0..<Int.random(in: 0...12, using: &rng)).map { _ in
                "abcXYZ09 _.@+é😀:=".randomElement(using: &rng) ?? "a" })
            let scheme = ["https", "http", "ftp", "imaps", "smtp"].randomElement(using: &rng) ?? "https"
            var host = ["example.com", "127.0.0.1", "[::1]", "git.internal"].randomElement(using: &rng) ?? "h"
            if Bool.random(using: &rng) { host += ":\(Int.random(in: 1...65535, using: &rng))" }
            var lines = ["protocol=\(scheme)", "host=\(host)"]
            if Bool.random(using: &rng) { lines.append("path=repo\(i % 7)/x y.git") }
            var input = Data((lines + ["username=\(user)"]).map { $0 + "\n" }.joined().utf8)
            input.append(contentsOf: Array("password=".utf8) + passwordBytes + [10, 10])
            let outcome = GitCredentialHelper.run(arguments: ["store"], input: input) { (_: StoreChoice) throws(SecureStoreError) in h.store }
            #expect(outcome == HelperOutcome(), "\(outcome.diagnostic ?? "")")
            stored.append((lines, user, passwordBytes))
        }
        for (lines, user, password) in stored {
            let got = h.git("get", lines + ["username=\(user)"])
            var expected = Array("password=".utf8) + password
            expected.append(10)
            #expect([UInt8](got.output) == expected)
        }
        let before = try h.items().count
        let (lines, user, password) = stored[17]
        var erase = Data((lines + ["username=\(user)"]).map { $0 + "\n" }.joined().utf8)
        erase.append(contentsOf: Array("password=".utf8) + password + [10, 10])
        #expect(GitCredentialHelper.run(arguments: ["erase"], input: erase) { (_: StoreChoice) throws(SecureStoreError) in h.store }.status == 0)
        #expect(try h.items().count == before - 1)
        #expect(h.git("get", lines + ["username=\(user)"]).output.isEmpty)
    }

    @Test("docker: every spelling of one registry finds the same credential; other registries never do")
    func dockerSpellings() throws {
        var rng = SplitMix64(seed: 0xD0C_4E12)
        let h = try Harness()
        for i in 0..<60 {
            let host = ["registry\(i).test", "127.0.0.\(i % 250 + 1)", "[fd00::\(i)]"].randomElement(using: &rng) ?? "r.test"
            let port = Bool.random(using: &rng) ? ":\(Int.random(in: 1...65535, using: &rng))" : ""
            let path = ["", "/v1/", "/v2", "/a b"].randomElement(using: &rng) ?? ""
            let encodedPath = path.replacingOccurrences(of: " ", with: "%20")
            let secret = String((0..<Int.random(in: 0...40, using: &rng)).map { _ in "aZ9\"\\/<>&\u{0001}é😀 ".randomElement(using: &rng) ?? "a" })
            let json = "{\"ServerURL\":\(JSONText.quoted("https://\(host)\(port)\(encodedPath)")),\"Username\":\"u\(i)\",\"Secret\":\(JSONText.quoted(secret))}"
            #expect(h.docker("store", json).status == 0)
            for spelling in ["\(host)\(port)\(encodedPath)", "//\(host)\(port)\(encodedPath)", "HTTPS://\(host)\(port)\(encodedPath)?q=\(i)"] {
                let got = h.docker("get", spelling)
                let object = try JSONSerialization.jsonObject(with: got.output) as? [String: String]
                #expect(object?["Secret"] == secret && object?["Username"] == "u\(i)", "\(spelling): \(got.text)")
            }
            #expect(h.docker("get", "http://\(host)\(port)\(encodedPath)").status == 1)
        }
    }
}
