import Foundation
import CSodium

/// The crypto every raw limit does, with libsodium called directly: a keyed 32-byte BLAKE2b hash for the
/// indexes, and secret ‖ service ‖ 0 ‖ account sealed as nonce ‖ XChaCha20-Poly1305 ciphertext (or stored
/// plain when `encrypted` is false). One buffer is reused for plaintexts and zeroed after each use.
final class RawSealer {
    let encrypted: Bool
    private var key = [UInt8](repeating: 0, count: Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES))
    private var indexKey = [UInt8](repeating: 0, count: 32)
    private var plain: [UInt8] = []
    private let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    private let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    init(encrypted: Bool = true) throws {
        guard sodium_init() >= 0 else { throw BenchFailure("libsodium failed to initialize.") }
        self.encrypted = encrypted
        randombytes_buf(&key, key.count)
        randombytes_buf(&indexKey, indexKey.count)
    }

    deinit { wipe() }

    /// Zeroes the keys (the sealer is unusable afterwards).
    func wipe() {
        sodium_memzero(&key, key.count)
        sodium_memzero(&indexKey, indexKey.count)
    }

    /// The keyed hash of the parts joined with 0 bytes.
    func hash(_ parts: [String]) -> [UInt8] {
        var input: [UInt8] = []
        for (i, part) in parts.enumerated() {
            if i > 0 { input.append(0) }
            input.append(contentsOf: part.utf8)
        }
        var out = [UInt8](repeating: 0, count: 32)
        crypto_generichash(&out, out.count, input, UInt64(input.count), indexKey, indexKey.count)
        return out
    }

    /// secret ‖ service ‖ 0 ‖ account, sealed with `ad` when encrypted.
    func seal(_ secret: Data, service: String, account: String, ad: [UInt8]) -> [UInt8] {
        plain.removeAll(keepingCapacity: true)
        withUnsafeBytes(of: UInt32(secret.count).bigEndian) { plain.append(contentsOf: $0) }
        plain.append(contentsOf: secret)
        plain.append(contentsOf: service.utf8)
        plain.append(0)
        plain.append(contentsOf: account.utf8)
        guard encrypted else { return plain }
        var out = [UInt8](repeating: 0, count: nonceBytes + plain.count + tagBytes)
        var length: UInt64 = 0
        let nonceBytes = self.nonceBytes
        out.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            randombytes_buf(base, nonceBytes)
            crypto_aead_xchacha20poly1305_ietf_encrypt(base + nonceBytes, &length, plain, UInt64(plain.count),
                                                       ad, UInt64(ad.count), nil, base, key)
        }
        sodium_memzero(&plain, plain.count)
        return out
    }

    /// Opens the `count` stored bytes at `bytes`; returns the secret's length.
    func open(_ bytes: UnsafePointer<UInt8>, count: Int, ad: [UInt8]?) throws -> Int {
        if !encrypted {
            guard count >= 4 else { throw BenchFailure("A damaged value.") }
            return Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        }
        guard count >= nonceBytes + tagBytes + 4 else { throw BenchFailure("A damaged value.") }
        if plain.count < count { plain = [UInt8](repeating: 0, count: count) }
        var length: UInt64 = 0
        let rc = crypto_aead_xchacha20poly1305_ietf_decrypt(&plain, &length, nil, bytes + nonceBytes,
                                                            UInt64(count - nonceBytes), ad, UInt64(ad?.count ?? 0),
                                                            bytes, key)
        guard rc == 0 else { throw BenchFailure("A value did not decrypt.") }
        let secretLength = Int(plain[0]) << 24 | Int(plain[1]) << 16 | Int(plain[2]) << 8 | Int(plain[3])
        sodium_memzero(&plain, Int(length))
        return secretLength
    }
}
