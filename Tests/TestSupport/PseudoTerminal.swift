// A program run on a pseudo-terminal of its own, as in a terminal window: the test reads its screen, types
// keys at it and looks at the terminal's settings afterwards. Every wait is bounded.
public import Foundation
public import SecureStoreCore
#if canImport(Glibc)
public import Glibc
#endif

public final class PseudoTerminal {
    /// The program's process.
    public let pid: pid_t
    /// The terminal device (`/dev/pts/N`).
    public let device: String
    private let master: Int32
    /// Everything the program (and the terminal's echo) put on the screen so far.
    public private(set) var screen = Data()
    private var status: Int32?

    /// The screen as text.
    public var text: String { String(decoding: screen, as: UTF8.self) }

    /// Starts `path` with `args` in a new session whose controlling terminal is a new pseudo-terminal
    /// (stdin, stdout and stderr all on it).
    public init(_ path: String, _ args: [String], environment: [String: String]) throws(SecureStoreError) {
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw SecureStoreError(.notAvailable, "No pseudo-terminals here (/dev/ptmx).") }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        // TIOCSPTLCK (unlock the pair), TIOCGPTN (its number).
        guard ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            close(master)
            throw SecureStoreError(.notAvailable, "Cannot set up a pseudo-terminal.")
        }
        device = "/dev/pts/\(number)"
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (glibc, 0x80): a new session, so opening the terminal makes it the controlling one.
        // SETSIGMASK (0x08) and SETSIGDEF (0x04): the keyboard's signals unblocked and at their default action,
        // as in a shell (a test runner may block or ignore them, and both are inherited).
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP, SIGPIPE] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, 0x80 | 0x08 | 0x04)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, device, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        let words = [path] + args
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var child: pid_t = 0
        guard posix_spawn(&child, path, &actions, &attributes, argv, envp) == 0 else {
            close(master)
            throw SecureStoreError(.notAvailable, "Cannot start \(path) on a pseudo-terminal.")
        }
        pid = child
    }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            var s: Int32 = 0
            _ = waitpid(pid, &s, 0)
        }
        close(master)
    }

    /// Types `keys` (as a person at the keyboard: "\n" is Enter, "\u{03}" is Ctrl-C).
    public func type(_ keys: String) {
        let bytes = Array(keys.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { b -> Int in
                guard let base = b.baseAddress else { return -1 }
                return write(master, base + offset, b.count - offset)
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }

    /// Reads the screen until it shows `text` after `offset` bytes (default: anywhere), or `timeout` passes.
    @discardableResult
    public func waitFor(_ text: String, after offset: Int = 0, timeout: Duration = .seconds(20)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        let needle = Data(text.utf8)
        while true {
            if screen.count >= offset, screen[(screen.startIndex + offset)...].range(of: needle) != nil { return true }
            guard ContinuousClock.now < deadline, readSome(upTo: deadline) else { return false }
        }
    }

    /// Waits (at most `timeout`, then kills it) for the program to end, reading its screen meanwhile.
    /// The exit status, or nil when a signal ended it (``signal`` then says which).
    public func wait(timeout: Duration = .seconds(20)) -> (exit: Int32?, signal: Int32?) {
        let deadline = ContinuousClock.now + timeout
        while status == nil {
            var s: Int32 = 0
            let r = waitpid(pid, &s, WNOHANG)
            if r == pid {
                status = s
                break
            }
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &s, 0)
                status = s
                break
            }
            if !readSome(upTo: min(deadline, ContinuousClock.now + .milliseconds(50))) { usleep(5_000) }
        }
        while readSome(upTo: ContinuousClock.now + .milliseconds(20)) {}   // what is left on the screen
        let s = status ?? 0
        return (s & 0x7f) == 0 ? ((s >> 8) & 0xff, nil) : (nil, s & 0x7f)
    }

    /// Whether the terminal echoes typed keys now (its ECHO flag).
    public var echoes: Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }

    /// What `stty -a` says about this terminal.
    public func sttyAll() -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("stty-\(UUID().uuidString)").path
        defer { unlink(out) }
        guard let stty = ["/usr/bin/stty", "/bin/stty"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
              let child = spawn(stty, ["-F", device, "-a"], environment: [:], stdout: out),
              reap(child, timeout: .seconds(30)) == 0
        else { return "" }
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }

    /// Reads what is there (waiting until `deadline` for something); false when nothing came.
    private func readSome(upTo deadline: ContinuousClock.Instant) -> Bool {
        let left = deadline - ContinuousClock.now
        let ms = max(0, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
        var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, ms) == 1, p.revents & Int16(POLLIN) != 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(master, &buffer, buffer.count)
        guard n > 0 else { return false }
        screen.append(contentsOf: buffer[0..<n])
        return true
    }
}
