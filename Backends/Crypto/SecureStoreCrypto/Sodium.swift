package import SecureStoreCore
import Foundation
internal import CSodium

/// The one file that talks to libsodium: guarded key memory, randomness, key derivation, blind indexes and
/// XChaCha20-Poly1305 sealing.
package enum Sodium {
    package static let keyBytes = 32
    package static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    package static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    package static let saltBytes = Int(crypto_pwhash_SALTBYTES)
    package static let indexBytes = 32

    package static func ready() throws(SecureStoreError) {
        if sodium_init() < 0 {
            throw SecureStoreError(.notAvailable, "libsodium could not be initialized.")
        }
    }

    package static func random(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        randombytes_buf(&out, count)
        return out
    }

    package static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
    }

    package static func zero(_ bytes: inout [UInt8]?) {
        bytes?.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
    }

    /// Argon2id cost limits.
    package static let interactiveOps = UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE)
    package static let interactiveMem = UInt64(crypto_pwhash_MEMLIMIT_INTERACTIVE)
    package static let moderateOps = UInt64(crypto_pwhash_OPSLIMIT_MODERATE)
    package static let moderateMem = UInt64(crypto_pwhash_MEMLIMIT_MODERATE)
    package static let minimumOps = UInt64(crypto_pwhash_OPSLIMIT_MIN)
    package static let minimumMem = UInt64(crypto_pwhash_MEMLIMIT_MIN)
    package static let argon2id = Int32(crypto_pwhash_ALG_ARGON2ID13)

    /// A 32-byte master key stretched from `passphrase` with Argon2id.
    package static func stretch(_ passphrase: [UInt8], salt: [UInt8], ops: UInt64, mem: UInt64) throws(SecureStoreError)
        -> SecretKey
    {
        guard salt.count == saltBytes, ops >= minimumOps, mem >= minimumMem,
              ops <= UInt64(crypto_pwhash_OPSLIMIT_MAX), mem <= UInt64(Int.max)
        else {
            throw SecureStoreError(.decode, "The store's passphrase parameters are invalid: the file was altered or corrupted.")
        }
        let key = try SecretKey(count: keyBytes)
        var pw = passphrase.map { CChar(bitPattern: $0) }
        defer { pw.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        let rc = crypto_pwhash(key.pointer, UInt64(keyBytes), pw, UInt64(pw.count), salt, ops, Int(mem), argon2id)
        csodium_burn_stack()   // Argon2's dead stack frames still hold the key (its final BLAKE2b buffer)
        guard rc == 0 else {
            throw SecureStoreError(.allocate, "Stretching the passphrase ran out of memory.")
        }
        return key
    }

    /// A subkey of `master` for one purpose (`context` is exactly 8 characters).
    package static func derive(_ master: SecretKey, id: UInt64, context: String) throws(SecureStoreError) -> SecretKey {
        let sub = try SecretKey(count: keyBytes)
        let ctx: [CChar] = Array(context.utf8).map { CChar(bitPattern: $0) } + [0]
        let rc = crypto_kdf_derive_from_key(sub.pointer, keyBytes, id, ctx, master.pointer)
        csodium_burn_stack()   // BLAKE2b's final output buffer, left in a dead stack frame, holds the subkey
        guard rc == 0 else { throw SecureStoreError(.internalError, "Deriving a subkey failed.") }
        return sub
    }

    /// An unkeyed BLAKE2b hash of `bytes`, `count` bytes long (16…64): names and bindings, never secrets alone.
    package static func hash(_ bytes: [UInt8], count: Int = 16) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        crypto_generichash(&out, count, bytes, UInt64(bytes.count), nil, 0)
        return out
    }

    /// Whether `a` and `b` (of equal length) are equal, in constant time.
    static func equal(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                guard let p = x.baseAddress, let q = y.baseAddress else { return x.isEmpty && y.isEmpty }
                return sodium_memcmp(p, q, x.count) == 0
            }
        }
    }

    /// Whether `count` bytes at `a` and `b` are equal, in constant time.
    package static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int) -> Bool {
        sodium_memcmp(a, b, count) == 0
    }

    /// nonce ‖ ciphertext ‖ tag of `plain`, authenticated together with `ad`.
    package static func seal(_ plain: [UInt8], ad: [UInt8], key: SecretKey) -> [UInt8] {
        ad.withUnsafeBytes { ad in
            seal(count: plain.count, ad: ad, key: key) { out in
                plain.withUnsafeBytes { if $0.count > 0 { out.copyMemory(from: $0) } }
            }
        }
    }

    /// nonce ‖ ciphertext ‖ tag of the `count` plaintext bytes `write` puts in the buffer it is given, sealed
    /// in place (authenticated together with `ad`): one allocation, and the plaintext never exists anywhere
    /// but in the bytes its ciphertext then overwrites.
    package static func seal(count: Int, ad: UnsafeRawBufferPointer, key: SecretKey,
                             _ write: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: nonceBytes + count + tagBytes) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }   // never: capacity ≥ 40
            randombytes_buf(base, nonceBytes)
            let text = base + nonceBytes
            write(UnsafeMutableRawBufferPointer(start: text, count: count))
            var written: UInt64 = 0
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                text, &written, text, UInt64(count), ad.baseAddress?.assumingMemoryBound(to: UInt8.self),
                UInt64(ad.count), nil, base, key.pointer)
            initialized = nonceBytes + count + tagBytes
        }
    }

    /// The plaintext of `sealed`, or nil when it was not sealed with `key` and `ad` (or was altered).
    package static func open(_ sealed: [UInt8], ad: [UInt8], key: SecretKey) -> [UInt8]? {
        guard sealed.count >= nonceBytes + tagBytes else { return nil }
        var out = [UInt8](repeating: 0, count: sealed.count - nonceBytes - tagBytes)
        var written: UInt64 = 0
        // Nonce and ciphertext read in place (no copies).
        let rc: Int32 = sealed.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return -1 }
            return crypto_aead_xchacha20poly1305_ietf_decrypt(&out, &written, nil, base + nonceBytes,
                                                              UInt64(buffer.count - nonceBytes), ad, UInt64(ad.count),
                                                              base, key.pointer)
        }
        guard rc == 0 else { return nil }
        return out
    }

    /// Opens `sealed` (nonce ‖ ciphertext ‖ tag, read in place, such as a database column's memory) into `out`,
    /// which holds exactly `sealed.count - nonceBytes - tagBytes` bytes; false when it was not sealed with `key`
    /// and `ad` (or was altered), and `out` is then left unwritten (the tag is checked before decrypting).
    package static func open(_ sealed: UnsafeRawBufferPointer, ad: UnsafeRawBufferPointer, key: SecretKey,
                             into out: UnsafeMutableRawBufferPointer) -> Bool {
        guard sealed.count >= nonceBytes + tagBytes, out.count == sealed.count - nonceBytes - tagBytes,
              let base = sealed.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { return false }
        var spare: UInt8 = 0   // a 0-byte plaintext still needs somewhere to point
        return withUnsafeMutablePointer(to: &spare) { spare in
            let target = out.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? spare
            var written: UInt64 = 0
            return crypto_aead_xchacha20poly1305_ietf_decrypt(
                target, &written, nil, base + nonceBytes, UInt64(sealed.count - nonceBytes),
                ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count), base, key.pointer) == 0
        }
    }

    /// Zeroes `bytes` (plaintext in a temporary buffer).
    package static func zero(_ bytes: UnsafeMutableRawBufferPointer) {
        if let base = bytes.baseAddress { sodium_memzero(base, bytes.count) }
    }
}

