import Foundation
import Testing
import SecureStore
import TestSupport
@testable import SecureStoreSecretService

/// The transfer session's cryptography (TransferSession.swift, CGcrypt/shim.h) against vectors computed with an
/// independent implementation (Python's `cryptography` package: HKDF, AES-CBC, PKCS7; `pow` for the group) when
/// these tests were written, and RFC 5869's own vector. No bus needed.
@Suite("Secret Service: transfer session cryptography")
struct TransferSessionTests {
    static func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            out.append(UInt8(s[i..<j], radix: 16) ?? 0)
            i = j
        }
        return out
    }

    static let key = Array(UInt8(0)...15)
    static let iv = Array(UInt8(16)...31)

    @Test("HKDF-SHA256 without salt or info: RFC 5869 test case 3, and a 128-byte input to a 16-byte key")
    func hkdf() throws {
        #expect(try TransferSession.hkdf([UInt8](repeating: 0x0b, count: 22), count: 42)
                == Self.hex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"))
        #expect(try TransferSession.hkdf(Array(UInt8(0)...127), count: 16) == Self.hex("d030a065c4f99245756b6fc30d00a294"))
    }

    @Test("AES-128-CBC with PKCS#7 padding: 0, 3, 16 and 33 bytes (a whole block of padding after 0 and 16)")
    func cipherVectors() throws {
        let session = try TransferSession(key: Self.key, path: "/test")
        let vectors: [(Data, String)] = [
            (Data(), "0a940bb5416ef045f1c39458c653ea5a"),
            (Data("abc".utf8), "12502cb082a43c4b029bb67b4f00f5d7"),
            (Data(UInt8(0)...15), "954f64f2e4e86e9eee82d20216684899db93e48ae2f22663e63cdf3870cd08a8"),
            (Data(UInt8(0)...32), "954f64f2e4e86e9eee82d20216684899a93b9ddb22e8ab104c61e728831d6d5a"
                + "454d80685678ff9a783dded8c2d9f546"),
        ]
        for (plain, expected) in vectors {
            let ciphertext = try session.encrypt(plain, iv: Self.iv)
            #expect(ciphertext == Self.hex(expected), "\(plain.count) bytes")
            let back = try Self.hex(expected).withUnsafeBytes { c in
                try Self.iv.withUnsafeBytes { iv in try session.decrypt(iv: iv, ciphertext: c) }
            }
            #expect(back == plain, "\(plain.count) bytes")
        }
    }

    static let x = hex(String(repeating: "5ec7e55e", count: 8))
    static let publicX = hex("0acdbb7b420ab4ed282aa20fbc67653cd2d281286507ce6964a83126ae6dd1e2462f79b09e7f559398524f5ec88182cf"
        + "63252d1e995deb02381bf022a1b06fc8816bd824fe9b6bc9558b5ba2c08d3d3ddb34a52b9bfff0f4ec662bacedfb67c4aa30c273"
        + "beb10ae906b304a7e670029a192cb6b694ef80463d405e0547fa622c")
    static let z = hex(String(repeating: "c0ffee00", count: 7) + "c0ffee03")
    static let publicZ = hex("3013cf015455c494575b8110cec5f365a042149557c2fb92152e60408a6f6de11f048542821aa2695280ce54da589008"
        + "0abc0530fff6fad3094ad729d23d67cc3b19ecc78d148e3eb0ad9c7c2e6e120baafe5ccae9ffe8bd65a8bad75b76ff69c9bb5a48"
        + "907aa04dbe7fd7a22069d996b3ffddeb48026f5f124226ab572763c0")

    /// 2^(xz) mod p of this pair starts with a zero byte (127 significant bytes): the key is HKDF of it written
    /// as 128 bytes (8e29a7f0…; without the leading zero it would be 35a4cb13…, which encrypts to f9011287…).
    @Test("Diffie-Hellman: public keys 2^x mod p, and the key from a shared secret with a leading zero byte (padded to 128)")
    func keyAgreement() throws {
        let ours = try TransferSession(exponent: Self.x)
        let theirs = try TransferSession(exponent: Self.z)
        #expect(ours.publicKey == Self.publicX)
        #expect(theirs.publicKey == Self.publicZ)
        try Self.publicZ.withUnsafeBytes { try ours.establish(peer: $0, path: "/org/freedesktop/secrets/session/s1") }
        try Self.publicX.withUnsafeBytes { try theirs.establish(peer: $0, path: "/org/freedesktop/secrets/session/s1") }
        #expect(ours.path == "/org/freedesktop/secrets/session/s1")
        let plain = Data("securestore".utf8)
        #expect(try ours.encrypt(plain, iv: Self.iv) == Self.hex("89aeb0f672e6d801e69ad0d387425817"))
        #expect(try theirs.encrypt(plain, iv: Self.iv) == Self.hex("89aeb0f672e6d801e69ad0d387425817"))
        let (iv, ciphertext) = try ours.encrypt(plain)
        let back = try ciphertext.withUnsafeBytes { c in try iv.withUnsafeBytes { try theirs.decrypt(iv: $0, ciphertext: c) } }
        #expect(back == plain)
    }

    @Test("a random key pair: a 32-byte exponent, a public key of at most 128 bytes, a fresh IV per secret")
    func randomPairs() throws {
        let a = try TransferSession(), b = try TransferSession()
        #expect(a.publicKey != b.publicKey)
        #expect(a.publicKey.count <= 128 && a.publicKey.count > 100)
        try b.publicKey.withUnsafeBytes { try a.establish(peer: $0, path: "/s") }
        try a.publicKey.withUnsafeBytes { try b.establish(peer: $0, path: "/s") }
        let first = try a.encrypt(Data("same".utf8)), second = try a.encrypt(Data("same".utf8))
        #expect(first.iv != second.iv && first.ciphertext != second.ciphertext)
        for message in [first, second] {
            let back = try message.ciphertext.withUnsafeBytes { c in
                try message.iv.withUnsafeBytes { try b.decrypt(iv: $0, ciphertext: c) }
            }
            #expect(back == Data("same".utf8))
        }
    }

    @Test("a public key outside 2…p−2 (0, 1, p−1, p, 2^1024, none) is refused")
    func degeneratePeerKeys() throws {
        var pMinus1 = [UInt8](repeating: 0xFF, count: 128)
        let p = Self.hex("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
            + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB"
            + "5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF")
        pMinus1 = p
        pMinus1[127] -= 1
        for peer in [[0], [1], [0, 0, 1], pMinus1, p, [1] + [UInt8](repeating: 0, count: 128), []] as [[UInt8]] {
            let session = try TransferSession()
            #expect(throws: SecureStoreError.self, "\(peer.count) bytes") {
                try peer.withUnsafeBytes { try session.establish(peer: $0, path: "/s") }
            }
            #expect(session.path == nil)
        }
        let two = try TransferSession()
        try [UInt8(2)].withUnsafeBytes { try two.establish(peer: $0, path: "/s") }   // 2 is a valid (if odd) key
        #expect(two.path == "/s")
    }

    @Test("decryption is strict: a wrong IV or ciphertext length, or bad padding, is an error and never bytes")
    func strictDecryption() throws {
        let session = try TransferSession(key: Self.key, path: "/test")
        let good = try session.encrypt(Data("abc".utf8), iv: Self.iv)   // one block: "abc" + 13 × 0x0d
        func decrypt(iv: [UInt8], _ c: [UInt8]) throws -> Data {
            try c.withUnsafeBytes { c in try iv.withUnsafeBytes { try session.decrypt(iv: $0, ciphertext: c) } }
        }
        #expect(try decrypt(iv: Self.iv, good) == Data("abc".utf8))
        for badIV in [[], Array(Self.iv.prefix(15)), Self.iv + [0]] as [[UInt8]] {
            #expect(throws: SecureStoreError.self) { try decrypt(iv: badIV, good) }
        }
        for badLength in [[], Array(good.prefix(15)), good + [0], good + good.prefix(1)] as [[UInt8]] {
            #expect(throws: SecureStoreError.self) { try decrypt(iv: Self.iv, badLength) }
        }
        // Flipping IV bits flips the same plaintext bits: the last byte (the padding's length 0x0d) becomes 0,
        // 17, 0x0c or 0x0e (the bytes before it then disagree), 0xff; each is refused.
        for last: UInt8 in [0x00, 0x11, 0x0c, 0x0e, 0xff] {
            var iv = Self.iv
            iv[15] ^= 0x0d ^ last
            #expect(throws: SecureStoreError.self, "padding byte \(last)") { try decrypt(iv: iv, good) }
        }
        // A padding byte other than the last one changed.
        var iv = Self.iv
        iv[5] ^= 0x01
        #expect(throws: SecureStoreError.self) { try decrypt(iv: iv, good) }
        // Another key: the padding comes out wrong (this ciphertext, this key: checked to fail, as nearly all do).
        let other = try TransferSession(key: [UInt8](repeating: 7, count: 16), path: "/test")
        #expect(throws: SecureStoreError.self) {
            try good.withUnsafeBytes { c in try Self.iv.withUnsafeBytes { try other.decrypt(iv: $0, ciphertext: c) } }
        }
    }

    @Test("0 bytes, 1 MiB and sizes between round-trip, larger and smaller in turn through one session")
    func sizes() throws {
        let session = try TransferSession(key: Self.key, path: "/test")
        var big = Data(count: 1 << 20)
        for i in big.indices { big[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 7) }
        for plain in [Data(), Data([0]), big.prefix(40_000), Data("abc".utf8), big, big.prefix(65_536), Data()] {
            let (iv, c) = try session.encrypt(plain)
            #expect(c.count == (plain.count / 16 + 1) * 16)
            let back = try c.withUnsafeBytes { c in try iv.withUnsafeBytes { try session.decrypt(iv: $0, ciphertext: c) } }
            #expect(back == plain)
        }
    }

    @Test("the installed libgcrypt has every function the session calls")
    func installedLibgcrypt() throws {
        _ = try LibGcrypt.load(soname: LibGcrypt.soname).result.get()
    }

    /// gcrypt-subset.h declares the part of libgcrypt the session uses (so building needs no libgcrypt headers);
    /// compiled with SSC_GCRYPT_CHECK against the real gcrypt.h, the compiler compares every prototype and constant.
    @Test("gcrypt-subset.h agrees with the installed gcrypt.h",
          .enabled(if: LibraryTests.compiler != nil && Self.gcryptHeaderFlags != nil,
                   "needs a C compiler and libgcrypt20-dev (pkg-config libgcrypt) to compare with the real header"))
    func declarationsMatchTheRealHeader() throws {
        let compiler = try #require(LibraryTests.compiler)
        let flags = try #require(Self.gcryptHeaderFlags)
        let dir = packageRoot.appendingPathComponent("Backends/SecretService/CGcrypt").path
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("ss-gcrypt-check-\(UUID().uuidString).c")
        try Data("#include \"shim.h\"\n".utf8).write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        let (status, output) = try LibraryTests.run(compiler, ["-fsyntax-only", "-Werror", "-Wall", "-Wextra", "-DSSC_GCRYPT_CHECK",
                                                               "-I", dir] + flags + [source.path])
        #expect(status == 0, "\(output)")
    }

    static let gcryptHeaderFlags: [String]? = {
        guard let out = try? LibraryTests.run("/usr/bin/pkg-config", ["--cflags", "libgcrypt"]), out.status == 0 else { return nil }
        return out.output.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    }()

    @Test("a libgcrypt that cannot be loaded is a notAvailable error naming it (the connection then uses libsecret's session)")
    func missingLibgcrypt() {
        guard case .failure(let error) = LibGcrypt.load(soname: "libgcrypt-securestore-missing.so.20").result else {
            Issue.record("loading a missing libgcrypt succeeded")
            return
        }
        #expect(error.code == .notAvailable)
        #expect(error.message.contains("libgcrypt-securestore-missing.so.20"))
    }
}
