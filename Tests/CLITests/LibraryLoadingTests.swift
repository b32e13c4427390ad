import Foundation
import Testing
import TestSupport

/// The tool maps a backend's C library only when that backend is used: a SQLite `get`, `--help` or
/// `completions` never loads libpq or libsecret (with GLib and GIO), which cost milliseconds at every start.
/// Watched through the dynamic loader's own log (`LD_DEBUG=files`), which names every library loaded at
/// start and by `dlopen` later; the PostgreSQL and Secret Service runs show the log sees a backend's library.
@Suite("securestore loads a backend's C library only for that backend")
struct LibraryLoadingTests {
    static let backendLibraries = ["libpq.so", "libsecret-1.so", "libglib-2.0.so", "libgio-2.0.so", "libgobject-2.0.so"]

    /// Runs the tool with the loader's log on; the names of the libraries it loaded.
    static func loaded(_ tool: Tool, _ args: [String], extra: [String: String] = [:]) throws -> (status: Int32, files: [String]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-ld-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var environment = tool.environment
        environment["LD_DEBUG"] = "files"
        environment["LD_DEBUG_OUTPUT"] = dir.appendingPathComponent("ld").path
        for (k, v) in extra { environment[k] = v }
        let outcome = try Tool(environment: environment).run(args, stdin: Data("secret".utf8))
        var files: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            let log = try String(contentsOfFile: dir.appendingPathComponent(name).path, encoding: .utf8)
            for line in log.split(separator: "\n") {
                guard let range = line.range(of: "file=") else { continue }
                files.append(String(line[range.upperBound...].prefix { $0 != " " && $0 != "\t" }))
            }
        }
        return (outcome.status, files)
    }

    static func backendLibraries(in files: [String]) -> [String] {
        files.filter { file in backendLibraries.contains { file.hasPrefix($0) } }
    }

    @Test("add, get, --help and completions on SQLite load neither libpq nor libsecret, GLib or GIO")
    func sqliteLoadsNoBackendLibrary() throws {
        let tool = try Tool.sqlite()
        let add = try Self.loaded(tool, ["add", "--service", "s", "--account", "a"])
        #expect(add.status == 0)
        #expect(!add.files.isEmpty, "the loader's log is read (it names the C library at least)")
        #expect(Self.backendLibraries(in: add.files) == [])
        for args in [["get", "--service", "s", "--account", "a"], ["--help"], ["completions", "bash"]] {
            let run = try Self.loaded(tool, args)
            #expect(run.status == 0, "\(args)")
            #expect(Self.backendLibraries(in: run.files) == [], "\(args)")
        }
    }

    @Test("choosing postgres loads libpq, choosing secret-service loads libsecret (the log sees them)")
    func backendsLoadTheirLibrary() throws {
        let postgres = try Tool.configured { dir in
            #"{"backend": "postgres", "postgres": {"url": "postgresql://127.0.0.1:1/none?connect_timeout=2", "keyFile": "\#(dir)/pg.key"}}"#
        }
        let pq = try Self.loaded(postgres, ["get", "--service", "s"])
        #expect(pq.status == 6, "no server on port 1: unavailable")
        #expect(pq.files.contains { $0.hasPrefix("libpq.so") })
        #expect(!pq.files.contains { $0.hasPrefix("libsecret-1.so") })

        let secretService = try Tool.configured { _ in #"{"backend": "secret-service"}"# }
        let secret = try Self.loaded(secretService, ["get", "--service", "s"],
                                     extra: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/securestore-test-bus"])
        #expect(secret.status == 6, "no session bus: unavailable")
        #expect(secret.files.contains { $0.hasPrefix("libsecret-1.so") })
        #expect(!secret.files.contains { $0.hasPrefix("libpq.so") })
    }
}
