import Foundation
import Testing
import TestSupport
import SecureStorePaths

/// A private world for the helpers and their real clients: HOME, XDG folders, a store chosen by a config
/// file, PATH with the built helpers first. Every server binds 127.0.0.1.
struct World {
    let dir: URL
    let environment: [String: String]
    let buildDir: String


    enum Backend { case sqlite, secretService }

    init(_ backend: Backend) throws {
        guard let git = builtExecutablePath("git-credential-securestore"),
              builtExecutablePath("docker-credential-securestore") != nil, builtExecutablePath("securestore") != nil else {
            throw WorldError("the helpers are not built; run `swift build --build-tests` first")
        }
        buildDir = URL(fileURLWithPath: git).deletingLastPathComponent().path
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-cred-\(UUID().uuidString)")
        let home = dir.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".config"), withIntermediateDirectories: true)
        let config = dir.appendingPathComponent("config.json")
        let json = switch backend {
        case .sqlite:
            #"{"backend": "sqlite", "sqlite": {"path": "\#(dir.path)/store.db", "keyFile": "\#(dir.path)/store.key"}}"#
        case .secretService:
            #"{"backend": "secret-service", "secretService": {"namespace": "cred-\#(UUID().uuidString)"}}"#
        }
        try Data(json.utf8).write(to: config)
        let inherited = ProcessInfo.processInfo.environment
        var env: [String: String] = [
            "HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "PATH": buildDir + ":/usr/local/bin:/usr/bin:/bin", "SECURESTORE_CONFIG": config.path,
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LANG": "C.UTF-8",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@127.0.0.1", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@127.0.0.1", "TMPDIR": dir.path,
        ]
        // The session bus, and the sanitizer settings of a sanitizer run (scripts/sanitize.sh) for the helpers.
        for key in ["DBUS_SESSION_BUS_ADDRESS", "ASAN_OPTIONS", "TSAN_OPTIONS", "SWIFT_BACKTRACE"] { env[key] = inherited[key] }
        environment = env
    }

    struct WorldError: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs a program (stdin from `input`, output to files: no pipe can fill up), killed after `timeout`.
    @discardableResult
    func run(_ arguments: [String], input: String = "", extra: [String: String] = [:], in cwd: URL? = nil,
             timeout: Double = 60) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = environment.merging(extra) { $1 }
        process.currentDirectoryURL = cwd ?? dir
        let out = dir.appendingPathComponent("out-\(UUID().uuidString)"), err = dir.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: out); try? FileManager.default.removeItem(at: err) }
        let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
        defer { try? outHandle.close(); try? errHandle.close() }
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = outHandle
        process.standardError = errHandle
        try process.run()
        feed(Data(input.utf8), to: stdin)   // a helper that stops reading early must not kill the test run
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline { kill(process.processIdentifier, SIGKILL); break }
            usleep(5_000)
        }
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus,
                       stdout: String(decoding: (try? Data(contentsOf: out)) ?? Data(), as: UTF8.self),
                       stderr: String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))
    }

    /// `securestore find --class internet --json`: what the store holds, as the tool shows it.
    func internetItems() throws -> [[String: Any]] {
        let found = try run(["securestore", "find", "--class", "internet", "--json"])
        guard found.status == 0 else { return [] }
        return (try JSONSerialization.jsonObject(with: Data(found.stdout.utf8)) as? [[String: Any]]) ?? []
    }

    func write(_ text: String, to name: String, executable: Bool = false) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        if executable { try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path) }
        return url.path
    }

    func cleanUp() {
        if environment["SECURESTORE_CONFIG"].map({ (try? String(contentsOfFile: $0, encoding: .utf8))?.contains("secret-service") == true }) == true {
            _ = try? run(["securestore", "clear", "--yes"])
        }
        try? FileManager.default.removeItem(at: dir)
    }
}

