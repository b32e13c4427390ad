import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// How a child's standard stream is set up by ``Tool/spawn``.
enum Stream {
    /// A pipe: for stdin, `input` is written and the pipe closed; for stdout/stderr, everything is captured.
    case pipe
    /// Not open at all in the child (`<&-`).
    case closed
    /// A file opened with these flags (`/dev/full`, `/dev/null`).
    case file(String, Int32)
    /// A pipe whose read end is already closed (a reader that went away: `| head -c0`).
    case brokenPipe
}

struct RawOutcome {
    let status: Int32
    let stdout: Data
    let stderr: Data
    var errorText: String { String(decoding: stderr, as: UTF8.self) }
    var outputText: String { String(decoding: stdout, as: UTF8.self) }
}

extension Tool {
    /// Runs the tool with raw argument bytes and the given standard streams (posix_spawn), within 60 s.
    func spawn(_ args: [[UInt8]], input: Data = Data(), stdin: Stream = .pipe, stdout: Stream = .pipe,
               stderr: Stream = .pipe) throws -> RawOutcome {
        ignoreBrokenPipes()   // this process writes to pipes whose readers may be gone
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32: Int32] = [:]   // child fd → the parent's end of its pipe
        var childEnds: [Int32] = []
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .pipe, .brokenPipe:
                let p = try makePipe()
                let (childEnd, parentEnd) = fd == 0 ? (p[0], p[1]) : (p[1], p[0])
                posix_spawn_file_actions_adddup2(&actions, childEnd, fd)
                childEnds.append(childEnd)
                if case .brokenPipe = stream { close(parentEnd) } else { parentEnds[fd] = parentEnd }
            case .closed:
                posix_spawn_file_actions_addclose(&actions, fd)
            case .file(let path, let flags):
                posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0o600)
            }
        }
        let path = try Tool.path()
        let argv: [UnsafeMutablePointer<CChar>?] = ([Array(path.utf8)] + args).map { bytes in
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (i, b) in bytes.enumerated() { p[i] = CChar(bitPattern: b) }
            p[bytes.count] = 0
            return p
        } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        for fd in childEnds { close(fd) }
        guard spawned == 0 else { throw Tool.ToolError(message: "posix_spawn failed: \(spawned)") }
        // Feed stdin and drain stdout/stderr together (poll), so neither side can block the other.
        var pending = input
        var captured: [Int32: Data] = [1: Data(), 2: Data()]
        if let w = parentEnds[0] { _ = fcntl(w, F_SETFL, fcntl(w, F_GETFL) | O_NONBLOCK) }
        if parentEnds[0] != nil, pending.isEmpty, let w = parentEnds.removeValue(forKey: 0) { close(w) }
        let deadline = ContinuousClock.now + .seconds(60)
        while !parentEnds.isEmpty, ContinuousClock.now < deadline {
            var fds = parentEnds.map { pollfd(fd: $0.value, events: Int16($0.key == 0 ? POLLOUT : POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 100)
            for p in fds where p.revents != 0 {
                guard let (childFD, _) = parentEnds.first(where: { $0.value == p.fd }) else { continue }
                if childFD == 0 {
                    let n = pending.withUnsafeBytes { write(p.fd, $0.baseAddress, min($0.count, 65536)) }
                    if n > 0 { pending.removeFirst(n) }
                    if n < 0 && errno != EAGAIN && errno != EINTR || pending.isEmpty {
                        close(p.fd)
                        parentEnds[0] = nil
                    }
                } else {
                    var buffer = [UInt8](repeating: 0, count: 65536)
                    let n = read(p.fd, &buffer, buffer.count)
                    if n > 0 {
                        captured[childFD]?.append(contentsOf: buffer[0..<n])
                    } else if n == 0 || errno != EINTR {
                        close(p.fd)
                        parentEnds[childFD] = nil
                    }
                }
            }
        }
        for fd in parentEnds.values { close(fd) }
        let status = reap(pid, timeout: .seconds(30))
        return RawOutcome(status: status, stdout: captured[1] ?? Data(), stderr: captured[2] ?? Data())
    }

    func spawn(_ args: [String], input: Data = Data(), stdin: Stream = .pipe, stdout: Stream = .pipe,
               stderr: Stream = .pipe) throws -> RawOutcome {
        try spawn(args.map { Array($0.utf8) }, input: input, stdin: stdin, stdout: stdout, stderr: stderr)
    }

    /// The items of the store as `find --json` sees them (empty when there are none).
    func items() throws -> [[String: Any]] {
        let out = try run(["find", "--json"])
        if out.status == 1 { return [] }
        return try JSONSerialization.jsonObject(with: out.stdout) as? [[String: Any]] ?? []
    }
}

