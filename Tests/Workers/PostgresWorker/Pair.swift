// The primary + standby scenarios of the PostgreSQL tests, run under scripts/with-postgres-pair.sh:
//
//   securestore-postgres-worker pair failover      synchronous replication, the primary killed and the standby
//                                                   promoted under a writer; reports what was acknowledged and lost
//   securestore-postgres-worker pair syncdown      synchronous replication with the standby stopped: the library
//                                                   and the CLI answer outcomeUnknown within their deadline
//   securestore-postgres-worker pair standby       a config naming only the standby: the CLI's read-only exit code
//   securestore-postgres-worker pair deadhost      a first host that accepts and never answers: CLI `get` times
//
// Prints one line per fact ("NAME VALUE …"); the tests read them.
import Foundation
import SecureStoreCore
import SecureStorePostgres
import TestSupport

enum Pair {
    static let env = ProcessInfo.processInfo.environment
    static let passwordEnv = "SECURESTORE_TEST_PG_PAIR_PASSWORD"

    static func value(_ name: String) -> String {
        guard let v = env[name], !v.isEmpty else {
            say("fatal \(name) is not set: run under scripts/with-postgres-pair.sh")
            exit(1)
        }
        return v
    }

    /// Runs the pair's control script; its exit status.
    @discardableResult
    static func control(_ args: String...) -> Int32 {
        guard let pid = spawn(value("SECURESTORE_TEST_PG_PAIR_CONTROL"), args, environment: env, stdout: nil) else { return -1 }
        return reap(pid, timeout: .seconds(90))
    }

    static func ms(_ start: ContinuousClock.Instant) -> Int64 {
        let d = ContinuousClock.now - start
        return d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }

