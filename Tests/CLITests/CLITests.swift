import Foundation
import Testing
import TestSupport

/// Runs the built `securestore` tool as a subprocess, as a user would.
struct Tool {
    let environment: [String: String]

    static func path() throws -> String {
        guard let path = builtExecutablePath("securestore") else {
            throw ToolError(message: "the securestore tool is not built; run `swift build --build-tests` first")
        }
        return path
    }

    struct ToolError: Error, CustomStringConvertible { let message: String; var description: String { message } }

    struct Outcome {
        let status: Int32
        let stdout: Data
        let stderr: String
    }

    /// A fresh SQLite store in a temporary folder, selected by a config file.
    static func sqlite() throws -> Tool {
        try configured { dir in #"{"backend": "sqlite", "sqlite": {"path": "\#(dir)/store.db", "keyFile": "\#(dir)/store.key"}}"# }
    }

    /// A tool whose store is selected by a config file in a fresh temporary folder; `json` gets the folder.
    static func configured(_ json: (String) -> String) throws -> Tool {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let config = dir.appendingPathComponent("config.json").path
        try Data(json(dir.path).utf8).write(to: URL(fileURLWithPath: config))
        var env = ProcessInfo.processInfo.environment
        env["SECURESTORE_CONFIG"] = config
        env["SECURESTORE_BACKEND"] = nil
        return Tool(environment: env)
    }

    func run(_ args: [String], stdin: Data = Data()) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Tool.path())
        process.arguments = args
        process.environment = environment
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        feed(stdin, to: input)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }

    var databasePath: String? {
        guard let config = environment["SECURESTORE_CONFIG"] else { return nil }
        return URL(fileURLWithPath: config).deletingLastPathComponent().appendingPathComponent("store.db").path
    }
}

