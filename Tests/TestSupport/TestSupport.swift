// Helpers shared by the test targets and the test-only worker executables: built products, child processes
// (posix_spawn, bounded waits) and small value helpers.
public import Foundation
public import SecureStoreCore
#if canImport(Glibc)
public import Glibc
#endif

/// The package's root folder (this file is Tests/TestSupport/TestSupport.swift).
public let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The path of an executable of this package built next to the test bundle (or in .build/debug), or nil.
public func builtExecutablePath(_ name: String) -> String? {
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
    return nil
}

/// The path of a built executable of this package; throws, saying how to build it, when there is none.
public func builtExecutable(_ name: String) throws(SecureStoreError) -> String {
    guard let path = builtExecutablePath(name) else {
        throw SecureStoreError(.notAvailable, "\(name) is not built; run `swift build --build-tests` first")
    }
    return path
}

/// Starts `path` with posix_spawn (not Foundation's `Process`, whose exit monitoring can hang when a daemon
/// started below inherits its descriptors): stdin from /dev/null, stdout to `stdout` (a file) or /dev/null.
public func spawn(_ path: String, _ args: [String], environment: [String: String], stdout: String?) -> pid_t? {
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
public func reap(_ pid: pid_t, timeout: Duration = .seconds(300)) -> Int32 {
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

/// 32 random bytes (a raw store key).
public func randomKey() -> Data { Data((0..<32).map { _ in UInt8.random(in: 0...255) }) }

public func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

/// Makes a child that stops reading its standard input (a refusal, a size limit, a crash) an error of the write
/// that feeds it, never the death of the whole test process: every test target runs in one process, so one
/// test's `SIGPIPE` would end them all. Idempotent; called by every helper that writes to a child.
public func ignoreBrokenPipes() {
    signal(SIGPIPE, SIG_IGN)
}

/// Writes `data` to a child's standard input and closes it; a child that exits without reading it all is the
/// child's business (its status and output are what a test checks).
public func feed(_ data: Data, to input: Pipe) {
    ignoreBrokenPipes()
    try? input.fileHandleForWriting.write(contentsOf: data)
    try? input.fileHandleForWriting.close()
}

/// The error `body` throws, or nil.
public func failure(_ body: () throws(SecureStoreError) -> Void) -> SecureStoreError? {
    do throws(SecureStoreError) {
        try body()
        return nil
    } catch {
        return error
    }
}

/// The attributes of a generic password with this service and account, plus `extra`.
public func generic(_ service: String, _ account: String, _ extra: [AttributeName: AttributeValue] = [:])
    -> [AttributeName: AttributeValue]
{
    var a: [AttributeName: AttributeValue] = [.service: .string(service), .account: .string(account)]
    for (k, v) in extra { a[k] = v }
    return a
}

/// Whether this process (and so the tools built with it) runs under AddressSanitizer or ThreadSanitizer
/// (`scripts/sanitize.sh`). The few tests whose property the sanitizer's runtime itself gets in the way of skip
/// with the reason printed; the plain run checks them.
public let underSanitizer: Bool = underThreadSanitizer || processDefines("__asan_init")

/// Whether this process runs under ThreadSanitizer (a subset of ``underSanitizer``).
public let underThreadSanitizer: Bool = processDefines("__tsan_init")

private func processDefines(_ symbol: String) -> Bool {
    let me = dlopen(nil, RTLD_NOW)
    defer { if let me { dlclose(me) } }
    return dlsym(me, symbol) != nil
}
