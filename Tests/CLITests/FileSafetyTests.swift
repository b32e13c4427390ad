import Foundation
import Testing
import TestSupport
import SecureStorePaths

/// The store files, the configuration and migration between default configurations, as a user meets them
/// through the `securestore` tool. The tests run as root: "another user" is uid 65534 (chown, setpriv).
@Suite("securestore files, config and default migration")
struct FileSafetyCLITests {
    /// A scratch folder with a config file selecting `json` (given the folder).
    struct Scratch {
        let dir: String
        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-files-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            chmod(dir, 0o755)
        }
        func path(_ name: String) -> String { dir + "/" + name }
        func cleanUp() { try? FileManager.default.removeItem(atPath: dir) }

        /// Writes a config file; returns its path.
        func config(_ name: String, _ json: String) throws -> String {
            let file = path(name)
            try Data(json.utf8).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o644)
            return file
        }

        func sqlite(_ name: String = "c.json", db: String = "store.db", key: String = "store.key") throws -> String {
            try config(name, #"{"backend": "sqlite", "sqlite": {"path": "\#(path(db))", "keyFile": "\#(path(key))"}}"#)
        }
    }

    struct Outcome {
        let status: Int32
        let stdout: Data
        let stderr: String
    }

    /// Runs the tool with `--config config` (stdin, stdout and stderr through files: no pipe to inherit).
    static func run(_ config: String?, _ args: [String], stdin: Data = Data(), asUser uid: Int? = nil,
                    environment extra: [String: String] = [:]) throws -> Outcome {
        let tool = try builtExecutable("securestore")
        let io = FileManager.default.temporaryDirectory.appendingPathComponent("ss-io-\(UUID().uuidString)").path
        defer { for s in ["in", "out", "err"] { unlink(io + "." + s) } }
        FileManager.default.createFile(atPath: io + ".in", contents: stdin)
        var env = ProcessInfo.processInfo.environment
        env["SECURESTORE_CONFIG"] = nil
        env["SECURESTORE_BACKEND"] = nil
        for (k, v) in extra { env[k] = v }
        var command = [tool] + (config.map { ["--config", $0] } ?? []) + args
        if let uid { command = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + command }
        func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let shell = command.map(quote).joined(separator: " ")
            + " <\(quote(io + ".in")) >\(quote(io + ".out")) 2>\(quote(io + ".err"))"
        guard let pid = spawn("/bin/sh", ["-c", shell], environment: env, stdout: nil) else {
            throw CocoaError(.executableLoad)
        }
        let status = reap(pid, timeout: .seconds(120))
        return Outcome(status: status, stdout: FileManager.default.contents(atPath: io + ".out") ?? Data(),
                       stderr: String(decoding: FileManager.default.contents(atPath: io + ".err") ?? Data(), as: UTF8.self))
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    static func entries(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    // MARK: Files

    @Test("commands that only read or change items never create a store: on a fresh machine (default paths) and with a configured path, get/find/update/delete say nothing is stored, clear clears 0, export/rekey/unlock fail; no file or folder appears; add then creates it")
    func readCommandsCreateNothing() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let home = ["HOME": s.path("home"), "XDG_DATA_HOME": s.path("home/data"), "XDG_CONFIG_HOME": s.path("home/config"),
                    "SECURESTORE_EXPORT_PASSPHRASE": "export passphrase"]
        let configured = try s.config("c.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("stores/store.db"))", "keyFile": "\#(s.path("keys/store.key"))"}}"#)
        for folder in ["stores", "keys"] {
            try FileManager.default.createDirectory(atPath: s.path(folder), withIntermediateDirectories: false)
        }
        for config in [nil, configured] {
            let which = config == nil ? "default paths" : "configured path"
            let reads: [(args: [String], status: Int32, says: String)] = [
                (["get", "--service", "s", "--account", "a"], 1, "no store"),
                (["find", "--service", "s"], 1, "no store"),
                (["update", "--service", "s", "--account", "a", "--set-label", "x"], 1, "no store"),
                (["delete", "--service", "s", "--account", "a"], 1, "no store"),
                (["clear", "--yes"], 0, ""),
                (["export", "--output", s.path("export.db")], 1, "no store"),
                (["rekey", "--new-key-file", s.path("new.key")], 1, "no store"),
                (["unlock"], 1, "no store"),
            ]
            for read in reads {
                let outcome = try Self.run(config, read.args, environment: home)
                #expect(outcome.status == read.status, "\(which): \(read.args) \(outcome.stderr)")
                if !read.says.isEmpty {
                    #expect(outcome.stderr.contains("There is no store at") && outcome.stderr.contains("itemNotFound"),
                            "\(which): \(read.args) \(outcome.stderr)")
                }
                #expect(!FileManager.default.fileExists(atPath: s.path("home")), "\(which): \(read.args) made the XDG folders")
                #expect(Self.entries(s.path("stores")).isEmpty && Self.entries(s.path("keys")).isEmpty,
                        "\(which): \(read.args) made a store or key")
                #expect(!FileManager.default.fileExists(atPath: s.path("export.db")) && !FileManager.default.fileExists(atPath: s.path("new.key")))
            }
        }
        #expect(try Self.run(configured, ["add", "--service", "s", "--account", "a"], stdin: Data("pw".utf8)).status == 0)
        #expect(Self.entries(s.path("stores")).contains("store.db") && Self.entries(s.path("keys")) == ["store.key"])
        let got = try Self.run(configured, ["get", "--service", "s", "--account", "a"])
        #expect(got.status == 0 && got.stdout == Data("pw".utf8), "\(got.stderr)")
        let missing = try Self.run(configured, ["get", "--service", "s", "--account", "other"])
        #expect(missing.status == 1 && !missing.stderr.contains("There is no store"), "an existing store says no item: \(missing.stderr)")
    }

    @Test("SecItem on the default store: SecItemCopyMatching, SecItemUpdate and SecItemDelete on a fresh machine say errSecItemNotFound and create nothing (default paths and a configured path); the first SecItemAdd creates the store")
    func secItemReadsCreateNothing() throws {
        let probe = try builtExecutable("securestore-secitem-probe")
        let errSecItemNotFoundValue = -25300   // errSecItemNotFound
        let s = try Scratch()
        defer { s.cleanUp() }
        let configured = try s.config("c.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("stores/store.db"))", "keyFile": "\#(s.path("keys/store.key"))"}}"#)
        for folder in ["stores", "keys"] {
            try FileManager.default.createDirectory(atPath: s.path(folder), withIntermediateDirectories: false)
        }
        func probeRun(_ config: String?, _ steps: [String]) -> String {
            var env = ProcessInfo.processInfo.environment
            env["SECURESTORE_BACKEND"] = nil
            env["SECURESTORE_CONFIG"] = config
            (env["HOME"], env["XDG_DATA_HOME"], env["XDG_CONFIG_HOME"]) = (s.path("home"), s.path("home/data"), s.path("home/config"))
            let out = s.path("probe.out")
            guard let pid = spawn(probe, steps, environment: env, stdout: out) else { return "(not started)" }
            let status = reap(pid, timeout: .seconds(60))
            let text = String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self)
            return status == 0 ? text : "(exit \(status)) " + text
        }
        let reads = ["copy:s:a", "update:s:a", "delete:s:a", "copy:s:a"]
        for config in [nil, configured] {
            let which = config == nil ? "default paths" : "configured path"
            let out = probeRun(config, reads)
            #expect(out == reads.map { "\($0) \(errSecItemNotFoundValue)\n" }.joined(), "\(which): \(out)")
            #expect(!FileManager.default.fileExists(atPath: s.path("home")), "\(which): a read made the XDG folders")
            #expect(Self.entries(s.path("stores")).isEmpty && Self.entries(s.path("keys")).isEmpty, "\(which): a read made a store or key")
        }
        // One process: reads before the first add find nothing; the add creates the store, later calls see it.
        let out = probeRun(configured, ["copy:s:a", "delete:s:a", "add:s:a", "copy:s:a", "update:s:a", "copy:s:a"])
        #expect(out == """
            copy:s:a \(errSecItemNotFoundValue)
            delete:s:a \(errSecItemNotFoundValue)
            add:s:a 0
            copy:s:a 0 secret s a
            update:s:a 0
            copy:s:a 0 updated

            """, "\(out)")
        #expect(Self.entries(s.path("stores")).contains("store.db") && Self.entries(s.path("keys")) == ["store.key"])
        #expect(!FileManager.default.fileExists(atPath: s.path("home")), "the configured store only")
        // Another process finds the store the first one made.
        #expect(probeRun(configured, ["copy:s:a"]) == "copy:s:a 0 updated\n")
    }

    @Test("a configured store or key path whose folder does not exist: add says which folder and how to make it (exit 6), and nothing is created anywhere")
    func configuredFolderMissing() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        try FileManager.default.createDirectory(atPath: s.path("there"), withIntermediateDirectories: false)
        let cases: [(db: String, key: String, missing: String)] = [
            (s.path("nowhere/store.db"), s.path("there/store.key"), s.path("nowhere")),
            (s.path("there/store.db"), s.path("no/such/store.key"), s.path("no/such")),
            (s.path("there/store.db"), s.path("there/file/store.key"), s.path("there/file")),
        ]
        FileManager.default.createFile(atPath: s.path("there/file"), contents: Data("not a folder".utf8))
        for (i, c) in cases.enumerated() {
            let config = try s.config("c\(i).json", #"{"backend": "sqlite", "sqlite": {"path": "\#(c.db)", "keyFile": "\#(c.key)"}}"#)
            let add = try Self.run(config, ["add", "--service", "s", "--account", "a"], stdin: Data("pw".utf8))
            #expect(add.status == 6, "\(c): \(add.stderr)")
            #expect(add.stderr.contains("the folder \(c.missing) does not exist") && add.stderr.contains("mkdir -p -m 700 \(c.missing)"),
                    "\(c): \(add.stderr)")
            #expect(Self.entries(s.path("there")) == ["file"], "\(c): nothing left behind")
            #expect(!FileManager.default.fileExists(atPath: s.path("nowhere")) && !FileManager.default.fileExists(atPath: s.path("no")))
        }
    }

    @Test("8 processes adding at once to a store that does not exist yet (with its key file): every add lands in one store under one key, 3 rounds; nothing temporary is left")
    func racingFirstAdds() throws {
        let tool = try builtExecutable("securestore")
        let s = try Scratch()
        defer { s.cleanUp() }
        var env = ProcessInfo.processInfo.environment
        (env["SECURESTORE_CONFIG"], env["SECURESTORE_BACKEND"]) = (nil, nil)
        for round in 0..<3 {
            let folder = s.path("r\(round)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            let config = try s.config("r\(round).json", #"{"backend": "sqlite", "sqlite": {"path": "\#(folder)/store.db", "keyFile": "\#(folder)/store.key"}}"#)
            let pids = (0..<8).compactMap { i in
                spawn("/bin/sh", ["-c", "printf 'pw \(i)' | '\(tool)' --config '\(config)' add --service s --account a\(i) 2>'\(folder).err\(i)'"],
                      environment: env, stdout: nil)
            }
            #expect(pids.count == 8)
            let statuses = pids.map { reap($0, timeout: .seconds(120)) }
            let errors = (0..<8).map { String(decoding: FileManager.default.contents(atPath: "\(folder).err\($0)") ?? Data(), as: UTF8.self) }
            #expect(statuses == Array(repeating: 0, count: 8), "round \(round): \(statuses) \(errors.filter { !$0.isEmpty })")
            for i in 0..<8 {
                let got = try Self.run(config, ["get", "--service", "s", "--account", "a\(i)"])
                #expect(got.status == 0 && got.stdout == Data("pw \(i)".utf8), "round \(round), a\(i): \(got.stderr)")
            }
            #expect(Self.entries(folder).filter { !$0.hasPrefix("store.db-") } == ["store.db", "store.key"], "round \(round): \(Self.entries(folder))")
            #expect(FileManager.default.contents(atPath: folder + "/store.key")?.count == 32 && Self.mode(folder + "/store.key") == 0o600)
        }
    }

    @Test("a store path that is a symbolic link to an empty 0644 file: refused with chmod 600; nothing written, the file stays 0644")
    func symlinkToOpenFile() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        #expect(FileManager.default.createFile(atPath: s.path("target"), contents: Data(), attributes: [.posixPermissions: 0o644]))
        symlink(s.path("target"), s.path("store.db"))
        let config = try s.sqlite()
        let add = try Self.run(config, ["add", "--service", "s", "--account", "a"], stdin: Data("pw".utf8))
        #expect(add.status == 4, "\(add.stderr)")
        #expect(add.stderr.contains("chmod 600"), "\(add.stderr)")
        #expect(FileManager.default.contents(atPath: s.path("target")) == Data())
        #expect(Self.mode(s.path("target")) == 0o644)
        #expect(!Self.entries(s.dir).contains { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") })
    }

    @Test("an empty 0666 file planted at the store path by another user: refused, naming chown; it stays empty and 0666 with no -wal or -shm")
    func plantedFile() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        #expect(FileManager.default.createFile(atPath: s.path("store.db"), contents: Data()))
        chmod(s.path("store.db"), 0o666)
        chown(s.path("store.db"), 65534, 65534)
        let add = try Self.run(try s.sqlite(), ["add", "--service", "s", "--account", "a"], stdin: Data("pw".utf8))
        #expect(add.status == 4, "\(add.stderr)")
        #expect(add.stderr.contains("another user") && add.stderr.contains("chown"), "\(add.stderr)")
        #expect(FileManager.default.contents(atPath: s.path("store.db")) == Data())
        #expect(Self.mode(s.path("store.db")) == 0o666)
        #expect(Self.entries(s.dir) == ["c.json", "store.db"])
    }

    @Test("a store truncated to 0 bytes: get and add fail saying so (exit 5), and no new store is started")
    func truncatedStore() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let config = try s.sqlite()
        #expect(try Self.run(config, ["add", "--service", "s", "--account", "a"], stdin: Data("pw".utf8)).status == 0)
        truncate(s.path("store.db"), 0)
        for args in [["get", "--service", "s", "--account", "a"], ["add", "--service", "t", "--account", "b"]] {
            let out = try Self.run(config, args, stdin: Data("x".utf8))
            #expect(out.status == 5, "\(args[0]): \(out.stderr)")
            #expect(out.stderr.contains("empty (0 bytes)") && out.stderr.contains("truncated"), "\(out.stderr)")
        }
        var info = stat()
        #expect(stat(s.path("store.db"), &info) == 0 && info.st_size == 0, "still empty: nothing was started in it")
    }

    @Test("an existing store whose key file is missing: a clear error (exit 6), no new key file")
    func missingKeyFile() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let config = try s.sqlite()
        #expect(try Self.run(config, ["add", "--service", "s", "--account", "a"], stdin: Data("pw".utf8)).status == 0)
        unlink(s.path("store.key"))
        let get = try Self.run(config, ["get", "--service", "s", "--account", "a"])
        #expect(get.status == 6, "\(get.stderr)")
        #expect(get.stderr.contains("missing") && get.stderr.contains("Restore the key file"), "\(get.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.path("store.key")))
    }

    @Test("a key path that is a folder is reported as a folder, not as readable by other users")
    func keyFolder() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        try FileManager.default.createDirectory(atPath: s.path("keydir"), withIntermediateDirectories: false)
        let out = try Self.run(try s.sqlite(key: "keydir"), ["find"])
        #expect(out.status != 0)
        #expect(out.stderr.contains("is a folder"), "\(out.stderr)")
        #expect(!out.stderr.contains("readable"), "\(out.stderr)")
    }

    @Test("a store in a folder its owner cannot write to (0500): get works, add says it is read-only (as uid 65534)")
    func readOnlyFolder() throws {
        guard getuid() == 0, access("/usr/bin/setpriv", X_OK) == 0 else {
            print("[read-only folder] skipped: needs root and setpriv to run the tool as another user (root ignores folder modes)")
            return
        }
        let s = try Scratch()
        defer {
            chmod(s.path("ro"), 0o700)
            s.cleanUp()
        }
        try FileManager.default.createDirectory(atPath: s.path("ro"), withIntermediateDirectories: false)
        let config = try s.config("c.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("ro/store.db"))", "keyFile": "\#(s.path("store.key"))"}}"#)
        #expect(try Self.run(config, ["add", "--service", "s", "--account", "a"], stdin: Data("pw".utf8)).status == 0)
        for file in [s.path("ro/store.db"), s.path("store.key"), s.path("ro")] { chown(file, 65534, 65534) }
        chmod(s.path("ro"), 0o500)
        let env = ["HOME": s.dir, "XDG_CONFIG_HOME": s.dir, "XDG_DATA_HOME": s.dir]
        let get = try Self.run(config, ["get", "--service", "s", "--account", "a"], asUser: 65534, environment: env)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == Data("pw".utf8))
        let add = try Self.run(config, ["add", "--service", "t", "--account", "b"], stdin: Data("x".utf8), asUser: 65534, environment: env)
        #expect(add.status == 7, "\(add.stderr)")   // read-only
        #expect(add.stderr.contains("reading only") && !add.stderr.contains("BEGIN"), "\(add.stderr)")
        #expect(Self.entries(s.path("ro")) == ["store.db"])
    }

    // MARK: The main job

    @Test("scripts/run.sh plays its scenario on a scratch store: the store the configuration selects and the default store are untouched")
    func mainJobOnScratchStore() throws {
        let tool = try builtExecutable("securestore")
        let bin = (tool as NSString).deletingLastPathComponent
        for program in ["securestore-example", "secitem-port-example"] where !FileManager.default.isExecutableFile(atPath: bin + "/" + program) {
            print("[run.sh] skipped: \(program) is not built next to securestore (swift build --build-tests builds it)")
            return
        }
        let s = try Scratch()
        defer { s.cleanUp() }
        let config = try s.sqlite("selected.json", db: "selected.db", key: "selected.key")
        #expect(try Self.run(config, ["add", "--service", "com.example.cli", "--account", "alice"], stdin: Data("mine".utf8)).status == 0)
        #expect(try Self.run(config, ["add", "--service", "other", "--account", "bob"], stdin: Data("keep".utf8)).status == 0)
        let env = ["SECURESTORE_CONFIG": config, "SECURESTORE_RUN_BINDIR": bin, "HOME": s.path("home"),
                   "XDG_DATA_HOME": s.path("home/data"), "XDG_CONFIG_HOME": s.path("home/config")]
        var full = ProcessInfo.processInfo.environment
        for (k, v) in env { full[k] = v }
        let pid = spawn("/bin/bash", [packageRoot.appendingPathComponent("scripts/run.sh").path], environment: full,
                        stdout: s.path("run.out"))
        #expect(pid.map { reap($0, timeout: .seconds(300)) } == 0)
        let output = String(decoding: FileManager.default.contents(atPath: s.path("run.out")) ?? Data(), as: UTF8.self)
        #expect(output.contains("scratch store"), "\(output)")
        // The selected store still holds both items, the secret of the demo's own service included.
        #expect(try Self.run(config, ["get", "--service", "com.example.cli", "--account", "alice"]).stdout == Data("mine".utf8))
        #expect(try Self.run(config, ["get", "--service", "other", "--account", "bob"]).stdout == Data("keep".utf8))
        #expect(!FileManager.default.fileExists(atPath: s.path("home")), "nothing was made under the user's XDG folders")
    }

    // MARK: Config

    @Test("a config with both keyFile and passphraseEnv is an error (sqlite and postgres), and nothing is created")
    func keyFileAndPassphrase() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let sqlite = try s.config("sqlite.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("store.db"))", "keyFile": "\#(s.path("store.key"))", "passphraseEnv": "SS_TEST_PASSPHRASE"}}"#)
        let postgres = try s.config("postgres.json", #"{"backend": "postgres", "postgres": {"url": "postgresql://nobody@127.0.0.1:1/none", "keyFile": "\#(s.path("store.key"))", "passphraseEnv": "SS_TEST_PASSPHRASE"}}"#)
        for config in [sqlite, postgres] {
            let out = try Self.run(config, ["find"], environment: ["SS_TEST_PASSPHRASE": "a passphrase"])
            #expect(out.status == 2, "\(config): \(out.stderr)")
            #expect(out.stderr.contains("keyFile") && out.stderr.contains("passphraseEnv") && out.stderr.contains("both"), "\(out.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: s.path("store.db")))
        #expect(!FileManager.default.fileExists(atPath: s.path("store.key")))
    }

    // MARK: Migrate between default configurations

    @Test("migrate with default settings works across every pair of sqlite, secret-service and postgres")
    func migrateEveryPair() throws {
        let env = ProcessInfo.processInfo.environment
        var backends = ["sqlite"]
        // Run, skip or fail as TestSupport decides for every service-backed test (a failure under
        // SECURESTORE_REQUIRE_ALL_BACKENDS=1, as in scripts/test.sh).
        for (service, name) in [(TestService.secretService, "secret-service"), (.postgres, "postgres")] {
            if service.shouldRun {
                backends.append(name)
            } else {
                print("[migrate every pair] \(name) pairs skipped: \(service.skipReason)")
            }
        }
        let s = try Scratch()
        defer { s.cleanUp() }
        var made = 0
        /// A fresh store of `backend` with nothing about access groups configured.
        func fresh(_ backend: String) throws -> String {
            made += 1
            let name = "m\(made)-\(UInt32.random(in: 0...UInt32.max))"
            switch backend {
            case "sqlite":
                return try s.sqlite("\(name).json", db: "\(name).db", key: "\(name).key")
            case "secret-service":
                return try s.config("\(name).json", #"{"backend": "secret-service", "secretService": {"namespace": "\#(name)"}}"#)
            default:
                let url = env["SECURESTORE_TEST_POSTGRES_URL"] ?? ""
                return try s.config("\(name).json", #"{"backend": "postgres", "postgres": {"url": "\#(url)", "passwordEnv": "SECURESTORE_TEST_POSTGRES_PASSWORD", "keyFile": "\#(s.path(name + ".key"))", "namespace": "\#(name)"}}"#)
            }
        }
        for source in backends {
            for target in backends where target != source {
                let from = try fresh(source), to = try fresh(target)
                let secret = Data("secret \(source)→\(target)".utf8)
                let add = try Self.run(from, ["add", "--service", "svc", "--account", "alice", "--label", "L"], stdin: secret)
                try #require(add.status == 0, "\(source): \(add.stderr)")
                let migrate = try Self.run(from, ["migrate", "--to", to])
                #expect(migrate.status == 0, "\(source) → \(target): \(migrate.stderr)")
                let get = try Self.run(to, ["get", "--service", "svc", "--account", "alice"])
                #expect(get.status == 0 && get.stdout == secret, "\(source) → \(target): \(get.stderr)")
                for config in [from, to] where !config.isEmpty {
                    _ = try Self.run(config, ["clear", "--yes"])
                }
            }
        }
    }
}
