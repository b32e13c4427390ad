import SecureStore
import Foundation
internal import CGcrypt

/// Our end of the Secret Service transfer session `dh-ietf1024-sha256-aes128-cbc-pkcs7`, so that secrets cross
/// the bus encrypted without libsecret's session: Diffie-Hellman in the 1024-bit group of RFC 2409 with a
/// 256-bit private exponent, the shared secret (128 big-endian bytes) through HKDF-SHA256 without salt or info
/// into a 16-byte AES-128 key, and AES-128-CBC with PKCS#7 padding and a random IV per secret sent. Decryption
/// is strict: a wrong IV or ciphertext length or bad padding is an error, never bytes.
///
/// libsecret makes its exponent as long as the prime; 256 bits is what RFC 7919 §5.2 asks of a short exponent
/// (at least twice the group's security strength, about 80 bits for 1024 bits) with a wide margin, and makes
/// each modular exponentiation about 4× cheaper. The exponent, the shared secret and the key are held in
/// guarded memory (and the numbers in libgcrypt's secure memory) and wiped when no longer needed. The
/// cryptography is CGcrypt/shim.h on libgcrypt; the D-Bus calls are `Connection`'s. Used under the
/// backend's mutex.
final class TransferSession: @unchecked Sendable {   // used by one thread at a time (the backend's mutex)
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
    static let exponentBytes = Int(SSC_EXPONENT_BYTES)
    static let keyBytes = Int(SSC_KEY_BYTES)
    static let blockBytes = Int(SSC_BLOCK_BYTES)
    static let primeBytes = Int(SSC_PRIME_BYTES)

    /// The private exponent (wiped once the key is made), then the AES key.
    private let exponent: GuardedBytes
    private let key: GuardedBytes
    /// Our public key 2^x mod p, big-endian without leading zeros (sent with OpenSession).
    let publicKey: [UInt8]
    /// The session's object path, once the daemon's public key gave the key (``establish(peer:path:)``).
    private(set) var path: String?
    /// Guarded room for one secret being padded and encrypted or decrypted (wiped after each), kept for the
    /// next one so that a bulk read does not map pages per secret; a secret longer than this gets its own.
    private var scratch: GuardedBytes?
    static let scratchLimit = 64 << 10

    /// A new key pair (a random exponent, or `exponent` for known-answer tests).
    init(exponent fixed: [UInt8]? = nil) throws(SecureStoreError) {
        try LibGcrypt.require()
        let x = try GuardedBytes(count: Self.exponentBytes)
        if let fixed {
            guard fixed.count == Self.exponentBytes else { throw Self.failure("the exponent is not 32 bytes") }
            x.pointer.copyMemory(from: fixed, byteCount: fixed.count)
        } else {
            guard ssc_random(x.pointer, x.count) != 0 else { throw Self.failure("no random bytes") }
        }
        var out = [UInt8](repeating: 0, count: Self.primeBytes)
        var length = 0
        guard ssc_dh_public(x.bytes, x.count, &out, &length) != 0, length > 0 else {
            throw Self.failure("the public key could not be computed")
        }
        publicKey = Array(out[0..<length])
        exponent = x
        key = try GuardedBytes(count: Self.keyBytes)
    }

    /// A session with this key already made (known-answer tests of the cipher).
    convenience init(key fixed: [UInt8], path: String) throws(SecureStoreError) {
        try self.init()
        guard fixed.count == Self.keyBytes else { throw Self.failure("the key is not 16 bytes") }
        exponent.wipe()
        key.pointer.copyMemory(from: fixed, byteCount: fixed.count)
        self.path = path
    }

    /// Makes the session key from the daemon's public key and wipes the exponent. A key outside 2…p−2 is refused.
    func establish(peer: UnsafeRawBufferPointer, path: String) throws(SecureStoreError) {
        defer { exponent.wipe() }
        guard path.hasPrefix("/"), let base = peer.baseAddress,
              ssc_dh_session_key(exponent.bytes, exponent.count, base.assumingMemoryBound(to: UInt8.self), peer.count,
                                 key.bytes) != 0
        else { throw Self.failure("the Secret Service sent an unusable public key") }
        self.path = path
    }

    /// `plain` encrypted with a new random IV.
    func encrypt(_ plain: Data) throws(SecureStoreError) -> (iv: [UInt8], ciphertext: [UInt8]) {
        var iv = [UInt8](repeating: 0, count: Self.blockBytes)
        guard ssc_random(&iv, iv.count) != 0 else { throw Self.failure("no random bytes") }
        return (iv, try encrypt(plain, iv: iv))
    }

    /// `plain` encrypted with this IV (known-answer tests pass theirs).
    func encrypt(_ plain: Data, iv: [UInt8]) throws(SecureStoreError) -> [UInt8] {
        let padded = ssc_padded_length(plain.count)
        guard iv.count == Self.blockBytes, padded > 0 else { throw Self.failure("the secret is too long") }
        let buffer = try room(for: padded)   // the padded plaintext, encrypted in place
        defer { buffer.wipe(padded) }
        let ok = plain.withUnsafeBytes { raw in
            ssc_encrypt(key.bytes, iv, raw.baseAddress, raw.count, buffer.bytes)
        }
        guard ok != 0 else { throw Self.failure("the secret could not be encrypted") }
        return Array(UnsafeRawBufferPointer(start: buffer.pointer, count: padded))
    }

