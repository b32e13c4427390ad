import Foundation
import Glibc
import SecureStoreCore
import SecureStorePostgres
import TestSupport

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

    /// A new private (0700) folder for key files; the caller removes it.
    static func privateFolder(_ prefix: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        return folder
    }

    static func store(namespace: String, key: Data, url: String? = nil) throws(SecureStoreError) -> PostgresStore {
        let target: String
        if let url { target = url } else { target = try Server.url() }
        return try PostgresStore(url: target, key: .raw(key), namespace: namespace, passwordEnv: passwordEnv)
    }

    /// Starts `psql` in a session of its own running `BEGIN; SELECT pg_advisory_xact_lock(L); SQL COMMIT;` with
    /// `namespace`'s writer lock L, and waits (at most 5 s) until the server shows the lock granted. Returns the
    /// psql process and whether the lock was seen held, or nil when psql could not start.
    static func holdWriterLock(_ namespace: String, then sql: String) throws -> (pid: pid_t, held: Bool)? {
        let lockKey = PostgresBackend.advisoryLockKey(namespace: namespace)
        guard let pid = spawn("/usr/bin/psql", ["-X", "-q", try url(), "-c",
            "BEGIN; SELECT pg_advisory_xact_lock(\(lockKey)); \(sql) COMMIT;"],
            environment: ProcessInfo.processInfo.environment.merging(
                ["PGPASSWORD": ProcessInfo.processInfo.environment[passwordEnv] ?? ""]) { _, b in b },
            stdout: nil) else { return nil }
        var held = false
        for _ in 0..<100 where !held {
            let out = try psql(["-At", "-c", "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                + " AND classid::bigint = \((lockKey >> 32) & 0xFFFF_FFFF) AND objid::bigint = \(lockKey & 0xFFFF_FFFF)"])
            held = !String(decoding: out, as: UTF8.self).hasPrefix("0")
            if !held { usleep(50_000) }
        }
        return (pid, held)
    }

    /// The SQL condition selecting the rows of `namespace` (by its numeric id, schema 4).
    static func scope(_ namespace: String) -> String {
        "ns = (SELECT id FROM securestore_namespaces WHERE name = '\(namespace)')"
    }

    /// Runs `psql` as the database owner (the test role) and returns its stdout.
    static func psql(_ args: [String]) throws -> Data {
        try run("/usr/bin/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", try url()] + args,
                environment: ["PGPASSWORD": ProcessInfo.processInfo.environment[passwordEnv] ?? ""]).output
    }
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
