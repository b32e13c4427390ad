package import SecureStore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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

    /// Creates an empty file with mode 0600 when there is none at `path`.
    package static func createFileIfAbsent(_ path: String) throws(SecureStoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
            return
        }
        let code = errno
        if code == EEXIST { return }
        throw SecureStoreError(code == EACCES || code == EROFS ? .readOnly : .io,
                               "Could not create the store file \(path): \(String(cString: strerror(code))).")
    }

    /// The 32 bytes of the key file at `path`, creating it with random bytes (mode 0600) when absent.
    package static func keyFile(at path: String) throws(SecureStoreError) -> [UInt8] {
        var fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            var key = Sodium.random(Sodium.keyBytes)
            defer { Sodium.zero(&key) }
            let written = write(fd, key, key.count)
            let synced = fsync(fd)
            close(fd)
            guard written == key.count, synced == 0 else {
                unlink(path)
                throw SecureStoreError(.io, "Could not write the new key file \(path).")
            }
            return key
        }
        guard errno == EEXIST else {
            throw SecureStoreError(.io, "Could not create the key file \(path): \(String(cString: strerror(errno))).")
        }
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw SecureStoreError(.notAvailable, "Could not read the key file \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SecureStoreError(.io, "Could not inspect the key file \(path).")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw SecureStoreError(.authFailed,
                "The key file \(path) can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))); refusing it. Run: chmod 600 \(path)")
        }
        var key = [UInt8](repeating: 0, count: Sodium.keyBytes + 1)
        let count = read(fd, &key, key.count)
        guard count == Sodium.keyBytes else {
            Sodium.zero(&key)
            throw SecureStoreError(.authFailed, "The key file \(path) must hold exactly \(Sodium.keyBytes) bytes.")
        }
        key.removeLast()
        return key
    }
}