    /// The plaintext of `ciphertext`; an IV that is not 16 bytes, a length that is not whole blocks (or 0) or bad
    /// padding is an error.
    func decrypt(iv: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer) throws(SecureStoreError) -> Data {
        let buffer = try room(for: max(ciphertext.count, 1))
        defer { buffer.wipe(ciphertext.count) }
        var length = 0
        guard ssc_decrypt(key.bytes, iv.baseAddress, iv.count, ciphertext.baseAddress, ciphertext.count, buffer.bytes,
                          &length) != 0
        else { throw Self.failure("a secret could not be decrypted (wrong length or padding)") }
        return Data(bytes: buffer.pointer, count: length)
    }

    /// Guarded memory for `count` bytes of one secret: the kept scratch (grown as needed up to
    /// ``scratchLimit``), or memory of its own beyond that.
    private func room(for count: Int) throws(SecureStoreError) -> GuardedBytes {
        if let scratch, scratch.count >= count { return scratch }
        let fresh = try GuardedBytes(count: count)
        if count <= Self.scratchLimit { scratch = fresh }
        return fresh
    }

    /// HKDF-SHA256 (RFC 5869) of `ikm` with no salt and no info, as the session derives its key (for tests).
    static func hkdf(_ ikm: [UInt8], count: Int) throws(SecureStoreError) -> [UInt8] {
        try LibGcrypt.require()
        var out = [UInt8](repeating: 0, count: count)
        guard ssc_hkdf_sha256(ikm, ikm.count, nil, 0, nil, 0, &out, count) != 0 else { throw failure("HKDF failed") }
        return out
    }

    private static func failure(_ why: String) -> SecureStoreError {
        SecureStoreError(.io, "Secret Service transfer session: \(why).")
    }
}

/// Bytes in guarded memory (CGcrypt's ssc_guarded_alloc: own pages between inaccessible ones, locked when
/// allowed, not in core dumps), wiped and unmapped on deinit.
private final class GuardedBytes {
    let pointer: UnsafeMutableRawPointer
    let count: Int

    init(count: Int) throws(SecureStoreError) {
        guard let raw = ssc_guarded_alloc(count) else {
            throw SecureStoreError(.io, "Secret Service transfer session: no memory for \(count) bytes.")
        }
        pointer = raw
        self.count = count
    }

    var bytes: UnsafeMutablePointer<UInt8> { pointer.assumingMemoryBound(to: UInt8.self) }

    /// Zeroes the first `n` bytes (all when nil).
    func wipe(_ n: Int? = nil) { explicit_bzero(pointer, min(n ?? count, count)) }

    deinit { ssc_guarded_free(pointer, count) }
}

// MARK: libgcrypt, loaded at first use

/// libgcrypt, opened when the first transfer session is made (``require()``); libsecret depends on it, so it is
/// normally mapped already. shim.h calls every libgcrypt function through `securestore_gcrypt()`
/// (CGcrypt/gcrypt-subset.h). When it cannot be loaded, the connection uses libsecret's session instead.
enum LibGcrypt {
    /// The library file opened, and the Debian package that installs it.
    static let soname = "libgcrypt.so.20"
    static let debianPackage = "libgcrypt20"

    private static let loaded = load(soname: soname)
    /// Loaded and initialized once (libgcrypt must be initialized before its first use).
    private static let ready: Result<Void, SecureStoreError> = {
        do throws(SecureStoreError) { try loaded.require() } catch { return .failure(error) }
        guard ssc_gcrypt_init() != 0 else {
            return .failure(SecureStoreError(.notAvailable, "The secret-service backend could not initialize \(soname)."))
        }
        return .success(())
    }()

    /// Opens `soname` and looks up every function shim.h calls (tests pass a missing name).
    static func load(soname: String) -> LoadedFunctions<ssc_gcrypt> {
        LoadedFunctions(soname: soname, for: "secret-service", debianPackage: debianPackage, count: ssc_gcrypt_count(),
                        name: { String(cString: ssc_gcrypt_name($0)) })
    }

    /// Loads and initializes the library once; its `notAvailable` error (every time) when that failed.
    static func require() throws(SecureStoreError) {
        try ready.get()
    }

    /// The looked-up functions; only reached after ``require()`` succeeded.
    fileprivate static var functions: UnsafePointer<ssc_gcrypt> { loaded.functions }
}

/// The table CGcrypt/shim.h calls through (declared in CGcrypt/gcrypt-subset.h).
@_cdecl("securestore_gcrypt")
func secureStoreGcrypt() -> UnsafePointer<ssc_gcrypt> { LibGcrypt.functions }
