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

/// Runs a program to completion; stdout goes through a file (no pipe a daemon could inherit).
func run(_ path: String, _ args: [String], environment extra: [String: String] = [:],
         removing: [String] = []) throws -> (status: Int32, output: Data) {
    let out = FileManager.default.temporaryDirectory.appendingPathComponent("ss-pg-out-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: out) }
    let handle = try FileHandle(forWritingTo: out)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = args
    var env = ProcessInfo.processInfo.environment
    for (k, v) in extra { env[k] = v }
    for k in removing { env[k] = nil }
    process.environment = env
    process.standardOutput = handle
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try handle.close()
    return (process.terminationStatus, (try? Data(contentsOf: out)) ?? Data())
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
    let process = Process()
    let out: URL
    let handle: FileHandle

    init(_ arguments: [String], environment extra: [String: String] = [:], removing: [String] = []) throws {
        out = FileManager.default.temporaryDirectory.appendingPathComponent("ss-pg-worker-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        handle = try FileHandle(forWritingTo: out)
        process.executableURL = URL(fileURLWithPath: try builtExecutable("securestore-postgres-worker"))
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in extra { env[k] = v }
        for k in removing { env[k] = nil }
        process.environment = env
        process.standardOutput = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits for the process to end; returns its output lines.
    func finish() -> [String] {
        process.waitUntilExit()
        try? handle.close()
        let data = (try? Data(contentsOf: out)) ?? Data()
        try? FileManager.default.removeItem(at: out)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