@Suite("securestore CLI")
struct CLITests {
    @Test("add then get round-trips binary data exactly; find --json parses; never a secret in find")
    func roundTrip() throws {
        let tool = try Tool.sqlite()
        let secret = Data((0...255).map { UInt8($0) } + [10, 0, 10])
        #expect(try tool.run(["add", "--service", "svc", "--account", "alice", "--label", "Mail"], stdin: secret).status == 0)
        let got = try tool.run(["get", "--service", "svc", "--account", "alice"])
        #expect(got.status == 0)
        #expect(got.stdout == secret, "byte for byte, no added newline")
        #expect(try tool.run(["add", "--class", "internet", "--server", "example.com", "--port", "443", "--account", "bob"],
                             stdin: Data("pw".utf8)).status == 0)
        let found = try tool.run(["find", "--json"])
        #expect(found.status == 0)
        let array = try JSONSerialization.jsonObject(with: found.stdout) as? [[String: Any]]
        #expect(array?.count == 2)
        #expect(array?.first?["service"] as? String == "svc")
        #expect(array?.last?["port"] as? Int == 443)
        let plain = try tool.run(["find", "--service", "svc"])
        #expect(String(decoding: plain.stdout, as: UTF8.self).contains("account=\"alice\""))
        #expect(!plain.stdout.contains(secret.prefix(40)))
        // --update-existing replaces instead of failing.
        #expect(try tool.run(["add", "--service", "svc", "--account", "alice", "--update-existing"], stdin: Data("v2".utf8)).status == 0)
        #expect(try tool.run(["get", "--service", "svc", "--account", "alice"]).stdout == Data("v2".utf8))
        let updated = try tool.run(["update", "--service", "svc", "--set-label", "Renamed"])
        #expect(String(decoding: updated.stdout, as: UTF8.self).contains("updated 1 item"))
        let deleted = try tool.run(["delete", "--class", "internet", "--server", "example.com"])
        #expect(String(decoding: deleted.stdout, as: UTF8.self).contains("deleted 1 item"))
        #expect(try tool.run(["clear"]).status == 2, "clear refuses without --yes")
        #expect(String(decoding: try tool.run(["clear", "--yes"]).stdout, as: UTF8.self).contains("cleared 1 item"))
    }

    @Test("every exit code comes from a real situation")
    func exitCodes() throws {
        let tool = try Tool.sqlite()
        #expect(try tool.run(["add", "--service", "s", "--account", "a"], stdin: Data("x".utf8)).status == 0)
        let notFound = try tool.run(["get", "--service", "nope"])
        #expect(notFound.status == 1)
        #expect(notFound.stderr.contains("No item matches"))
        #expect(try tool.run(["frobnicate"]).status == 2)
        #expect(try tool.run(["add", "--attr", "port=80"]).status == 2, "generic passwords have no port")
        #expect(try tool.run(["add", "--class", "wizard"]).status == 2)
        let dup = try tool.run(["add", "--service", "s", "--account", "a"], stdin: Data("y".utf8))
        #expect(dup.status == 3)
        #expect(dup.stderr.contains("already exists") && !dup.stderr.contains("y\n"))
        // Wrong key: another key file for the same database.
        var wrongKey = tool.environment
        let dir = URL(fileURLWithPath: tool.databasePath ?? "/").deletingLastPathComponent()
        let other = dir.appendingPathComponent("other.json").path
        try Data(#"{"sqlite": {"path": "\#(dir.path)/store.db", "keyFile": "\#(dir.path)/other.key"}}"#.utf8)
            .write(to: URL(fileURLWithPath: other))
        wrongKey["SECURESTORE_CONFIG"] = other
        // (an existing store never gets a new key file: the wrong key is a real one)
        FileManager.default.createFile(atPath: dir.path + "/other.key", contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }),
                                       attributes: [.posixPermissions: 0o600])
        #expect(try Tool(environment: wrongKey).run(["find"]).status == 4)
        // Tampered: garbage where the database should be.
        let garbage = dir.appendingPathComponent("garbage.db").path
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: garbage))
        chmod(garbage, 0o600)   // private, so what is tested is the content
        #expect(try tool.run(["--config", other, "--backend", "sqlite", "find"]).status == 4)
        let bad = dir.appendingPathComponent("bad.json").path
        try Data(#"{"sqlite": {"path": "\#(garbage)", "keyFile": "\#(dir.path)/store.key"}}"#.utf8).write(to: URL(fileURLWithPath: bad))
        #expect(try tool.run(["--config", bad, "find"]).status == 5)
        // Unavailable: a passphrase variable that is not set.
        let noPass = dir.appendingPathComponent("nopass.json").path
        try Data(#"{"sqlite": {"path": "\#(dir.path)/p.db", "passphraseEnv": "SECURESTORE_TEST_UNSET_VARIABLE"}}"#.utf8)
            .write(to: URL(fileURLWithPath: noPass))
        let unavailable = try tool.run(["--config", noPass, "find"])
        #expect(unavailable.status == 6)
        #expect(unavailable.stderr.contains("SECURESTORE_TEST_UNSET_VARIABLE"))
        #expect(try tool.run(["--help"]).status == 0)
        for command in ["add", "get", "find", "update", "delete", "clear", "backends"] {
            let help = try tool.run([command, "--help"])
            #expect(help.status == 0 && String(decoding: help.stdout, as: UTF8.self).contains("usage: securestore \(command)"))
        }
        let backends = try tool.run(["backends"])
        #expect(String(decoding: backends.stdout, as: UTF8.self).contains("selected: sqlite"))
        // Each backend's declared guarantees, one line under it.
        let listing = String(decoding: backends.stdout, as: UTF8.self)
        #expect(listing.contains("guarantees: atomic writes, processes: full, machines: not shared, durable on return"))
        #expect(listing.contains("guarantees: best-effort rollback, processes: writers serialized"))
        #expect(listing.contains("guarantees: atomic writes, processes: full, machines: full"))
    }
}

@Suite("securestore CLI transfers")
struct CLITransferTests {
    func findJSON(_ tool: Tool, _ extra: [String] = []) throws -> [[String: String]] {
        let out = try tool.run(extra + ["find", "--json"])
        let array = try JSONSerialization.jsonObject(with: out.stdout) as? [[String: Any]] ?? []
        return array.map { $0.mapValues { "\($0)" } }
    }