/// git itself drives git-credential-securestore: `git credential fill/approve/reject`, then an HTTP push and
/// clone with basic auth against `git http-backend` behind a small Python server on 127.0.0.1.
@Suite("git with git-credential-securestore", .serialized, .timeLimit(.minutes(5)))
struct GitClientTests {
    @Test("git credential approve / fill / reject on the SQLite store")
    func credentialCommandSQLite() throws { try credentialCommand(.sqlite) }

    @Test("git credential approve / fill / reject on the Secret Service", .requires(.secretService))
    func credentialCommandSecretService() throws { try credentialCommand(.secretService) }

    @Test("HTTP push stores, clone needs no prompt, a rejected password is erased (SQLite store)")
    func httpSQLite() throws { try http(.sqlite) }

    @Test("HTTP push stores, clone needs no prompt, a rejected password is erased (Secret Service)",
          .requires(.secretService))
    func httpSecretService() throws { try http(.secretService) }

    func credentialCommand(_ backend: World.Backend) throws {
        let world = try World(backend)
        defer { world.cleanUp() }
        let helper = world.buildDir + "/git-credential-securestore"
        // credential.helper as an absolute path, and by name (git runs `git credential-securestore` from PATH).
        for helperSetting in [helper, "securestore"] {
            let git = ["git", "-c", "credential.helper=", "-c", "credential.helper=\(helperSetting)", "credential"]
            let approve = try world.run(git + ["approve"], input: "protocol=https\nhost=git.test:8443\nusername=bob\npassword=pw-1\n\n")
            #expect(approve.status == 0, "\(approve.stderr)")
            let fill = try world.run(git + ["fill"], input: "protocol=https\nhost=git.test:8443\npath=team/repo.git\n\n")
            #expect(fill.status == 0, "\(fill.stderr)")
            #expect(fill.stdout == "protocol=https\nhost=git.test:8443\nusername=bob\npassword=pw-1\n",
                    "git strips the path of an http URL without credential.useHttpPath")
            let byURL = try world.run(git + ["fill"], input: "url=https://bob@git.test:8443/x.git\n\n")
            #expect(byURL.stdout.contains("password=pw-1\n"))
            let otherPort = try world.run(git + ["fill"], input: "protocol=https\nhost=git.test\n\n")
            #expect(otherPort.status != 0 && !otherPort.stdout.contains("pw-1"), "no prompt allowed, nothing stored for git.test:443")
            let reject = try world.run(git + ["reject"], input: "protocol=https\nhost=git.test:8443\nusername=bob\npassword=pw-1\n\n")
            #expect(reject.status == 0, "\(reject.stderr)")
            let gone = try world.run(git + ["fill"], input: "protocol=https\nhost=git.test:8443\n\n")
            #expect(gone.status != 0 && !gone.stdout.contains("pw-1"), "rejected: erased")
        }
        // Options in the helper setting choose another store, as for the securestore tool.
        let other = try world.write(#"{"backend": "sqlite", "sqlite": {"path": "\#(world.dir.path)/other.db", "keyFile": "\#(world.dir.path)/other.key"}}"#,
                                    to: "other.json")
        let viaOption = ["git", "-c", "credential.helper=", "-c", "credential.helper=securestore --config \(other)", "credential"]
        #expect(try world.run(viaOption + ["approve"], input: "protocol=https\nhost=opt.test\nusername=o\npassword=po\n\n").status == 0)
        #expect(try world.run(viaOption + ["fill"], input: "protocol=https\nhost=opt.test\n\n").stdout.contains("password=po\n"))
        #expect(try world.run(["securestore", "--config", other, "find", "--class", "internet", "--server", "opt.test"]).status == 0)
        #expect(try world.internetItems().isEmpty, "the configured store got nothing")