/// A pipe whose two ends are closed on exec (the spawn dup2s the child's end).
func makePipe() throws -> [Int32] {
    var p: [Int32] = [0, 0]
    guard pipe(&p) == 0 else { throw Tool.ToolError(message: "pipe failed") }
    for fd in p { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return p
}

let devFull = Stream.file("/dev/full", O_WRONLY)
let devNull = Stream.file("/dev/null", O_WRONLY)

@Suite("securestore CLI: arguments are parsed strictly")
struct CLIArgumentTests {
    @Test("-h and --help given as option values are values: add stores account -h, get reads service --help, delete deletes it")
    func helpAsValue() throws {
        let tool = try Tool.sqlite()
        let added = try tool.run(["add", "--service", "s", "--account", "-h"], stdin: Data("pw".utf8))
        #expect(added.status == 0 && added.stdout.isEmpty, "\(added.stderr)")
        let items = try tool.items()
        #expect(items.count == 1 && items.first?["account"] as? String == "-h")
        #expect(try tool.run(["get", "--service", "s", "--account", "-h"]).stdout == Data("pw".utf8))
        #expect(try tool.run(["add", "--service", "--help", "--account", "x"], stdin: Data("second".utf8)).status == 0)
        let got = try tool.run(["get", "--service", "--help", "--account", "x"])
        #expect(got.status == 0 && got.stdout == Data("second".utf8), "the secret, never the help text")
        let deleted = try tool.run(["delete", "--service", "--help", "--account", "x"])
        #expect(deleted.status == 0 && String(decoding: deleted.stdout, as: UTF8.self) == "deleted 1 item(s)\n")
        #expect(try tool.items().count == 1)
        // Where an option is expected, -h and --help still ask for help.
        for args in [["get", "--service", "s", "-h"], ["add", "--help"], ["-h"], ["--help"], ["delete", "--all", "--help"]] {
            let help = try tool.run(args)
            #expect(help.status == 0 && String(decoding: help.stdout, as: UTF8.self).hasPrefix("usage: securestore"), "\(args)")
        }
        #expect(try tool.items().count == 1, "help never runs the command")
    }

    @Test("--name=value, -- and --version")
    func syntax() throws {
        let tool = try Tool.sqlite()
        #expect(try tool.run(["add", "--service=a=b", "--account=", "--label=--x"], stdin: Data("v".utf8)).status == 0)
        let items = try tool.items()
        #expect(items.first?["service"] as? String == "a=b" && items.first?["account"] as? String == ""
            && items.first?["label"] as? String == "--x")
        #expect(try tool.run(["get", "--service", "a=b", "--account="]).stdout == Data("v".utf8))
        let config = tool.environment["SECURESTORE_CONFIG"] ?? ""
        #expect(try tool.run(["--config=\(config)", "--", "get", "--service=a=b", "--"]).stdout == Data("v".utf8))
        let extra = try tool.run(["get", "--service", "a=b", "--", "stray"])
        #expect(extra.status == 2 && extra.stderr.contains("\"stray\""))
        #expect(try tool.run(["get", "stray"]).status == 2)
        #expect(try tool.run(["find", "--json=yes"]).status == 2, "a flag takes no value")
        #expect(try tool.run(["get", "--service"]).status == 2, "a missing value")
        let version = try tool.run(["--version"])
        #expect(version.status == 0 && String(decoding: version.stdout, as: UTF8.self).hasPrefix("securestore "))
        #expect(try tool.run(["get", "--version"]).status == 2, "--version is a global option")
        let unknown = try tool.run(["get", "--servce", "x"])
        #expect(unknown.status == 2 && unknown.stderr.contains("did you mean --service?"))
        let command = try tool.run(["gte"])
        #expect(command.status == 2 && command.stderr.contains("did you mean get?"))
        let misplaced = try tool.run(["add", "--config", config])
        #expect(misplaced.status == 2 && misplaced.stderr.contains("before the command"))
        #expect(try tool.run([]).status == 2)
    }

    @Test("a repeated or contradictory option is a usage error and changes nothing")
    func repeatedAndContradictory() throws {
        let tool = try Tool.sqlite()
        let cases: [[String]] = [
            ["add", "--service", "a", "--service", "b"],
            ["add", "--service", "a", "--attr", "service=b"],
            ["add", "--service", "a", "--attr", "svce=a"],
            ["add", "--attr", "comment=a", "--attr", "icmt=b"],
            ["add", "--class", "generic", "--class", "internet"],
            ["add", "--service", "a", "--update-existing", "--update-existing"],
            ["--backend", "sqlite", "--backend", "memory", "add", "--service", "a"],
        ]
        for args in cases {
            let out = try tool.run(args, stdin: Data("x".utf8))
            #expect(out.status == 2 && out.stderr.contains("twice"), "\(args): \(out.status) \(out.stderr)")
        }
        #expect(try tool.items().isEmpty, "nothing was stored")
        #expect(try tool.run(["add", "--service", "a"], stdin: Data("x".utf8)).status == 0)
        for args in [["update", "--service", "a", "--set-label", "L", "--set-attr", "label=M"],
                     ["update", "--service", "a", "--set-service", "b", "--set-attr", "svce=c"],
                     ["clear", "--yes", "--class", "generic", "--class", "genp"],
                     ["rekey", "--new-key-file", "k", "--new-passphrase-env", "P"],
                     ["export", "--output", "a", "--output", "b"]] {
            let out = try tool.run(args)
            #expect(out.status == 2, "\(args): \(out.stderr)")
        }
        #expect(try tool.items().count == 1, "nothing changed")
        #expect(try tool.items().first?["label"] == nil)
    }

    @Test("--port and port attributes must be 0…65535")
    func portRange() throws {
        let tool = try Tool.sqlite()
        for port in ["-1", "70000", "65536", "x", "1e3", " 80", "99999999999999999999"] {
            let out = try tool.run(["add", "--class", "internet", "--server", "h\(port)", "--port", port], stdin: Data("x".utf8))
            #expect(out.status == 2 && out.stderr.contains("0 to 65535"), "port \(port): \(out.stderr)")
            let attr = try tool.run(["add", "--class", "internet", "--server", "h", "--attr", "port=\(port)"], stdin: Data("x".utf8))
            #expect(attr.status == 2, "port=\(port)")
        }
        #expect(try tool.items().isEmpty)
        for port in ["0", "65535"] {
            #expect(try tool.run(["add", "--class", "internet", "--server", "h\(port)", "--port", port], stdin: Data("x".utf8)).status == 0)
        }
        let ports = try tool.items().compactMap { $0["port"] as? Int }.sorted()
        #expect(ports == [0, 65535])
        #expect(try tool.run(["update", "--class", "internet", "--server", "h0", "--set-attr", "port=65536"]).status == 2)
    }

    @Test("a bare delete (or update) needs --all; --all with attributes is an error")
    func deleteNeedsAll() throws {
        let tool = try Tool.sqlite()
        for i in 0..<3 { #expect(try tool.run(["add", "--service", "s\(i)"], stdin: Data("x".utf8)).status == 0) }
        #expect(try tool.run(["add", "--class", "internet", "--server", "h"], stdin: Data("x".utf8)).status == 0)
        for args in [["delete"], ["delete", "--class", "internet"], ["delete", "--all", "--service", "s0"],
                     ["update", "--set-label", "L"], ["update", "--all", "--service", "s0", "--set-label", "L"]] {
            let out = try tool.run(args)
            #expect(out.status == 2, "\(args)")
            #expect(args.contains("--all") || out.stderr.contains("--all"), "the message names --all: \(out.stderr)")
        }
        #expect(try tool.items().count == 4, "nothing was deleted or changed")
        #expect(try tool.items().allSatisfy { $0["label"] == nil })
        #expect(String(decoding: try tool.run(["update", "--all", "--set-label", "L"]).stdout, as: UTF8.self) == "updated 3 item(s)\n")
        #expect(String(decoding: try tool.run(["delete", "--all"]).stdout, as: UTF8.self) == "deleted 3 item(s)\n")
        #expect(try tool.items().count == 1, "only generic passwords: the class's default")
        #expect(String(decoding: try tool.run(["delete", "--class", "internet", "--all"]).stdout, as: UTF8.self) == "deleted 1 item(s)\n")
    }

    @Test("arguments that are not UTF-8 are a usage error naming the option; \\xff and \\xfe never collide")
    func invalidUTF8() throws {
        let tool = try Tool.sqlite()
        let bad: [[UInt8]] = [[0xFF], [0xFE], [0xC0], [0xC0, 0x80], [0x61, 0xED, 0xA0, 0x80]]
        for bytes in bad {
            let add = try tool.spawn([Array("add".utf8), Array("--service".utf8), bytes], input: Data("x".utf8))
            #expect(add.status == 2 && add.errorText.contains("--service") && add.errorText.contains("UTF-8"), "\(bytes): \(add.errorText)")
            let inline = try tool.spawn([Array("add".utf8), Array("--account=".utf8) + bytes], input: Data("x".utf8))
            #expect(inline.status == 2 && inline.errorText.contains("--account"), "\(bytes)")
            let attr = try tool.spawn([Array("add".utf8), Array("--attr".utf8), Array("comment=".utf8) + bytes], input: Data("x".utf8))
            #expect(attr.status == 2 && attr.errorText.contains("--attr"))
        }
        #expect(try tool.items().isEmpty, "nothing stored under a replacement character")
        #expect(try tool.run(["add", "--service", "\u{FFFD}"], stdin: Data("real".utf8)).status == 0)
        let delete = try tool.spawn([Array("delete".utf8), Array("--service".utf8), [0xC0]])
        #expect(delete.status == 2)
        #expect(try tool.items().count == 1, "the U+FFFD item is not deleted by \\xc0")
        #expect(try tool.spawn([[0xFF]]).status == 2, "a command name that is not UTF-8")
        #expect(try tool.spawn([Array("--config".utf8), [0xFF], Array("find".utf8)]).status == 2)
    }
}

@Suite("securestore CLI: every read and write of the standard streams is checked")
struct CLIStreamTests {
    @Test("get >/dev/full, find >/dev/full and --help >/dev/full exit 74 with a message, never a trap")
    func fullStandardOutput() throws {
        let tool = try Tool.sqlite()
        #expect(try tool.run(["add", "--service", "s"], stdin: Data("secret".utf8)).status == 0)
        for args in [["get", "--service", "s"], ["find"], ["find", "--json"], ["--help"], ["backends"], ["--version"]] {
            let out = try tool.spawn(args, stdout: devFull)
            #expect(out.status == 74, "\(args): \(out.status)")
            #expect(out.errorText.contains("cannot write to standard output") && out.errorText.contains("ENOSPC"), "\(out.errorText)")
        }
        // stdout closed (>&-): the same, and nothing is written anywhere else.
        let closed = try tool.spawn(["get", "--service", "s"], stdout: .closed)
        #expect(closed.status == 74 && closed.errorText.contains("closed"))
    }

    @Test("a reader that went away (get | head -c0) is EPIPE: exit 74, no signal death")
    func brokenPipe() throws {
        let tool = try Tool.sqlite()
        let big = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) })
        #expect(try tool.run(["add", "--service", "big"], stdin: big).status == 0)
        let out = try tool.spawn(["get", "--service", "big"], stdout: .brokenPipe)
        #expect(out.status == 74 && out.errorText.contains("EPIPE"), "\(out.status) \(out.errorText)")
        // A command that changed the store: committed, so 0, and the lost report is said on stderr.
        #expect(try tool.run(["add", "--service", "gone"], stdin: Data("x".utf8)).status == 0)
        let delete = try tool.spawn(["delete", "--service", "gone"], stdout: .brokenPipe)
        #expect(delete.status == 0 && delete.errorText.contains("the change was made"), "\(delete.errorText)")
        #expect(try tool.run(["get", "--service", "gone"]).status == 1, "it was deleted")
    }

    @Test("2>/dev/full: add --update-existing still commits and exits 0; errors keep their exit code silently")
    func fullStandardError() throws {
        let tool = try Tool.sqlite()
        #expect(try tool.run(["add", "--service", "s", "--account", "a"], stdin: Data("v1".utf8)).status == 0)
        let updated = try tool.spawn(["add", "--service", "s", "--account", "a", "--update-existing"], input: Data("v2".utf8), stderr: devFull)
        #expect(updated.status == 0, "committed: the note on stderr is informative")
        #expect(try tool.run(["get", "--service", "s", "--account", "a"]).stdout == Data("v2".utf8))
        #expect(try tool.spawn(["get", "--service", "nope"], stderr: devFull).status == 1)
        #expect(try tool.spawn(["get", "--service", "s", "--service", "t"], stderr: devFull).status == 2)
        #expect(try tool.spawn(["add", "--service", "s", "--account", "a"], input: Data("v3".utf8), stderr: devFull).status == 3)
        let got = try tool.spawn(["get", "--service", "s"], stderr: devFull)
        #expect(got.status == 0 && got.stdout == Data("v2".utf8))
        // Both output streams unwritable: the status alone tells.
        #expect(try tool.spawn(["get", "--service", "s"], stdout: devFull, stderr: devFull).status == 74)
        #expect(try tool.spawn(["get", "--service", "s"], stdout: .closed, stderr: .closed).status == 74)
    }

    @Test("add <&- (stdin closed) exits 74 and stores nothing; the store never takes descriptor 0")
    func closedStandardInput() throws {
        let tool = try Tool.sqlite()
        let out = try tool.spawn(["add", "--service", "s"], stdin: .closed)
        #expect(out.status == 74 && out.errorText.contains("standard input"), "\(out.status) \(out.errorText)")
        #expect(try tool.spawn(["update", "--all", "--data-stdin"], stdin: .closed).status == 74)
        #expect(try tool.items().isEmpty)
        // With every standard stream closed, a command that needs none of them still works on the store
        // (the store's files never land on 0, 1 or 2).
        #expect(try tool.run(["add", "--service", "kept"], stdin: Data("k".utf8)).status == 0)
        #expect(try tool.spawn(["delete", "--service", "kept"], stdin: .closed, stdout: .closed, stderr: .closed).status == 0)
        #expect(try tool.items().isEmpty)
    }

    @Test("a full disk under the store with stderr on it too (a file-size limit stands in: no mount): exit 70, silent, nothing lost",
          .disabled(if: underSanitizer,
                    "ThreadSanitizer's runtime dies with SIGBUS on SQLite's shared-memory map once the file-size limit is reached; the plain run checks this"))
    func fullDiskUnderStoreAndStandardError() throws {
        let tool = try Tool.sqlite()
        for i in 0..<3 { #expect(try tool.run(["add", "--service", "s\(i)"], stdin: Data("v\(i)".utf8)).status == 0) }
        let dir = URL(fileURLWithPath: tool.databasePath ?? "/").deletingLastPathComponent().path
        let secret = dir + "/secret", errors = dir + "/errors.log", output = dir + "/output"
        try Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: secret))
        try Data(count: 300_000).write(to: URL(fileURLWithPath: errors))   // already past the limit
        // RLIMIT_FSIZE of 400 × 512 bytes: a write past it fails with EFBIG, as on a full disk.
        func limited(_ args: [String], stdin: String, stdout: String, stderr: String) throws -> Int32 {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_APPEND | O_CREAT, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_APPEND | O_CREAT, 0o600)
            let all = ["/bin/sh", "-c", "ulimit -f 400 && exec \"$@\"", "sh", try Tool.path()] + args
            let argv: [UnsafeMutablePointer<CChar>?] = all.map { strdup($0) } + [nil]
            let envp: [UnsafeMutablePointer<CChar>?] = tool.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for q in argv + envp { free(q) } }
            var pid: pid_t = 0
            guard posix_spawn(&pid, "/bin/sh", &actions, nil, argv, envp) == 0 else { throw Tool.ToolError(message: "spawn") }
            return reap(pid, timeout: .seconds(60))
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: errors))
        #expect(try limited(["add", "--service", "big"], stdin: secret, stdout: "/dev/null", stderr: errors) == 70)
        #expect(try Data(contentsOf: URL(fileURLWithPath: errors)) == before, "stderr could not be written: the status alone tells")
        let visible = try limited(["add", "--service", "big"], stdin: secret, stdout: "/dev/null", stderr: output)
        #expect(visible == 70)
        let message = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(message.hasPrefix("securestore: ") && message.contains("[io"), "\(message)")
        for i in 0..<3 { #expect(try tool.run(["get", "--service", "s\(i)"]).stdout == Data("v\(i)".utf8), "every earlier item readable") }
        #expect(try tool.run(["get", "--service", "big"]).status == 1, "nothing of the failed add")
        // The secret's output on the full file: 74.
        #expect(try tool.run(["add", "--service", "large"], stdin: Data(count: 300_000)).status == 0)
        #expect(try limited(["get", "--service", "large"], stdin: "/dev/null", stdout: errors, stderr: "/dev/null") == 74)
    }

    @Test("a 512 MiB stdin stops at the 1 MiB limit: exit 2 promptly, the rest never read, small RSS")
    func boundedStandardInput() throws {
        ignoreBrokenPipes()
        let tool = try Tool.sqlite()
        let p = try makePipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, p[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let path = try Tool.path()
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), strdup("add"), strdup("--service"), strdup("big"), nil]
        let envp: [UnsafeMutablePointer<CChar>?] = tool.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for q in argv + envp { free(q) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, path, &actions, nil, argv, envp) == 0)
        close(p[0])
        _ = fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK)
        let total = 512 << 20
        let chunk = [UInt8](repeating: 0x41, count: 65536)
        var accepted = 0
        var status: Int32 = 0
        var usage = rusage()
        var exited = false
        let deadline = ContinuousClock.now + .seconds(30)
        // The tool's own high-water RSS, read from /proc while it runs (wait4's ru_maxrss would also count this
        // big test process, whose memory the spawned child shared until its exec).
        var hwmKiB: [Int] = []
        func sampleHWM() {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                  let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            else { return }
            hwmKiB.append(kib)
        }
        while accepted < total, ContinuousClock.now < deadline {
            sampleHWM()
            let n = chunk.withUnsafeBytes { write(p[1], $0.baseAddress, min($0.count, total - accepted)) }
            if n > 0 { accepted += n; continue }
            if errno == EPIPE { break }
            if wait4(pid, &status, WNOHANG, &usage) == pid { exited = true; break }
            var fd = pollfd(fd: p[1], events: Int16(POLLOUT), revents: 0)
            _ = poll(&fd, 1, 50)
        }
        close(p[1])
        if !exited {
            let waitDeadline = ContinuousClock.now + .seconds(30)
            while wait4(pid, &status, WNOHANG, &usage) != pid {
                if ContinuousClock.now > waitDeadline { kill(pid, SIGKILL); _ = wait4(pid, &status, 0, &usage); break }
                usleep(10_000)
            }
        }
        let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
        #expect(exitCode == 2)
        // 1 MiB + 1 read by the tool, plus what the pipe buffers: far below 512 MiB.
        #expect(accepted < 8 << 20, "the writer got \(accepted) bytes in")
        let maxRSSKiB = hwmKiB.max() ?? -1
        print("[cli] 512 MiB stdin: \(accepted) bytes accepted before EPIPE, tool's max RSS \(maxRSSKiB) KiB "
              + "(\(hwmKiB.count) samples), exit \(exitCode)")
        #expect(!hwmKiB.isEmpty, "the tool's RSS was never sampled while it ran")
        #expect(maxRSSKiB < 64 << 10, "max RSS \(maxRSSKiB) KiB")
        #expect(try tool.items().isEmpty)
        // Exactly the limit is accepted.
        #expect(try tool.run(["add", "--service", "limit"], stdin: Data(count: 1 << 20)).status == 0)
        #expect(try tool.run(["add", "--service", "over"], stdin: Data(count: (1 << 20) + 1)).status == 2)
    }
}