    @Test("export then import keeps every item and attribute; a wrong passphrase is refused")
    func exportImport() throws {
        var source = try Tool.sqlite()
        source = Tool(environment: source.environment.merging(["SECURESTORE_EXPORT_PASSPHRASE": "export pass"]) { _, b in b })
        for i in 0..<5 {
            #expect(try source.run(["add", "--service", "zq-service-marker", "--account", "a\(i)", "--label", "L\(i)", "--attr", "comment=c\(i)"],
                                   stdin: Data("secret-\(i)".utf8)).status == 0)
        }
        #expect(try source.run(["add", "--class", "key", "--attr", "applicationTag=base64:AAEC"], stdin: Data([1, 2])).status == 0)
        let before = try findJSON(source)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).ssx").path
        #expect(try source.run(["export", "--output", file]).status == 0)
        #expect(try source.run(["export", "--output", file]).status == 2, "never overwrites")
        var target = try Tool.sqlite()
        var wrong = target.environment
        wrong["SECURESTORE_EXPORT_PASSPHRASE"] = "not it"
        #expect(try Tool(environment: wrong).run(["import", "--input", file]).status == 4)
        target = Tool(environment: target.environment.merging(["SECURESTORE_EXPORT_PASSPHRASE": "export pass"]) { _, b in b })
        #expect(try target.run(["import", "--input", file]).status == 0)
        #expect(try findJSON(target) == before)
        #expect(try target.run(["get", "--service", "zq-service-marker", "--account", "a3"]).stdout == Data("secret-3".utf8))
        // The same file again (an import that was interrupted, run again): every item is recognised, nothing changes.
        let again = try target.run(["import", "--input", file])
        let said = String(decoding: again.stdout, as: UTF8.self) + again.stderr
        #expect(again.status == 0 && said.contains("were already there"), "\(said)")
        #expect(try findJSON(target) == before)
        // Another item with a taken key (the same account, another secret) clashes: all or nothing.
        #expect(try target.run(["update", "--service", "zq-service-marker", "--account", "a3", "--data-stdin"],
                               stdin: Data("changed".utf8)).status == 0)
        let changed = try findJSON(target)
        #expect(try target.run(["import", "--input", file]).status == 3, "a clash with an item that differs")
        #expect(try findJSON(target) == changed)
        let raw = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(raw.range(of: Data("secret-3".utf8)) == nil && raw.range(of: Data("zq-service-marker".utf8)) == nil, "the export file is encrypted")
    }

    @Test("migrate copies and verifies every item, leaves the source unchanged, and a failed migrate leaves the target as it was")
    func migrate() throws {
        let source = try Tool.sqlite()
        for i in 0..<4 { #expect(try source.run(["add", "--service", "m", "--account", "a\(i)"], stdin: Data("s\(i)".utf8)).status == 0) }
        let before = try findJSON(source)
        let target = try Tool.sqlite()
        let targetConfig = target.environment["SECURESTORE_CONFIG"] ?? ""
        let migrated = try source.run(["migrate", "--to", targetConfig])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(try findJSON(target) == before)
        #expect(try findJSON(source) == before)
        // Again with one more item (a migrate that was interrupted, run again): the copies already there are
        // recognised, the new item is added.
        #expect(try source.run(["add", "--service", "m", "--account", "new"], stdin: Data("n".utf8)).status == 0)
        let all = try findJSON(source)
        let resumed = try source.run(["migrate", "--to", targetConfig])
        #expect(resumed.status == 0 && resumed.stderr.contains("were already in the target"), "\(resumed.stderr)")
        #expect(try findJSON(target) == all)
        // A source item that differs from its copy (another secret) clashes; the target must not change.
        #expect(try source.run(["update", "--service", "m", "--account", "a0", "--data-stdin"], stdin: Data("other".utf8)).status == 0)
        #expect(try source.run(["migrate", "--to", targetConfig]).status == 3)
        #expect(try findJSON(target) == all)
    }

    @Test("rekey rotates the SQLite key; the old key then fails")
    func rekey() throws {
        let tool = try Tool.sqlite()
        #expect(try tool.run(["add", "--service", "r"], stdin: Data("x".utf8)).status == 0)
        let dir = URL(fileURLWithPath: tool.databasePath ?? "/").deletingLastPathComponent()
        let newKey = dir.appendingPathComponent("new.key").path
        #expect(try tool.run(["rekey", "--new-key-file", newKey]).status == 0)
        #expect(try tool.run(["get", "--service", "r"]).status == 4, "the old key no longer opens the store")
        let config = dir.appendingPathComponent("new.json").path
        try Data(#"{"sqlite": {"path": "\#(dir.path)/store.db", "keyFile": "\#(newKey)"}}"#.utf8).write(to: URL(fileURLWithPath: config))
        #expect(try tool.run(["--config", config, "get", "--service", "r"]).stdout == Data("x".utf8))
    }
}

extension Tool {
    /// A fresh namespace in the session bus's Secret Service (run under scripts/with-keyring.sh).
    static func secretService() throws -> Tool {
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil else {
            throw ToolError(message: "no D-Bus session bus: run the tests under scripts/with-keyring.sh (scripts/test.sh does)")
        }
        return try configured { _ in
            #"{"backend": "secret-service", "secretService": {"namespace": "cli-\#(UUID().uuidString)", "accessGroups": ["securestore"]}}"#
        }
    }
}

@Suite("securestore CLI on the Secret Service", .requires(.secretService))
struct CLISecretServiceTests {
    @Test("add then get round-trips binary data; find --json parses; not found and duplicate exit codes")
    func roundTrip() throws {
        let tool = try Tool.secretService()
        let secret = Data((0...255).map { UInt8($0) })
        #expect(try tool.run(["add", "--service", "svc", "--account", "alice"], stdin: secret).status == 0)
        #expect(try tool.run(["get", "--service", "svc", "--account", "alice"]).stdout == secret)
        let found = try JSONSerialization.jsonObject(with: try tool.run(["find", "--json"]).stdout) as? [[String: Any]]
        #expect(found?.first?["account"] as? String == "alice")
        #expect(try tool.run(["add", "--service", "svc", "--account", "alice"], stdin: Data("x".utf8)).status == 3)
        #expect(try tool.run(["get", "--service", "nope"]).status == 1)
        #expect(try tool.run(["clear", "--yes"]).status == 0)
    }

    @Test("migrate SQLite → Secret Service → SQLite keeps every item and attribute")
    func migrateRoundTrip() throws {
        let sqlite = try Tool.sqlite()
        for i in 0..<4 {
            #expect(try sqlite.run(["add", "--service", "mig", "--account", "a\(i)", "--label", "L\(i)", "--attr", "comment=c\(i)"],
                                   stdin: Data("s\(i)".utf8)).status == 0)
        }
        #expect(try sqlite.run(["add", "--class", "internet", "--server", "example.com", "--port", "8443", "--account", "b"],
                               stdin: Data([0, 1, 2])).status == 0)
        let before = try CLITransferTests().findJSON(sqlite)
        let keyring = try Tool.secretService()
        let toKeyring = try sqlite.run(["migrate", "--to", keyring.environment["SECURESTORE_CONFIG"] ?? ""])
        #expect(toKeyring.status == 0, "\(toKeyring.stderr)")
        #expect(try CLITransferTests().findJSON(keyring) == before)
        let back = try Tool.sqlite()
        let toSQLite = try keyring.run(["migrate", "--to", back.environment["SECURESTORE_CONFIG"] ?? ""])
        #expect(toSQLite.status == 0, "\(toSQLite.stderr)")
        #expect(try CLITransferTests().findJSON(back) == before)
        #expect(try back.run(["get", "--class", "internet", "--server", "example.com"]).stdout == Data([0, 1, 2]))
        #expect(try keyring.run(["clear", "--yes"]).status == 0)
    }
}