        // credential.useHttpPath: the path becomes part of the key.
        let git = ["git", "-c", "credential.helper=", "-c", "credential.helper=\(helper)", "-c", "credential.useHttpPath=true", "credential"]
        #expect(try world.run(git + ["approve"], input: "url=https://alice@host.test/a.git\npassword=secret-path-a\n\n").status == 0)
        #expect(try world.run(git + ["approve"], input: "url=https://alice@host.test/b.git\npassword=secret-path-b\n\n").status == 0)
        #expect(try world.run(git + ["fill"], input: "url=https://host.test/a.git\n\n").stdout.contains("username=alice\npassword=secret-path-a\n"))
        #expect(try world.run(git + ["fill"], input: "url=https://host.test/b.git\n\n").stdout.contains("password=secret-path-b\n"))
        #expect(try world.run(git + ["fill"], input: "url=https://host.test/c.git\n\n").status != 0)
        // The items are internet passwords anyone can see with `securestore find --class internet` (no secret shown).
        let items = try world.internetItems()
        #expect(items.count == 2)
        #expect(items.allSatisfy { $0["server"] as? String == "host.test" && $0["protocol"] as? String == "htps"
                                   && $0["authenticationType"] as? String == "dflt" && $0["account"] as? String == "alice" })
        #expect(Set(items.compactMap { $0["path"] as? String }) == ["a.git", "b.git"])
        let listing = try world.run(["securestore", "find", "--class", "internet"])
        #expect(listing.status == 0 && !listing.stdout.contains("secret-path"))
    }

    func http(_ backend: World.Backend) throws {
        let world = try World(backend)
        defer { world.cleanUp() }
        let root = world.dir.appendingPathComponent("srv")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        #expect(try world.run(["git", "init", "-q", "--bare", "-b", "main", "repo.git"], in: root).status == 0)
        let passwordFile = try world.write("first-password\n", to: "server-password")
        let script = try world.write(Self.server, to: "server.py")
        // The server: started here, its port read from its first line, stopped at the end.
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = [script, root.path, "bob", passwordFile]
        server.environment = world.environment
        let portPipe = Pipe()
        server.standardOutput = portPipe
        server.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        var portLine = Data()
        while !portLine.contains(UInt8(ascii: "\n")) {
            let chunk = portPipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            portLine.append(chunk)
        }
        let port = String(decoding: portLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(Int(port) != nil, "the test server did not start")
        let url = "http://127.0.0.1:\(port)/repo.git"
        let helper = world.buildDir + "/git-credential-securestore"
        let withHelper = ["-c", "credential.helper=", "-c", "credential.helper=\(helper)"]
        let askpass = try world.write("#!/bin/sh\ncase \"$1\" in\nUsername*) echo bob ;;\nPassword*) echo first-password ;;\nesac\n",
                                      to: "askpass.sh", executable: true)
        let noPrompt = try world.write("#!/bin/sh\necho \"askpass called: $1\" >&2\nexit 1\n", to: "no-askpass.sh", executable: true)

        // First push: no credential stored, the askpass program supplies it, git approves it: stored.
        let work = world.dir.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        #expect(try world.run(["git", "init", "-q", "-b", "main"], in: work).status == 0)
        _ = try world.write("hello\n", to: "work/README")
        #expect(try world.run(["git", "add", "README"], in: work).status == 0)
        #expect(try world.run(["git", "commit", "-q", "-m", "first"], in: work).status == 0)
        let push = try world.run(["git"] + withHelper + ["push", url, "main"], extra: ["GIT_ASKPASS": askpass], in: work)
        #expect(push.status == 0, "\(push.stderr)")
        let stored = try world.internetItems()
        #expect(stored.count == 1)
        #expect(stored.first?["server"] as? String == "127.0.0.1" && stored.first?["port"] as? Int == Int(port)
                && stored.first?["protocol"] as? String == "http" && stored.first?["account"] as? String == "bob")

        // Second: a clone and a push with no way to prompt succeed on the stored credential alone.
        let clone = try world.run(["git"] + withHelper + ["clone", "-q", url, "clone"], extra: ["GIT_ASKPASS": noPrompt])
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(!clone.stderr.contains("askpass called"))
        let cloned = world.dir.appendingPathComponent("clone")
        #expect((try? String(contentsOf: cloned.appendingPathComponent("README"), encoding: .utf8)) == "hello\n")
        _ = try world.write("again\n", to: "clone/README")
        #expect(try world.run(["git", "commit", "-q", "-am", "second"], in: cloned).status == 0)
        let push2 = try world.run(["git"] + withHelper + ["push", "-q", url, "main"], extra: ["GIT_ASKPASS": noPrompt], in: cloned)
        #expect(push2.status == 0 && !push2.stderr.contains("askpass called"), "\(push2.stderr)")

        // The server's password changes: git's stored credential is rejected, and git erases it.
        _ = try world.write("second-password\n", to: "server-password")
        let fetch = try world.run(["git"] + withHelper + ["fetch", "-q", url], extra: ["GIT_ASKPASS": noPrompt], in: cloned)
        #expect(fetch.status != 0)
        #expect(try world.internetItems().isEmpty, "the rejected credential is erased")
        let helperGet = try world.run([helper, "get"], input: "protocol=http\nhost=127.0.0.1:\(port)\n\n")
        #expect(helperGet.status == 0 && helperGet.stdout.isEmpty, "nothing matches: silent")
    }

    /// `git http-backend` as CGI behind Python's HTTP server, requiring basic auth with the password in a file.
    static let server = #"""
    import base64, http.server, os, subprocess, sys
    root, user, password_file = sys.argv[1], sys.argv[2], sys.argv[3]

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.git()

        def do_POST(self):
            self.git()

        def git(self):
            password = open(password_file).read().strip()
            wanted = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.headers.get("Authorization") != wanted:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                       QUERY_STRING=query, REQUEST_METHOD=self.command, REMOTE_USER=user, REMOTE_ADDR="127.0.0.1",
                       CONTENT_TYPE=self.headers.get("Content-Type", ""), CONTENT_LENGTH=str(len(body)),
                       HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""),
                       HTTP_GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
            out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
            sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
            head, _, content = out.partition(sep)
            status, headers = 200, []
            for line in head.replace(b"\r\n", b"\n").split(b"\n"):
                key, _, value = line.decode().partition(":")
                if key.lower() == "status":
                    status = int(value.strip().split()[0])
                elif key:
                    headers.append((key, value.strip()))
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """#
}

/// docker's protocol through the docker SDK for Python's credential client (`docker.credentials.Store`,
/// Debian's python3-docker), as `docker-py` uses a credsStore.
@Suite("docker SDK for Python with docker-credential-securestore", .serialized, .timeLimit(.minutes(3)))
struct DockerClientTests {
    static let hasClient = FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/docker/credentials/store.py")
    static let noClientReason: Comment = "python3-docker is not installed (scripts/deps.sh installs it)"

    @Test("store / get / list / erase, not found, errors (SQLite store)", .enabled(if: hasClient || TestService.requireAll, noClientReason))
    func sqlite() throws { try exercise(.sqlite) }

    @Test("store / get / list / erase, not found, errors (Secret Service)",
          .enabled(if: hasClient || TestService.requireAll, noClientReason), .requires(.secretService))
    func secretService() throws { try exercise(.secretService) }

    func exercise(_ backend: World.Backend) throws {
        let world = try World(backend)
        defer { world.cleanUp() }
        // A git credential for the same host lives in the same store; docker must never see it.
        let git = try world.run([world.buildDir + "/git-credential-securestore", "store"],
                                input: "protocol=https\nhost=registry.test:5000\nusername=bob\npassword=git-secret\n\n")
        #expect(git.status == 0, "\(git.stderr)")
        let script = try world.write(Self.client, to: "client.py")
        let outcome = try world.run(["/usr/bin/python3", script])
        #expect(outcome.status == 0, "\(outcome.stdout)\n\(outcome.stderr)")
        #expect(outcome.stdout.hasSuffix("ok\n"), "\(outcome.stdout)")
        // What the client left: one docker item, and git's, both visible to `securestore find --class internet`.
        let items = try world.internetItems()
        #expect(items.count == 2)
        let docker = items.first { $0["label"] as? String == "Docker Credentials" }
        #expect(docker?["server"] as? String == "127.0.0.1" && docker?["port"] as? Int == 5001
                && docker?["description"] as? String == "docker_cli" && docker?["comment"] as? String == "127.0.0.1:5001")
        #expect(items.contains { $0["authenticationType"] as? String == "dflt" && $0["account"] as? String == "bob" })
        let get = try world.run([world.buildDir + "/git-credential-securestore", "get"], input: "protocol=https\nhost=registry.test:5000\n\n")
        #expect(get.stdout == "username=bob\npassword=git-secret\n", "docker's store left git's item alone")
    }

    static let client = #"""
    from docker.credentials import Store, errors

    store = Store("securestore")

    def expect(ok, what):
        if not ok:
            raise SystemExit("FAILED: " + what)

    # Not found: the client recognises the helper's exact message and raises CredentialsNotFound.
    for server in ["https://registry.test:5000", "registry.test:5000"]:
        try:
            store.get(server)
            expect(False, "get of a missing credential succeeded")
        except errors.CredentialsNotFound:
            pass
    expect(store.list() == {}, "list starts empty (git's item is not docker's): %r" % store.list())

    store.store("https://registry.test:5000", "alice", "tok-1")
    got = store.get("https://registry.test:5000")
    expect(got == {"ServerURL": "https://registry.test:5000", "Username": "alice", "Secret": "tok-1"}, "get: %r" % got)
    # The same registry without a scheme (docker's normalisation), the secret replaced by a second store.
    expect(store.get("registry.test:5000")["Secret"] == "tok-1", "get without scheme")
    store.store("registry.test:5000", "alice", "tok-2")
    expect(store.get("https://registry.test:5000")["Secret"] == "tok-2", "store replaces")
    store.store("127.0.0.1:5001", "ci", 'quote " backslash \\ unicode \u00e9 <&>')
    expect(store.get("127.0.0.1:5001")["Secret"] == 'quote " backslash \\ unicode \u00e9 <&>', "JSON escapes")
    listed = store.list()
    expect(listed == {"registry.test:5000": "alice", "127.0.0.1:5001": "ci"}, "list: %r" % listed)

    store.erase("https://registry.test:5000")
    try:
        store.get("registry.test:5000")
        expect(False, "erased credential still found")
    except errors.CredentialsNotFound:
        pass
    try:
        store.erase("registry.test:5000")
        expect(False, "erasing a missing credential succeeded")
    except errors.CredentialsNotFound:
        pass

    # The error case: a URL docker refuses gives StoreError (not CredentialsNotFound) with the helper's reason.
    try:
        store.store("ftp://registry.test", "alice", "tok-3")
        expect(False, "an ftp URL was stored")
    except errors.CredentialsNotFound:
        expect(False, "an error reported as not found")
    except errors.StoreError as e:
        expect("unsupported scheme: ftp" in str(e) and "tok-3" not in str(e), "error text: %s" % e)
    try:
        store.store("registry.test", "", "tok-4")
        expect(False, "stored without a user name")
    except errors.StoreError as e:
        expect("no credentials username" in str(e), "error text: %s" % e)
    expect(store.list() == {"127.0.0.1:5001": "ci"}, "errors changed nothing: %r" % store.list())
    print("ok")
    """#
}

/// The executables' own input handling: git's blank line ends the credential even while the pipe stays open;
/// an oversized input is refused before anything is stored.
@Suite("credential helper processes", .timeLimit(.minutes(2)))
struct HelperProcessTests {
    @Test("get, erase and list before anything is stored answer \"nothing stored\" and create no store, key or folder; store then creates them")
    func readsBeforeFirstStoreCreateNothing() throws {
        let world = try World(.sqlite)
        defer { world.cleanUp() }
        let gitHelper = world.buildDir + "/git-credential-securestore"
        let dockerHelper = world.buildDir + "/docker-credential-securestore"
        let home = world.dir.appendingPathComponent("home")
        func untouched(_ step: String) {
            for file in ["store.db", "store.key"] {
                #expect(!FileManager.default.fileExists(atPath: world.dir.appendingPathComponent(file).path), "\(step) made \(file)")
            }
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: home.path)) ?? []) == [".config"], "\(step) made a folder")
        }
        let get = try world.run([gitHelper, "get"], input: "protocol=https\nhost=fresh.test\n\n")
        #expect(get.status == 0 && get.stdout.isEmpty && get.stderr.isEmpty, "git's get of nothing: silence (\(get.stderr))")
        untouched("git get")
        let erase = try world.run([gitHelper, "erase"], input: "protocol=https\nhost=fresh.test\nusername=u\n\n")
        #expect(erase.status == 0 && erase.stderr.isEmpty, "\(erase.stderr)")
        untouched("git erase")
        let fill = try world.run(["git", "-c", "credential.helper=", "-c", "credential.helper=\(gitHelper)", "credential", "fill"],
                                 input: "protocol=https\nhost=fresh.test\n\n")
        #expect(fill.status != 0 && !fill.stdout.contains("password="), "no prompt allowed and nothing stored")
        untouched("git credential fill")
        let dockerGet = try world.run([dockerHelper, "get"], input: "fresh.test")
        #expect(dockerGet.status == 1 && dockerGet.stdout.contains("credentials not found in native keychain"), "\(dockerGet.stdout)")
        let dockerErase = try world.run([dockerHelper, "erase"], input: "fresh.test")
        #expect(dockerErase.status == 1 && dockerErase.stdout.contains("credentials not found in native keychain"))
        let list = try world.run([dockerHelper, "list"])
        #expect(list.status == 0 && list.stdout == "{}\n", "\(list.stdout) \(list.stderr)")
        untouched("docker get/erase/list")
        let store = try world.run([gitHelper, "store"], input: "protocol=https\nhost=fresh.test\nusername=u\npassword=p\n\n")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(FileManager.default.fileExists(atPath: world.dir.appendingPathComponent("store.db").path))
        let again = try world.run([gitHelper, "get"], input: "protocol=https\nhost=fresh.test\n\n")
        #expect(again.stdout == "username=u\npassword=p\n")
    }

    @Test("git helper answers after the blank line without waiting for end of file")
    func blankLineWithOpenPipe() throws {
        let world = try World(.sqlite)
        defer { world.cleanUp() }
        let helper = world.buildDir + "/git-credential-securestore"
        #expect(try world.run([helper, "store"], input: "protocol=https\nhost=open.test\nusername=u\npassword=p\n\n").status == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = ["get"]
        process.environment = world.environment
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        ignoreBrokenPipes()
        try process.run()
        try stdin.fileHandleForWriting.write(contentsOf: Data("protocol=https\nhost=open.test\n\n".utf8))   // and the pipe stays open
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        let finished = !process.isRunning
        if !finished { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try stdin.fileHandleForWriting.close()
        #expect(finished, "the helper waited for end of file")
        #expect(String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "username=u\npassword=p\n")
    }

    @Test("an input over the limit is refused, nothing stored, no secret in the message")
    func oversizedInput() throws {
        let world = try World(.sqlite)
        defer { world.cleanUp() }
        let huge = "protocol=https\nhost=big.test\nusername=u\npassword=" + String(repeating: "s", count: 9 << 20) + "\n\n"
        let git = try world.run([world.buildDir + "/git-credential-securestore", "store"], input: huge)
        #expect(git.status == 1 && git.stderr.contains("larger than") && !git.stderr.contains("sss"))
        let docker = try world.run([world.buildDir + "/docker-credential-securestore", "store"],
                                   input: #"{"ServerURL":"big.test","Username":"u","Secret":""# + String(repeating: "s", count: 9 << 20) + "\"}")
        #expect(docker.status == 1 && docker.stdout.contains("larger than") && !docker.stdout.contains("sss"))
        #expect(try world.internetItems().isEmpty)
    }
}
