package import SecureStoreCore
import Foundation
internal import CKeyctl
#if canImport(Glibc)
import Glibc
#endif

/// Where `unlock` keeps a passphrase store's derived master key for a while: one `user` key in the Linux
/// kernel's session keyring (keyrings(7)), so later processes of the same login skip Argon2id. A process
/// without a session keyring of its own (no pam_keyinit login) uses the user-session keyring, which every
/// such process of the user shares.
///
/// The one file that makes key-management system calls (add_key(2), keyctl(2), through `CKeyctl`; no
/// library needed). Everything fails soft: where the kernel has no keyrings or a sandbox forbids the calls,
/// nothing is cached, `load` finds nothing and `save` says why.
///
/// - The key's name is `securestore:v1:` and a hash of the store's identity (for SQLite, its real path), so
///   one store has at most one cached key and `lock` finds it without the passphrase.
/// - The payload is a version byte, a 16-byte binding (a hash of the store's stored Argon2id parameters and
///   key-check value, which change on every rekey) and the 32-byte master key. A key whose binding differs
///   is ignored; the store's key check runs on whatever is loaded.
/// - Permissions: the owning user (uid) only — view/read/write/search/link/setattr — and nothing for
///   possessors, group or others. A keyring is possessed by whoever shares it, whatever their uid (`su`
///   without `-l`, `runuser`, `setpriv` keep the session keyring), so possessor rights would let a second
///   account inside the first one's session read the key; with none, another uid can neither find nor read
///   it. Root can read any key. A key found under this slot's name is used only when it is owned by this
///   uid and carries exactly these permissions (one planted by another account is ignored).
/// - The kernel removes it when its timeout passes, when the session keyring goes away, or on `lock`.
package struct KeyringSlot: Sendable, Hashable {
    /// The key's description (its name in `keyctl show @s`); never secret.
    package let description: String

    /// The slot of the store named `identity` (`"sqlite /real/path/store.db"`).
    package init(store identity: String) {
        let digest = Sodium.hash(Array(("SecureStore keyring slot v1\u{0}" + identity).utf8), count: 16)
        description = "securestore:v1:" + digest.map { String(format: "%02x", $0) }.joined()
    }

    /// The binding of a key to one key generation of a store: its stored KDF parameters and key check.
    package static func binding(kdf: [UInt8], check: [UInt8]?) -> [UInt8] {
        Sodium.hash(Array("SecureStore keyring binding v1".utf8) + [0] + kdf + [0] + (check ?? []), count: bindingBytes)
    }

    static let bindingBytes = 16
    static let payloadBytes = 1 + bindingBytes + Sodium.keyBytes
    private static let version: UInt8 = 1

    // Constants of <linux/keyctl.h>.
    private static let sessionKeyring: Int32 = -3
    private static let processKeyring: Int32 = -2
    private static let keyctlGetKeyringID: Int32 = 0
    private static let keyctlSetPerm: Int32 = 5
    private static let keyctlLink: Int32 = 8
    private static let keyctlUnlink: Int32 = 9
    private static let keyctlSetTimeout: Int32 = 15
    private static let keyctlInvalidate: Int32 = 21
    private static let keyctlDescribe: Int32 = 6
    /// User (the owning uid): view, read, write, search, link, setattr; possessor, group, other: nothing.
    package static let permissions: UInt = 0x003f_0000

    /// The cached master key when there is one bound to `binding`, in guarded memory; nil otherwise (no key,
    /// expired, another key generation, no keyring support).
    package func load(binding: [UInt8]) -> SecretKey? {
        let id = securestore_keyctl_search(Self.sessionKeyring, "user", description)
        guard id > 0, Self.ownedPrivately(id), let buffer = try? SecretKey(count: Self.payloadBytes) else { return nil }
        // Read straight into guarded memory (a longer payload is not ours: the length is checked).
        let length = securestore_keyctl_read(Int32(truncatingIfNeeded: id), buffer.pointer, Self.payloadBytes)
        guard length == Self.payloadBytes, buffer.pointer[0] == Self.version, binding.count == Self.bindingBytes else {
            return nil
        }
        let same = binding.withUnsafeBufferPointer { b in
            b.baseAddress.map { Sodium.equal(buffer.pointer + 1, $0, count: Self.bindingBytes) } ?? false
        }
        guard same else { return nil }
        return try? SecretKey(copying: buffer.pointer + 1 + Self.bindingBytes, count: Sodium.keyBytes)
    }

    /// Keeps `master` for `seconds` (1…``maxSeconds``) bound to `binding`, replacing an older key of this slot.
    ///
    /// The key is made in this process's own keyring, given its permissions and timeout, and only then linked
    /// into the session keyring: a key without a timeout is never visible, even if this process dies midway.
    package func save(_ master: SecretKey, binding: [UInt8], seconds: UInt32) throws(SecureStoreError) {
        guard master.count == Sodium.keyBytes, binding.count == Self.bindingBytes else {
            throw SecureStoreError(.internalError, "A cached key must be \(Sodium.keyBytes) bytes with its binding.")
        }
        guard seconds >= 1, seconds <= Self.maxSeconds else {
            throw .param("seconds", "An unlock lasts 1 second to \(Self.maxSeconds / 3600) hours; got \(seconds) seconds.")
        }
        let payload = try SecretKey(count: Self.payloadBytes)
        payload.pointer[0] = Self.version
        binding.withUnsafeBufferPointer { b in
            if let base = b.baseAddress { (payload.pointer + 1).update(from: base, count: Self.bindingBytes) }
        }
        (payload.pointer + 1 + Self.bindingBytes).update(from: master.pointer, count: Sodium.keyBytes)
        let id = securestore_add_key("user", description, payload.pointer, Self.payloadBytes, Self.processKeyring)
        guard id > 0 else { throw Self.failure("add a key to the process keyring") }
        let key = UInt(bitPattern: Int(id))
        defer { _ = securestore_keyctl(Self.keyctlUnlink, key, Self.ring(Self.processKeyring), 0, 0) }
        // The session keyring by its number, looked up without creating one: a process without a session keyring
        // shares the user-session keyring (the special number would make it a new one that dies with it).
        let session = securestore_keyctl(Self.keyctlGetKeyringID, Self.ring(Self.sessionKeyring), 0, 0, 0)
        guard session > 0,
              securestore_keyctl(Self.keyctlSetPerm, key, Self.permissions, 0, 0) == 0,
              securestore_keyctl(Self.keyctlSetTimeout, key, UInt(seconds), 0, 0) == 0,
              securestore_keyctl(Self.keyctlLink, key, UInt(session), 0, 0) == 0
        else {
            let error = Self.failure("set up the cached key")
            _ = securestore_keyctl(Self.keyctlInvalidate, key, 0, 0, 0)
            throw error
        }
    }

    /// Whether key `id` belongs to this process's effective uid and carries exactly ``permissions``
    /// (`KEYCTL_DESCRIBE`: "type;uid;gid;perm;description").
    package static func ownedPrivately(_ id: Int) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 512)
        let length = buffer.withUnsafeMutableBytes { raw in
            securestore_keyctl(keyctlDescribe, UInt(bitPattern: id), UInt(bitPattern: raw.baseAddress), UInt(raw.count), 0)
        }
        guard length > 0, length <= buffer.count else { return false }
        let text = String(decoding: buffer.prefix(Int(length)).prefix { $0 != 0 }, as: UTF8.self)
        let fields = text.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0] == "user", let uid = UInt32(fields[1]), let perm = UInt(fields[3], radix: 16)
        else { return false }
        return uid == geteuid() && perm == permissions
    }

    /// The permissions of the key cached under this slot, if there is one this process can see (for tests).
    package func cachedKeyDescription() -> String? {
        let id = securestore_keyctl_search(Self.sessionKeyring, "user", description)
        guard id > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let length = buffer.withUnsafeMutableBytes { raw in
            securestore_keyctl(Self.keyctlDescribe, UInt(bitPattern: id), UInt(bitPattern: raw.baseAddress), UInt(raw.count), 0)
        }
        guard length > 0, length <= buffer.count else { return nil }
        return String(decoding: buffer.prefix(Int(length)).prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Removes this slot's key; whether there was one.
    @discardableResult
    package func drop() -> Bool {
        var dropped = false
        // One slot holds one key; the loop also clears a key linked twice (bounded).
        for _ in 0..<8 {
            let id = securestore_keyctl_search(Self.sessionKeyring, "user", description)
            guard id > 0 else { break }
            let key = UInt(bitPattern: Int(id))
            if securestore_keyctl(Self.keyctlInvalidate, key, 0, 0, 0) != 0 {
                let session = securestore_keyctl(Self.keyctlGetKeyringID, Self.ring(Self.sessionKeyring), 0, 0, 0)
                guard session > 0, securestore_keyctl(Self.keyctlUnlink, key, UInt(session), 0, 0) == 0 else { break }
            }
            dropped = true
        }
        return dropped
    }

    /// The longest unlock: one day.
    package static let maxSeconds: UInt32 = 24 * 3600

    private static func ring(_ special: Int32) -> UInt { UInt(bitPattern: Int(special)) }

    private static func failure(_ what: String) -> SecureStoreError {
        let code = errno
        let reason = String(cString: strerror(code))
        let hint = code == ENOSYS || code == EPERM || code == EACCES
            ? " (the kernel keyring is not available here, e.g. in a sandbox that forbids keyctl)" : ""
        return SecureStoreError(.notAvailable, "Could not \(what): \(reason)\(hint).")
    }
}