    /// A private folder with a key file path and a config file for the CLI.
    static func folder() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-pair-\(UUID().uuidString)").path
        mkdir(dir, 0o700)
        return dir
    }

    static func config(_ dir: String, name: String, url: String, namespace: String, extra: String = "") -> String {
        let path = dir + "/\(name).json"
        let json = #"{"backend": "postgres", "postgres": {"url": "\#(url)", "passwordEnv": "\#(passwordEnv)", "keyFile": "\#(dir)/store.key", "namespace": "\#(namespace)"\#(extra)}}"#
        FileManager.default.createFile(atPath: path, contents: Data(json.utf8), attributes: [.posixPermissions: 0o600])
        return path
    }

    /// Runs the CLI with `config`; its exit status and the milliseconds it took.
    static func cli(_ config: String, _ args: [String], runtime: String? = nil) -> (status: Int32, ms: Int64) {
        guard let exe = builtExecutablePath("securestore") else {
            say("fatal the securestore executable is not built")
            exit(1)
        }
        var environment = env
        environment["SECURESTORE_CONFIG"] = config
        environment["SECURESTORE_BACKEND"] = nil
        environment["XDG_RUNTIME_DIR"] = runtime
        let start = ContinuousClock.now
        guard let pid = spawn(exe, args, environment: environment, stdout: nil) else { return (-1, 0) }
        let status = reap(pid, timeout: .seconds(60))
        return (status, ms(start))
    }

    static func store(_ url: String, _ dir: String, _ namespace: String, statement: Duration = .seconds(10),
                      lock: Duration = .seconds(5), connect: Duration = .seconds(5)) throws(SecureStoreError) -> PostgresStore {
        try PostgresStore(url: url, key: .keyFile(dir + "/store.key"), namespace: namespace, passwordEnv: passwordEnv,
                          connectTimeout: connect, statementTimeout: statement, lockTimeout: lock, rememberHost: false)
    }

    static func item(_ name: String) -> NewItem {
        NewItem(.genericPassword, [.service: .string("pair"), .account: .string(name)], data: Data(name.utf8))
    }

    static func present(_ store: PostgresStore, _ name: String) -> String {
        do throws(SecureStoreError) {
            let found = try store.items(matching: ItemQuery(.genericPassword, [.service: .string("pair"), .account: .string(name)],
                                                         returning: .data))
            return found.isEmpty ? "false" : "true"
        } catch {
            return "error \(error)"
        }
    }

    static func run(_ scenario: String) throws(SecureStoreError) {
        let dir = folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ns = "pair-\(scenario)-\(UInt64.random(in: 0...UInt64.max))"
        let pairURL = value("SECURESTORE_TEST_PG_PAIR_URL")
        let primaryURL = value("SECURESTORE_TEST_PG_PAIR_PRIMARY_URL")
        let standbyURL = value("SECURESTORE_TEST_PG_PAIR_STANDBY_URL")
        switch scenario {
        case "failover":
            say("sync \(control("sync", "on"))")
            let store = try Pair.store(pairURL, dir, ns, statement: .seconds(3), connect: .seconds(2))
            // A writer adds without pause while the primary is killed and the standby promoted.
            struct Tally { var acked: [String] = []; var unknown: [String] = []; var failed = 0; var maxMs: Int64 = 0; var stop = false }
            let tally = Locked(Tally())
            let writer = Thread {
                var i = 0
                while !tally.withLock({ $0.stop }) {
                    let name = "f\(i)"
                    i += 1
                    let start = ContinuousClock.now
                    do throws(SecureStoreError) {
                        try store.add(item(name), returning: [])
                        tally.withLock { $0.acked.append(name); $0.maxMs = max($0.maxMs, ms(start)) }
                    } catch {
                        tally.withLock {
                            if error.code == .outcomeUnknown { $0.unknown.append(name) }
                            $0.failed += 1
                            $0.maxMs = max($0.maxMs, ms(start))
                        }
                        say("err \(name) \(error.code.name) \(ms(start)) \(error.message)")
                        usleep(20_000)
                    }
                }
                tally.withLock { $0.stop = false }
            }
            writer.start()
            let begin = ContinuousClock.now
            while tally.withLock({ $0.acked.count }) < 20, ms(begin) < 20_000 { usleep(5_000) }
            say("kill \(control("primary", "kill"))")
            let killed = tally.withLock { $0.acked.count }
            usleep(300_000)
            say("promote \(control("promote"))")
            let promoted = ContinuousClock.now
            while tally.withLock({ $0.acked.count }) < killed + 20, ms(promoted) < 20_000 { usleep(5_000) }
            tally.withLock { $0.stop = true }
            while tally.withLock({ $0.stop }) { usleep(5_000) }
            let (acked, unknown) = tally.withLock { ($0.acked, $0.unknown) }
            say("failed \(tally.withLock { $0.failed })")
            say("after-kill-acked \(acked.count - killed)")
            say("maxms \(tally.withLock { $0.maxMs })")
            let fresh = try Pair.store(pairURL, dir, ns)
            let found = Set(try fresh.items(matching: ItemQuery(.genericPassword, [.service: .string("pair")], limit: .all,
                                                              returning: .attributes))
                .compactMap { item -> String? in
                    if case .string(let s)? = item.attributes?[.account] { return s }
                    return nil
                })
            say("acked \(acked.count)")
            say("lost \(acked.filter { !found.contains($0) }.count)")
            say("unknown \(unknown.count)")
        case "syncdown":
            say("sync \(control("sync", "on"))")
            let store = try Pair.store(pairURL, dir, ns, statement: .seconds(2), lock: .seconds(1))
            try store.add(item("before"), returning: [])
            say("standby-stop \(control("standby", "stop"))")
            // A second writer of the namespace on the same store object waits for the stuck one's lock.
            let other = Locked<String>("")
            let thread = Thread {
                usleep(300_000)
                let start = ContinuousClock.now
                do throws(SecureStoreError) {
                    try store.add(item("second"), returning: [])
                    other.withLock { $0 = "lock ok \(ms(start))" }
                } catch {
                    other.withLock { $0 = "lock \(error.code.name) \(ms(start)) \(error.message)" }
                }
            }
            thread.start()
            let start = ContinuousClock.now
            do throws(SecureStoreError) {
                try store.add(item("x1"), returning: [])
                say("add ok \(ms(start))")
            } catch {
                say("add \(error.code.name) \(ms(start)) \(error.message)")
            }
            while other.withLock({ $0.isEmpty }) { usleep(20_000) }
            say(other.withLock { $0 })
            say("present x1 \(present(store, "x1"))")
            let cliConfig = config(dir, name: "sync", url: pairURL, namespace: ns, extra: #", "statementTimeout": 2"#)
            let cli = Pair.cli(cliConfig, ["add", "--service", "pair", "--account", "cli"])
            say("cli-add \(cli.status) \(cli.ms)")
            say("present cli \(present(store, "cli"))")
            say("standby-start \(control("standby", "start"))")
            say("sync-off \(control("sync", "off"))")
        case "standby":
            let primary = try Pair.store(primaryURL, dir, ns)
            try primary.add(item("replicated"), returning: [])
            // Until the standby has replayed the schema, the namespace and the item, opening there fails.
            let start = ContinuousClock.now
            var standby: PostgresStore? = nil
            while ms(start) < 10_000 {
                if standby == nil { standby = try? Pair.store(standbyURL, dir, ns) }
                if let standby, present(standby, "replicated") == "true" { break }
                usleep(50_000)
            }
            let plain = config(dir, name: "standby", url: standbyURL, namespace: ns)
            say("standby-add \(cli(plain, ["add", "--service", "pair", "--account", "new"]).status)")
            say("standby-get \(cli(plain, ["get", "--service", "pair", "--account", "replicated"]).status)")
            let rw = config(dir, name: "standby-rw", url: standbyURL + "?target_session_attrs=read-write", namespace: ns)
            say("standby-rw-get \(cli(rw, ["get", "--service", "pair", "--account", "replicated"]).status)")
            let prefer = config(dir, name: "prefer", url: pairURL.replacingOccurrences(of: "read-write", with: "prefer-standby"),
                                namespace: ns)
            say("prefer-standby-add \(cli(prefer, ["add", "--service", "pair", "--account", "new"]).status)")
            say("prefer-standby-get \(cli(prefer, ["get", "--service", "pair", "--account", "replicated"]).status)")
        case "deadhost":
            // A blackhole on loopback: a listening socket that never accepts, so a client's connection is
            // established by the kernel and then never answered.
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { s in
                    bind(fd, s, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, s, &length) == 0
                }
            }
            guard fd >= 0, bound else {
                say("fatal cannot open a blackhole listener")
                exit(1)
            }
            let port = UInt16(bigEndian: address.sin_port)
            guard let at = primaryURL.firstIndex(of: "@"), let slash = primaryURL[at...].firstIndex(of: "/") else {
                say("fatal unexpected primary URL")
                exit(1)
            }
            let primaryHost = primaryURL[primaryURL.index(after: at)..<slash]
            let url = "postgresql://securestore@127.0.0.1:\(port),\(primaryHost)/securestore?target_session_attrs=read-write"
            let primary = try Pair.store(primaryURL, dir, ns)
            try primary.add(item("dh"), returning: [])
            let runtime = dir + "/runtime"
            mkdir(runtime, 0o700)
            let conf = config(dir, name: "dead", url: url, namespace: ns, extra: #", "connectTimeout": 2"#)
            let first = cli(conf, ["get", "--service", "pair", "--account", "dh"], runtime: runtime)
            say("first \(first.status) \(first.ms)")
            for _ in 0..<5 {
                let next = cli(conf, ["get", "--service", "pair", "--account", "dh"], runtime: runtime)
                say("next \(next.status) \(next.ms)")
            }
            let files = (try? FileManager.default.contentsOfDirectory(atPath: runtime + "/securestore")) ?? []
            for file in files {
                var info = stat()
                if lstat(runtime + "/securestore/" + file, &info) == 0 {
                    say("memory \(String(info.st_mode & 0o777, radix: 8))")
                }
            }
            var info = stat()
            if lstat(runtime + "/securestore", &info) == 0 { say("memory-folder \(String(info.st_mode & 0o777, radix: 8))") }
            close(fd)
        default:
            say("fatal unknown pair scenario \(scenario)")
            exit(2)
        }
    }
}
