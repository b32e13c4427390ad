import SecureStoreCore
import Foundation
#if canImport(Glibc)
import Glibc
import SecureStorePaths
#endif

/// Serializes the writers of one namespace of one collection across the processes of this machine: an
/// exclusive `flock` on a lock file, held for the whole writing transaction, so the core's check-then-create
/// (uniqueness) cannot race with another process's.
///
/// The lock file is `$XDG_RUNTIME_DIR/securestore/secret-service-HASH.lock` (HASH: of collection and
/// namespace), mode 0600, in a 0700 folder of this user. Without `XDG_RUNTIME_DIR` (no login session) it is
/// `/tmp/securestore-UID/` instead, a 0700 folder that must belong to this user. It does not cover writers
/// on other machines (the keyring is per machine anyway) or programs that write the keyring without this
/// lock (see MAPPING.md). The file also keeps the namespace's insertion sequence (``InsertionSequence``).
final class WriterLock: @unchecked Sendable {   // used only under the backend's mutex
    let path: String
    private var fd: Int32 = -1
    /// How long a writer waits for another process's transaction before giving up.
    static let wait: Duration = .seconds(10)

    init(collection: String, namespace: String) {
        // A collision only makes two stores share a lock.
        let hash = FNV1a.hash(Array(collection.utf8) + [0] + Array(namespace.utf8))
        path = Self.folder() + "/secret-service-" + String(hash, radix: 16) + ".lock"
    }

    deinit { if fd >= 0 { close(fd) } }

    /// The folder of lock files: `$XDG_RUNTIME_DIR/securestore`, else `/tmp/securestore-UID`.
    static func folder() -> String {
        if let runtime = XDG.runtimeFolder() { return runtime }
        return "/tmp/securestore-\(geteuid())"
    }

    /// Runs `body` holding the lock (waiting at most ``wait`` for it).
    func withLock<T>(_ body: () throws(SecureStoreError) -> T) throws(SecureStoreError) -> T {
        try acquire()
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    private func acquire() throws(SecureStoreError) {
        if fd < 0 { fd = try Self.open(path) }
        let deadline = ContinuousClock.now + Self.wait
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw SecureStoreError(.io, "Could not lock \(path): \(String(cString: strerror(errno))).")
            }
            guard ContinuousClock.now < deadline else {
                throw SecureStoreError(.io, "Another process kept this Secret Service namespace locked for writing for "
                    + "longer than \(Self.wait) (\(path)); nothing was written. Try again.")
            }
            usleep(2_000)
        }
    }

    /// The insertion sequence's last number, kept in the lock file as 20 decimal digits and a newline (only
    /// while the lock is held); nil when the file holds anything else (empty: never used).
    func storedCounter() -> UInt64? {
        guard fd >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 22)
        let n = pread(fd, &buffer, buffer.count, 0)
        guard n == 21, buffer[20] == 0x0A, buffer[0..<20].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt64(String(decoding: buffer[0..<20], as: UTF8.self))
    }

    /// Records the insertion sequence's last number (while the lock is held).
    func storeCounter(_ value: UInt64) throws(SecureStoreError) {
        let digits = String(value)
        let text = Array((String(repeating: "0", count: 20 - digits.count) + digits + "\n").utf8)
        guard fd >= 0, pwrite(fd, text, text.count, 0) == text.count, ftruncate(fd, off_t(text.count)) == 0 else {
            throw SecureStoreError(.io, "Could not record the insertion sequence in \(path): "
                + "\(String(cString: strerror(errno))); nothing was written.")
        }
    }

    /// Opens (creating) the lock file in a private folder of this user; never follows a link.
    private static func open(_ path: String) throws(SecureStoreError) -> Int32 {
        let folder = (path as NSString).deletingLastPathComponent
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw SecureStoreError(.io, "Could not create the lock folder \(folder): \(String(cString: strerror(errno))).")
        }
        var info = stat()
        guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
              info.st_mode & 0o077 == 0 else {
            throw SecureStoreError(.authFailed, "The lock folder \(folder) must be a folder of yours that only you may "
                + "use (mode 700); refusing it. Remove it (it is recreated), or run: chmod 700 \(folder)")
        }
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SecureStoreError(.io, "Could not open the lock file \(path): \(String(cString: strerror(errno))).")
        }
        return fd
    }
}
