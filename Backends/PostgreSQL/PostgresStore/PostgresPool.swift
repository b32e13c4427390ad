import SecureStoreCore
import Foundation
import SecureStorePaths

/// The connections of one ``PostgresBackend``: at most `size` open, idle ones reused by the next caller, a
/// caller beyond `size` waiting for one to come back. Connections are opened outside the lock.
final class Pool: @unchecked Sendable {   // every field is used under `condition`
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var opened = 0
    private let size: Int
    /// The host (index in the URL's list) the last connection reached: the next one tries it first.
    private var preferred: Int?
    /// The host last remembered as accepting writes.
    private var writer: Int?

    init(size: Int, preferred: Int?) {
        self.size = size
        self.preferred = preferred
        self.writer = preferred
    }

    /// An idle open connection (one the server has closed meanwhile is dropped here), else a new one from `connect` (given the host to try first) while fewer
    /// than `size` are open, else the next one checked in.
    ///
    /// - Parameter probe: check an idle connection for a session the server ended (``PostgresConnection/stillConnected()``,
    ///   one `poll` without waiting) — for writers, whose first round trip may carry COMMIT; a reader whose
    ///   first statement finds the connection broken is simply run again on a new one.
    func checkout(probe: Bool = true, _ connect: (Int?) throws(SecureStoreError) -> PostgresConnection)
        throws(SecureStoreError) -> PostgresConnection
    {
        condition.lock()
        while true {
            while let connection = idle.popLast() {
                if probe ? connection.stillConnected() : connection.isOpen {
                    condition.unlock()
                    return connection
                }
                opened -= 1
            }
            if opened < size { break }
            condition.wait()
        }
        opened += 1
        let first = preferred
        condition.unlock()
        do throws(SecureStoreError) {
            let connection = try connect(first)
            condition.lock()
            preferred = connection.hostIndex
            condition.unlock()
            return connection
        } catch {
            condition.lock()
            opened -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    /// Returns a connection for reuse, or (nil) gives up its slot because it was dropped.
    func checkin(_ connection: PostgresConnection?) {
        condition.lock()
        if let connection { idle.append(connection) } else { opened -= 1 }
        condition.signal()
        condition.unlock()
    }

    /// Round trips made so far by the idle connections (tests: with every connection back, a call's count).
    var idleRoundTrips: Int {
        condition.lock()
        defer { condition.unlock() }
        return idle.reduce(0) { $0 + $1.roundTrips }
    }

    /// Records that host `index` accepted a writable session; true when that is news.
    func noteWriter(_ index: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard writer != index else { return false }
        writer = index
        return true
    }
}

/// The host of a multi-host URL that last accepted a writable session, kept per URL in
/// `$XDG_RUNTIME_DIR/securestore/postgres-host-HASH` (a folder 0700 and a file 0600 of this user, checked on
/// every read), so that a process per call (the CLI) tries it first instead of waiting out a dead first host.
/// HASH is FNV-1a-64 of the URL (which holds no password). Only a hint: any problem reading or writing it is
/// ignored and the URL's order applies.
struct HostMemory: Sendable {
    let folder: String
    let path: String

    init?(url: String) {
        guard let runtime = XDG.runtimeFolder() else { return nil }
        folder = runtime
        path = folder + "/postgres-host-" + String(FNV1a.hash(url.utf8), radix: 16)
    }

    /// The remembered host index, if the file is this user's, private, and names a host of `count`.
    func recall(_ count: Int) -> Int? {
        guard Self.isPrivate(folder, directory: true) else { return nil }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid(),
              info.st_mode & 0o077 == 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        let fields = String(decoding: buffer[0..<n], as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let index = Int(fields[0]), let total = Int(fields[1]), total == count,
              (0..<count).contains(index) else { return nil }
        return index
    }

    /// Stores `index` (of `count` hosts), replacing the file atomically.
    func remember(_ index: Int, of count: Int) {
        if mkdir(folder, 0o700) != 0, errno != EEXIST { return }
        guard Self.isPrivate(folder, directory: true) else { return }
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array("\(index) \(count)\n".utf8)
        let written = write(fd, bytes, bytes.count)
        close(fd)
        if written != bytes.count || rename(temporary, path) != 0 { unlink(temporary) }
    }

    private static func isPrivate(_ path: String, directory: Bool) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else { return false }
        return (info.st_mode & S_IFMT) == (directory ? S_IFDIR : S_IFREG)
    }
}
