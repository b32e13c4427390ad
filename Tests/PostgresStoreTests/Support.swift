import Foundation
import SecureStore
import PostgresStore

/// The throwaway server of scripts/with-postgres.sh. Without it every test here fails, saying how to run.
enum Server {
    static let missing = SecureStoreError(.notAvailable,
        "SECURESTORE_TEST_POSTGRES_URL is not set: run the PostgreSQL tests under scripts/with-postgres.sh " +
        "(scripts/test.sh does), e.g. `scripts/with-postgres.sh swift test --skip-build --filter PostgresStoreTests`.")

    static let passwordEnv = "SECURESTORE_TEST_POSTGRES_PASSWORD"

    static func url() throws(SecureStoreError) -> String {
        guard let url = ProcessInfo.processInfo.environment["SECURESTORE_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw missing
        }
        return url
    }

    static func freshNamespace(_ prefix: String = "test") -> String {
        "\(prefix)-\(UInt64.random(in: 0...UInt64.max))"
    }

    static func store(namespace: String, key: Data, url: String? = nil) throws(SecureStoreError) -> PostgresStore {
        let target: String
        if let url { target = url } else { target = try Server.url() }
        return try PostgresStore(url: target, key: .raw(key), namespace: namespace, passwordEnv: passwordEnv)
    }

    /// Runs `psql` as the database owner (the test role) and returns its stdout.
    static func psql(_ args: [String]) throws -> Data {
        try run("/usr/bin/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", try url()] + args,
                environment: ["PGPASSWORD": ProcessInfo.processInfo.environment[passwordEnv] ?? ""]).output
    }
}

func randomKey() -> Data { Data((0..<32).map { _ in UInt8.random(in: 0...255) }) }

func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

/// The error `body` throws, or nil.
func failure(_ body: () throws(SecureStoreError) -> Void) -> SecureStoreError? {
    do throws(SecureStoreError) {
        try body()
        return nil
    } catch {
        return error
    }
}

func generic(_ service: String, _ account: String, _ extra: [AttributeName: AttributeValue] = [:]) -> [AttributeName: AttributeValue] {
    var a: [AttributeName: AttributeValue] = [.service: .string(service), .account: .string(account)]
    for (k, v) in extra { a[k] = v }
    return a
}

/// Runs a program to completion (bounded); stdout goes through a file (no pipe a daemon could inherit).
func run(_ path: String, _ args: [String], environment extra: [String: String] = [:],
         removing: [String] = [], timeout: Duration = .seconds(300)) throws -> (status: Int32, output: Data) {
    let out = FileManager.default.temporaryDirectory.appendingPathComponent("ss-pg-out-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: out) }
    var env = ProcessInfo.processInfo.environment
    for (k, v) in extra { env[k] = v }
    for k in removing { env[k] = nil }
    guard let pid = spawn(path, args, environment: env, stdout: out) else {
        throw SecureStoreError(.notAvailable, "cannot start \(path)")
    }
    let status = reap(pid, timeout: timeout)
    return (status, (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data())
}

/// Starts `path` with posix_spawn (not Foundation's `Process`, whose exit monitoring can hang when a daemon
/// started below inherits its descriptors): stdin from /dev/null, stdout to `stdout` (a file) or /dev/null.
func spawn(_ path: String, _ args: [String], environment: [String: String], stdout: String?) -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for p in argv + envp { free(p) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, &actions, nil, argv, envp) == 0 else { return nil }
    return pid
}

/// Waits for `pid` (killing it after `timeout`); its exit status, or -1 when it was killed or vanished.
func reap(_ pid: pid_t, timeout: Duration = .seconds(300)) -> Int32 {
    let deadline = ContinuousClock.now + timeout
    var status: Int32 = 0
    while true {
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1 }
        if r == -1 && errno != EINTR { return -1 }
        if ContinuousClock.now > deadline {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            return -1
        }
        usleep(10_000)
    }
}

/// An executable of this package built next to the test bundle.
func builtExecutable(_ name: String) throws -> String {
    var dirs: [URL] = []
    if let exe = Bundle.main.executableURL { dirs.append(exe.deletingLastPathComponent()) }
    dirs.append(Bundle.main.bundleURL.deletingLastPathComponent())
    dirs.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    dirs.append(packageRoot.appendingPathComponent(".build/debug"))
    for dir in dirs {
        for candidate in [dir, dir.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
    }
    throw SecureStoreError(.notAvailable, "\(name) is not built; run swift build --build-tests")
}

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A running worker process; its stdout goes to a file, read when it ends.
final class Worker {
    let pid: pid_t
    let out: String

    init(_ arguments: [String]) throws {
        out = FileManager.default.temporaryDirectory.appendingPathComponent("ss-pg-worker-\(UUID().uuidString)").path
        let path = try builtExecutable("securestore-postgres-worker")
        guard let pid = spawn(path, arguments, environment: ProcessInfo.processInfo.environment, stdout: out) else {
            throw SecureStoreError(.notAvailable, "cannot start \(path)")
        }
        self.pid = pid
    }

    /// Waits for the process to end (at most 5 minutes); returns its output lines.
    func finish() -> [String] {
        let status = reap(pid)
        let data = (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data()
        try? FileManager.default.removeItem(atPath: out)
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        if status != 0 { lines.append("exit \(status)") }
        return lines
    }
}