@Suite("securestore CLI: output and process hardening")
struct CLIOutputTests {
    @Test("find's text output escapes quotes, backslashes and control characters: a label cannot forge a line")
    func findEscapes() throws {
        let tool = try Tool.sqlite()
        let forged = "x\"\ngenp service=\"forged\" label=\"y"
        let nasty = "a\\b\t\r\u{1B}[31m\u{7F}\u{85}\u{2028}\u{2029}\u{0}é"
        #expect(try tool.run(["add", "--service", "s1", "--label", forged], stdin: Data("x".utf8)).status == 0)
        #expect(try tool.run(["add", "--service", "s2", "--label", "plain", "--attr", "comment=\(nasty.replacingOccurrences(of: "\u{0}", with: ""))"],
                             stdin: Data("x".utf8)).status == 0)
        let out = try tool.run(["find"])
        let lines = String(decoding: out.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines.last == "", "two items, two lines: \(lines)")
        #expect(lines.filter { $0.hasPrefix("genp ") }.count == 2)
        #expect(!out.stdout.contains(0x1B) && !out.stdout.contains(0x0D) && !out.stdout.contains(0x7F))
        let text = String(decoding: out.stdout, as: UTF8.self)
        #expect(text.contains(#"label="x\"\ngenp service=\"forged\" label=\"y""#), "\(text)")
        #expect(text.contains(#"comment="a\\b\t\r\u001B[31m\u007F\u0085\u2028\u2029é""#), "\(text)")
    }

    @Test("the tool and both credential helpers are non-dumpable with no core limit: /proc shows it (a control process shows the opposite)")
    func nonDumpable() throws {
        // Run as an unprivileged user (via setpriv when the tests run as root) with the core limit raised
        // by the shell: the tool must lower it to 0 and clear its dumpable flag, which makes the kernel
        // show its /proc/PID files (status, environ, mem…) as owned by root. `sleep`, started the same way, shows the opposite.
        let asUser: [String]
        if getuid() == 0 {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
                Issue.record("running as root without /usr/bin/setpriv (util-linux): cannot observe the dumpable flag")
                return
            }
            asUser = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        } else {
            asUser = []
        }
        let tool = try Tool.path()
        func observe(_ program: [String]) throws -> (owner: uid_t, coreLimit: String, user: uid_t) {
            let p = try makePipe()
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, p[0], 0)   // stdin held open: `add` waits on it
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let script = "ulimit -S -c unlimited && exec \"$@\""
            let args = ["/bin/sh", "-c", script, "sh"] + asUser + program
            let argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
            let envp: [UnsafeMutablePointer<CChar>?] = ["PATH=/usr/bin:/bin", "HOME=/nonexistent"].map { (s: String) in strdup(s) } + [nil]
            defer { for q in argv + envp { free(q) } }
            var pid: pid_t = 0
            guard posix_spawn(&pid, "/bin/sh", &actions, nil, argv, envp) == 0 else { throw Tool.ToolError(message: "spawn") }
            close(p[0])
            defer {
                kill(pid, SIGKILL)
                close(p[1])
                _ = reap(pid, timeout: .seconds(10))
            }
            let name = String(URL(fileURLWithPath: program[0]).lastPathComponent.prefix(15))
            let deadline = ContinuousClock.now + .seconds(20)
            // Wait until the program runs (comm) and is blocked reading stdin (state S), hardened by then.
            while ContinuousClock.now < deadline {
                let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
                let state = stat.split(separator: ")").last?.split(separator: " ").first
                if comm == name, state == "S" { break }
                usleep(20_000)
            }
            let owner = try FileManager.default.attributesOfItem(atPath: "/proc/\(pid)/status")[.ownerAccountID] as? NSNumber
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
            let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2).joined(separator: " ") } ?? "?"
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let uidLine = status.split(separator: "\n").first { $0.hasPrefix("Uid:") } ?? ""
            let user = uid_t(uidLine.split(separator: "\t").dropFirst().first.flatMap { UInt32($0) } ?? 0)
            return (uid_t(owner?.uint32Value ?? UInt32.max), core, user)
        }
        let control = try observe(["/bin/sleep", "30"])
        #expect(control.user != 0 && control.owner == control.user, "a dumpable process owns its /proc files")
        #expect(control.coreLimit != "0 0", "the shell raised the core limit")
        // The tool, and the credential helpers built beside it, each waiting on standard input.
        let folder = URL(fileURLWithPath: tool).deletingLastPathComponent()
        for program in [[tool, "add", "--service", "dumpable-check"],
                        [folder.appendingPathComponent("git-credential-securestore").path, "get"],
                        [folder.appendingPathComponent("docker-credential-securestore").path, "get"]] {
            let hardened = try observe(program)
            let name = URL(fileURLWithPath: program[0]).lastPathComponent
            print("[cli] control: /proc owner \(control.owner), user \(control.user), core \(control.coreLimit); "
                  + "\(name): /proc owner \(hardened.owner), user \(hardened.user), core \(hardened.coreLimit)")
            #expect(hardened.user == control.user, "\(name)")
            #expect(hardened.owner == 0, "\(name) non-dumpable: the kernel shows /proc/PID/status as root's")
            #expect(hardened.coreLimit.hasPrefix("0 "), "\(name): core limit \(hardened.coreLimit)")
        }
    }

    @Test("messages: --config is named as the reason, and an internet password takes \"an\"")
    func messages() throws {
        let tool = try Tool.sqlite()
        let config = tool.environment["SECURESTORE_CONFIG"] ?? ""
        var env = tool.environment
        env["SECURESTORE_CONFIG"] = nil
        let explicit = Tool(environment: env)
        let backends = try explicit.run(["--config", config, "backends"])
        let text = String(decoding: backends.stdout, as: UTF8.self)
        #expect(text.contains("chosen by the config file \(config) (given with --config)"), "\(text)")
        #expect(!text.contains("chosen explicitly"))
        // A migrate clash on an internet password.
        #expect(try tool.run(["add", "--class", "internet", "--server", "h", "--account", "a"], stdin: Data("x".utf8)).status == 0)
        let target = try Tool.sqlite()
        let to = target.environment["SECURESTORE_CONFIG"] ?? ""
        #expect(try tool.run(["migrate", "--to", to]).status == 0)
        #expect(try tool.run(["update", "--class", "internet", "--server", "h", "--account", "a", "--data-stdin"],
                             stdin: Data("y".utf8)).status == 0)   // the copy now differs: a clash, not a resume
        let clash = try tool.run(["migrate", "--to", to])
        #expect(clash.status == 3 && clash.stderr.contains("already has an internet password"), "\(clash.stderr)")
        #expect(!clash.stderr.contains("a internet"))
    }
}