/// The keyed BLAKE2b-256 states of one blind-index key, one per domain byte (the key and the domain byte
/// already fed in), made once per store and kept in libsodium guarded memory: a blind index copies its
/// domain's state to the stack, feeds the bytes and finishes, and zeroes the copy. The result is the same
/// hash as keying a fresh state each time (FORMAT.md: BLAKE2b-256 keyed with the index subkey over
/// domain ‖ bytes).
package final class BlindIndexKey: @unchecked Sendable {   // the states are read-only after init
    private let memory: SecretKey
    private let states: UnsafeMutableRawPointer
    private let domains: ClosedRange<UInt8>
    /// libsodium's state size rounded up to its 64-byte alignment.
    private static let stride = (crypto_generichash_statebytes() + 63) & ~63

    package init(_ key: SecretKey, domains: ClosedRange<UInt8>) throws(SecureStoreError) {
        // 63 spare bytes so the first state can start on a 64-byte boundary whatever sodium_malloc returns.
        memory = try SecretKey(count: Self.stride * domains.count + 63)
        let raw = UnsafeMutableRawPointer(memory.pointer)
        states = raw.alignedUp(toMultipleOf: 64)
        self.domains = domains
        for (i, domain) in domains.enumerated() {
            let state = OpaquePointer(states + i * Self.stride)
            crypto_generichash_init(state, key.pointer, key.count, Sodium.indexBytes)
            var domain = domain
            crypto_generichash_update(state, &domain, 1)
        }
    }

    /// The 32-byte index of `bytes` in `domain` (one of the domains this key was made for).
    package func index(domain: UInt8, _ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Sodium.indexBytes) { out, count in
            guard let target = out.baseAddress else { return }   // never: capacity 32
            index(domain: domain, bytes, into: target)
            count = Sodium.indexBytes
        }
    }

    /// Writes the 32-byte index of `bytes` in `domain` to `out`.
    package func index(domain: UInt8, _ bytes: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) {
        precondition(domains.contains(domain), "a blind-index domain this key was not made for")
        let source = states + Int(domain - domains.lowerBound) * Self.stride
        // On the stack (an alignment above 16 would move a temporary allocation to the heap), aligned by hand.
        withUnsafeTemporaryAllocation(byteCount: Self.stride + 63, alignment: 16) { raw in
            guard let start = raw.baseAddress else { return }   // never: the allocation is 384+ bytes
            defer { sodium_memzero(start, raw.count) }
            let base = start.alignedUp(toMultipleOf: 64)
            base.copyMemory(from: source, byteCount: Self.stride)
            let state = OpaquePointer(base)
            crypto_generichash_update(state, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
            crypto_generichash_final(state, out, Sodium.indexBytes)
        }
    }
}

