package import SecureStoreCore
import Foundation
#if canImport(Glibc)
package import Glibc
#elseif canImport(Darwin)
package import Darwin
#endif

/// Files and folders with private permissions: the database (0600), the key file (0600), folders (0700).
package enum Files {
    package static func createDirectory(_ path: String) throws(SecureStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw SecureStoreError(.io, "Could not create the folder \(path): \(error.localizedDescription)")
        }
    }

    /// Creates an empty file with mode 0600 at `path`, which must not exist (`O_EXCL`: an existing file, or a
    /// symbolic link planted there, even a dangling one, is never opened or followed). Returns false when
    /// something is already at `path`.
    /// `shownAs` is the path errors name (the final path when `path` is a temporary one next to it).
    package static func createExclusive(_ path: String, what: String = "store file", shownAs: String? = nil)
        throws(SecureStoreError) -> Bool
    {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
            return true
        }
        let code = errno
        if code == EEXIST { return false }
        throw creationError(code, what: what, path: shownAs ?? path)
    }

    /// A private name next to `path` for a file that is completed there and then `link`ed into place
    /// (`PATH.creating-` and 12 random hex digits): a new store, a new key file.
    package static func temporaryPath(nextTo path: String) -> String {
        path + ".creating-" + Sodium.random(6).map { String(format: "%02x", $0) }.joined()
    }

    /// Puts the completed file `temporary` (made with ``temporaryPath(nextTo:)``) in place at `path`: its data
    /// is synced, then it is `link`ed to `path` (which never replaces or follows anything there) and the folder
    /// is synced, so after a crash `path` is either absent or the complete file. Returns false, having changed
    /// nothing, when something is already at `path`. The one way every file the tool creates reaches its name:
    /// a new store, a new key file, an export. The caller removes `temporary`.
    package static func linkIntoPlace(_ temporary: String, at path: String, what: String) throws(SecureStoreError) -> Bool {
        let fd = open(temporary, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw creationError(errno, what: what, path: path) }
        let synced = fsync(fd)
        let syncError = errno
        close(fd)
        guard synced == 0 else { throw creationError(syncError, what: what, path: path) }
        guard link(temporary, path) == 0 else {
            let code = errno
            if code == EEXIST { return false }
            throw creationError(code, what: what, path: path)
        }
        let parent = (path as NSString).deletingLastPathComponent
        let folder = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)   // the new name is durable; a folder that cannot be synced still holds it
            close(folder)
        }
        return true
    }

    /// Throws `notAvailable` when the file system holding the file at `path` refuses byte-range locks (ENOLCK,
    /// as an NFS mount without a lock manager does). SQLite reports that as "busy", so a writer would wait
    /// out its whole busy timeout and blame another process; one `F_GETLK` when the store opens says what it is.
    package static func checkLocks(_ path: String, what: String) throws(SecureStoreError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return }   // the open that follows reports it
        defer { close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        if fcntl(fd, F_GETLK, &lock) != 0, errno == ENOLCK {
            throw SecureStoreError(.notAvailable, "The file system holding the \(what) \(path) does not support file "
                + "locks (ENOLCK, as an NFS mount without a lock manager), which keep writers of the store apart. Put "
                + "the store on a local file system, or enable locking on the mount.")
        }
    }

    /// Whether the file system holding `folder` has no space left for this process (root may use the
    /// reserved blocks).
    package static func isFull(_ folder: String) -> Bool {
        var info = statvfs()
        guard statvfs(folder, &info) == 0 else { return false }
        return (geteuid() == 0 ? info.f_bfree : info.f_bavail) == 0
    }

    /// Why a file could not be created, as a user can act on it: a folder on the way that does not exist
    /// (only the default locations' folders are made; a configured path's folder is the user's to make, so a
    /// typo never leaves folders behind) is `notAvailable` naming the folder and the command that makes it;
    /// no permission or a read-only file system is `readOnly`; anything else is `io` with the system's text.
    package static func creationError(_ code: Int32, what: String, path: String) -> SecureStoreError {
        let parent = (path as NSString).deletingLastPathComponent, folder = parent.isEmpty ? "." : parent
        switch code {
        case ENOENT, ENOTDIR:
            return SecureStoreError(.notAvailable,
                "Could not create the \(what) \(path): the folder \(folder) does not exist. Create it (mkdir -p -m 700 \(folder)) or configure another path.")
        case EACCES, EROFS:
            return SecureStoreError(.readOnly, "Could not create the \(what) \(path): \(String(cString: strerror(code))).")
        case ENOSPC, EDQUOT, EFBIG:
            return SecureStoreError(.io, "Could not create the \(what) \(path): \(String(cString: strerror(code))) "
                + "(nothing was saved there; free some space and try again).")
        default:
            return SecureStoreError(.io, "Could not create the \(what) \(path): \(String(cString: strerror(code))).")
        }
    }

    /// Checks an existing file the way ssh checks its private keys: a regular file (a symbolic link is followed
    /// only to such a file, and the file it leads to is what is checked), owned by this user, and neither
    /// readable nor writable by group or others. The refusal says how to fix it.
    ///
    /// A dangling symbolic link at `path` is refused as such.
    package static func checkPrivate(_ path: String, what: String) throws(SecureStoreError) {
        var info = stat()
        if stat(path, &info) != 0 {
            let code = errno
            var link = stat()
            if code == ENOENT, lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
                throw SecureStoreError(.notAvailable, "The \(what) \(path) is a symbolic link to a file that does not "
                    + "exist; refusing to create anything through it. Remove the link, or give the real path.")
            }
            throw SecureStoreError(.notAvailable, "Could not inspect the \(what) \(path): \(String(cString: strerror(code))).")
        }
        try checkPrivate(info, path: path, what: what)
    }

    /// ``checkPrivate(_:what:)`` on a `stat` already taken (of an open descriptor, say).
    package static func checkPrivate(_ info: stat, path: String, what: String) throws(SecureStoreError) {
        try checkRegular(info, path: path, what: what)
        let me = geteuid()
        guard info.st_uid == me else {
            throw SecureStoreError(.authFailed, "The \(what) \(path) belongs to another user (uid \(info.st_uid)), not "
                + "to you (uid \(me)); refusing it: whoever owns it can read or replace what is in it. If it really is "
                + "yours, run: chown \(me) \(path) (as root); otherwise move it away.")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw SecureStoreError(.authFailed, "The \(what) \(path) can be \(mode & 0o066 != 0 ? "read or written" : "used") "
                + "by other users (mode \(String(mode, radix: 8))); refusing it. Run: chmod 600 \(path)")
        }
    }

    /// Throws unless `info` is a regular file's (a folder is reported as a folder).
    package static func checkRegular(_ info: stat, path: String, what: String) throws(SecureStoreError) {
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR {
            throw SecureStoreError(.notAvailable, "The \(what) \(path) is a folder, not a file. Give the path of the "
                + "\(what) itself.")
        }
        guard type == S_IFREG else {
            throw SecureStoreError(.notAvailable, "The \(what) \(path) is not a regular file; refusing it.")
        }
    }

    /// The 32 bytes of the key file at `path`. When there is none: with `creating`, a new one with random
    /// bytes (mode 0600, never through a planted symbolic link); without, an error (the key of an existing
    /// store is missing: a new key would not open it). An existing key file is checked like ssh checks keys.
    package static func keyFile(at path: String, creating: Bool = true) throws(SecureStoreError) -> [UInt8] {
        if creating, let key = try createKeyFile(at: path) { return key }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT {
                var link = stat()
                if lstat(path, &link) == 0 {   // a dangling link: refused, never created through
                    try checkPrivate(path, what: "key file")
                }
                throw SecureStoreError(.notAvailable, "The key file \(path) is missing, but the store it opens already "
                    + "exists: a new key would not open it, so none is made. Restore the key file from your backup, or "
                    + "give the right keyFile or passphrase.")
            }
            throw SecureStoreError(.notAvailable, "Could not read the key file \(path): \(String(cString: strerror(code))).")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SecureStoreError(.io, "Could not inspect the key file \(path).")
        }
        try checkPrivate(info, path: path, what: "key file")
        var key = [UInt8](repeating: 0, count: Sodium.keyBytes + 1)
        let count = read(fd, &key, key.count)
        guard count == Sodium.keyBytes else {
            Sodium.zero(&key)
            throw SecureStoreError(.authFailed, "The key file \(path) must hold exactly \(Sodium.keyBytes) bytes.")
        }
        key.removeLast()
        return key
    }

    /// A new key file at `path`, unless something is there (nil): the random key is written and synced in a
    /// private temporary file next to it (`PATH.creating-RANDOM`, `O_EXCL|O_NOFOLLOW`, mode 0600), which is then
    /// linked into place (`link` never replaces or follows anything). So the path never holds a partial key:
    /// processes creating the same store at once all read the one complete key that won, and a crash leaves
    /// at most the temporary file, never an empty key file that would refuse every later open.
    private static func createKeyFile(at path: String) throws(SecureStoreError) -> [UInt8]? {
        var existing = stat()
        if lstat(path, &existing) == 0 { return nil }
        let temporary = temporaryPath(nextTo: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw creationError(errno, what: "key file", path: path) }
        defer { unlink(temporary) }
        var key = Sodium.random(Sodium.keyBytes)
        let written = write(fd, key, key.count)
        close(fd)
        guard written == key.count else {
            Sodium.zero(&key)
            throw SecureStoreError(.io, "Could not write the new key file \(path).")
        }
        do throws(SecureStoreError) {
            guard try linkIntoPlace(temporary, at: path, what: "key file") else {
                Sodium.zero(&key)
                return nil
            }
        } catch {
            Sodium.zero(&key)
            throw error
        }
        return key
    }
}
