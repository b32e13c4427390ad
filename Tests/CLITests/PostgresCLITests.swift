import Foundation
import Testing

extension Tool {
    /// A fresh namespace on the server of scripts/with-postgres.sh, selected by a config file (password
    /// through passwordEnv, key in a key file). Fails, saying how to run, when the server is not there.
    static func postgres() throws -> Tool {
        let env = ProcessInfo.processInfo.environment
        guard let url = env["SECURESTORE_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw ToolError(message:
                "SECURESTORE_TEST_POSTGRES_URL is not set: run the tests under scripts/with-postgres.sh (scripts/test.sh does)")
        }
        let namespace = "cli-\(UInt64.random(in: 0...UInt64.max))"
        return try configured { dir in
            #"{"backend": "postgres", "postgres": {"url": "\#(url)", "passwordEnv": "SECURESTORE_TEST_POSTGRES_PASSWORD", "keyFile": "\#(dir)/store.key", "namespace": "\#(namespace)"}}"#
        }
    }
}

@Suite("securestore CLI on PostgreSQL", .requires(.postgres))
struct CLIPostgresTests {
    @Test("add, get, find and exit codes through --backend postgres's config")
    func roundTrip() throws {
        let tool = try Tool.postgres()
        let secret = Data((0...255).map { UInt8($0) })
        let added = try tool.run(["add", "--service", "svc", "--account", "alice"], stdin: secret)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try tool.run(["get", "--service", "svc", "--account", "alice"]).stdout == secret)
        #expect(try tool.run(["add", "--service", "svc", "--account", "alice"], stdin: Data("x".utf8)).status == 3)
        #expect(try tool.run(["get", "--service", "nope"]).status == 1)
        let backends = try tool.run(["backends"])
        #expect(String(decoding: backends.stdout, as: UTF8.self).contains("postgres"), "\(backends.stderr)")
        #expect(try tool.run(["clear", "--yes"]).status == 0)
    }

    @Test("a server that is not there: exit 6 naming the host, quickly")
    func unavailable() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-cli-pgdown-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let config = dir.appendingPathComponent("config.json").path
        let json = #"{"backend": "postgres", "postgres": {"url": "postgresql://nobody@127.0.0.1:1/db", "keyFile": "\#(dir.path)/k"}}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        var env = ProcessInfo.processInfo.environment
        env["SECURESTORE_CONFIG"] = config
        let outcome = try Tool(environment: env).run(["get", "--service", "x"])
        #expect(outcome.status == 6, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("127.0.0.1"), "\(outcome.stderr)")
    }

    @Test("migrate SQLite → PostgreSQL → SQLite keeps every item and attribute")
    func migrateRoundTrip() throws {
        let sqlite = try Tool.sqlite()
        for i in 0..<4 {
            #expect(try sqlite.run(["add", "--service", "mig", "--account", "a\(i)", "--label", "L\(i)", "--attr", "comment=c\(i)"],
                                   stdin: Data("s\(i)".utf8)).status == 0)
        }
        #expect(try sqlite.run(["add", "--class", "internet", "--server", "example.com", "--port", "8443", "--account", "b"],
                               stdin: Data([0, 1, 2])).status == 0)
        #expect(try sqlite.run(["add", "--class", "key", "--attr", "applicationTag=base64:AAEC"], stdin: Data([9, 8])).status == 0)
        let before = try CLITransferTests().findJSON(sqlite)
        #expect(before.count == 6)
        let postgres = try Tool.postgres()
        let toPostgres = try sqlite.run(["migrate", "--to", postgres.environment["SECURESTORE_CONFIG"] ?? ""])
        #expect(toPostgres.status == 0, "\(toPostgres.stderr)")
        #expect(try CLITransferTests().findJSON(postgres) == before)
        let back = try Tool.sqlite()
        let toSQLite = try postgres.run(["migrate", "--to", back.environment["SECURESTORE_CONFIG"] ?? ""])
        #expect(toSQLite.status == 0, "\(toSQLite.stderr)")
        #expect(try CLITransferTests().findJSON(back) == before)
        #expect(try back.run(["get", "--class", "internet", "--server", "example.com"]).stdout == Data([0, 1, 2]))
        #expect(try back.run(["get", "--service", "mig", "--account", "a2"]).stdout == Data("s2".utf8))
    }
}

@Suite("securestore CLI rekey on PostgreSQL", .requires(.postgres))
struct CLIPostgresRekeyTests {
    @Test("rekey --new-key-file: the old key file then gets exit 4, a config with the new one reads every item")
    func rekey() throws {
        let tool = try Tool.postgres()
        for i in 0..<3 {
            #expect(try tool.run(["add", "--service", "rk", "--account", "a\(i)"], stdin: Data("s\(i)".utf8)).status == 0)
        }
        guard let config = tool.environment["SECURESTORE_CONFIG"] else { Issue.record("no config"); return }
        let dir = URL(fileURLWithPath: config).deletingLastPathComponent().path
        let newKey = dir + "/new.key"
        let rekeyed = try tool.run(["rekey", "--new-key-file", newKey])
        #expect(rekeyed.status == 0, "\(rekeyed.stderr)")
        #expect(try tool.run(["get", "--service", "rk", "--account", "a1"]).status == 4)
        let json = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "\(dir)/store.key", with: newKey)
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        #expect(try tool.run(["get", "--service", "rk", "--account", "a1"]).stdout == Data("s1".utf8))
    }
}

@Suite("securestore CLI: PostgreSQL deadlines and pool settings", .requires(.postgres))
struct CLIPostgresSettingsTests {
    @Test("connectTimeout, statementTimeout, lockTimeout and poolSize are read from the config; bad values are exit 2 naming the key")
    func settings() throws {
        guard let url = ProcessInfo.processInfo.environment["SECURESTORE_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw Tool.ToolError(message: "SECURESTORE_TEST_POSTGRES_URL is not set: run the tests under scripts/with-postgres.sh")
        }
        func tool(_ extra: String) throws -> Tool {
            try Tool.configured { dir in
                #"{"backend": "postgres", "postgres": {"url": "\#(url)", "passwordEnv": "SECURESTORE_TEST_POSTGRES_PASSWORD", "keyFile": "\#(dir)/store.key", "namespace": "cli-set-\#(UInt64.random(in: 0...UInt64.max))"\#(extra)}}"#
            }
        }
        let good = try tool(#", "connectTimeout": 3, "statementTimeout": 2.5, "lockTimeout": 0.5, "poolSize": 2"#)
        #expect(try good.run(["add", "--service", "s", "--account", "a"], stdin: Data("x".utf8)).status == 0)
        #expect(try good.run(["get", "--service", "s", "--account", "a"]).stdout == Data("x".utf8))
        for (extra, key) in [(#", "poolSize": 0"#, "poolSize"), (#", "poolSize": 2.5"#, "poolSize"),
                             (#", "statementTimeout": "10""#, "statementTimeout"), (#", "lockTimeout": 0"#, "lockTimeout"),
                             (#", "connectTimeout": 99999"#, "connectTimeout")] {
            let outcome = try tool(extra).run(["find"])
            #expect(outcome.status == 2, "\(extra): \(outcome.stderr)")
            #expect(outcome.stderr.contains(key), "\(extra): \(outcome.stderr)")
        }
    }
}