/// A keyed BLAKE2b-256 over a stream of bytes (the whole-file seal of an export), its state in guarded
/// memory and zeroed when released.
package final class KeyedHash {
    private let memory: SecretKey
    private let state: OpaquePointer
    private static let stride = (crypto_generichash_statebytes() + 63) & ~63

    package init(key: SecretKey) throws(SecureStoreError) {
        memory = try SecretKey(count: Self.stride + 63)
        state = OpaquePointer(UnsafeMutableRawPointer(memory.pointer).alignedUp(toMultipleOf: 64))
        crypto_generichash_init(state, key.pointer, key.count, Sodium.indexBytes)
    }

    package func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { crypto_generichash_update(state, $0.baseAddress, UInt64($0.count)) }
    }

    package func update<T: FixedWidthInteger>(bigEndian value: T) {
        update(withUnsafeBytes(of: value.bigEndian) { Array($0) })
    }

    /// The 32-byte hash; the state is used up.
    package func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Sodium.indexBytes)
        crypto_generichash_final(state, &out, Sodium.indexBytes)
        return out
    }
}

/// Key bytes in libsodium guarded memory (`sodium_malloc`: guard pages, no swap), zeroed and freed on deinit.
package final class SecretKey {
    package let pointer: UnsafeMutablePointer<UInt8>
    package let count: Int

    package init(count: Int) throws(SecureStoreError) {
        try Sodium.ready()   // sodium_malloc aborts the process when libsodium was not initialized
        guard let raw = sodium_malloc(count) else {
            throw SecureStoreError(.allocate, "Could not allocate protected memory for a key.")
        }
        pointer = raw.bindMemory(to: UInt8.self, capacity: count)
        self.count = count
    }

    /// A key holding a copy of `bytes`.
    package convenience init(copying bytes: [UInt8]) throws(SecureStoreError) {
        try self.init(count: bytes.count)
        bytes.withUnsafeBufferPointer { b in
            if let base = b.baseAddress { pointer.update(from: base, count: b.count) }
        }
    }

    /// A key holding a copy of `count` bytes at `source` (guarded memory to guarded memory).
    package convenience init(copying source: UnsafePointer<UInt8>, count: Int) throws(SecureStoreError) {
        try self.init(count: count)
        pointer.update(from: source, count: count)
    }

    deinit {
        sodium_free(pointer)   // zeroes the memory before freeing it
    }
}