@Suite("securestore CLI: exit 70")
struct CLIBusyTests {
    @Test("a write lock held past the busy timeout by another program gives exit 70 (I/O), and the store works after")
    func busy() throws {
        let tool = try Tool.sqlite()
        #expect(try tool.run(["add", "--service", "busy"], stdin: Data("x".utf8)).status == 0)
        guard let db = tool.databasePath else { throw Tool.ToolError(message: "no database path") }
        // Another program holds the write lock for longer than the store's busy timeout (10 s).
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        // It waits for the lock (`.timeout`) rather than fail on a probe's instant hold; the test goes on once the
        // lock is seen held (a probe's BEGIN IMMEDIATE fails), not after a guessed sleep; bounded at 60 s.
        holder.arguments = ["-c", "(echo '.timeout 60000'; echo 'BEGIN IMMEDIATE;'; echo 'CREATE TABLE IF NOT EXISTS lockholder(x);'; sleep 13; echo 'ROLLBACK;') | sqlite3 '\(db)'"]
        try holder.run()
        let probe = "n=0; until ! sqlite3 '\(db)' 'BEGIN IMMEDIATE; ROLLBACK;' 2>/dev/null || [ $n -ge 1200 ]; do sleep 0.05; n=$((n+1)); done"
        let probing = spawn("/bin/sh", ["-c", probe], environment: ProcessInfo.processInfo.environment, stdout: nil)
        #expect(probing.map { reap($0, timeout: .seconds(90)) } == 0)
        let blocked = try tool.run(["add", "--service", "busy2"], stdin: Data("y".utf8))
        #expect(blocked.status == 70, "\(blocked.stderr)")
        #expect(blocked.stderr.contains("busy"))
        holder.waitUntilExit()
        #expect(try tool.run(["add", "--service", "busy2"], stdin: Data("y".utf8)).status == 0)
    }
}

@Suite("securestore CLI on the memory backend")
struct CLIMemoryTests {
    @Test("the memory backend works within one invocation and keeps nothing after it, as documented")
    func ephemeral() throws {
        var env = ProcessInfo.processInfo.environment
        env["SECURESTORE_BACKEND"] = "memory"
        env["SECURESTORE_CONFIG"] = nil
        let tool = Tool(environment: env)
        #expect(try tool.run(["add", "--service", "m"], stdin: Data([0, 255])).status == 0)
        #expect(try tool.run(["get", "--service", "m"]).status == 1, "a new process starts with an empty memory store")
        let backends = String(decoding: try tool.run(["backends"]).stdout, as: UTF8.self)
        #expect(backends.contains("selected: memory, chosen by the environment variable SECURESTORE_BACKEND"))
    }
}
