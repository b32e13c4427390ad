import Foundation
import SecureStoreCore
import SecureStoreCrypto

/// Fuzz target (c): what comes out of a database file a stranger handed you, one row at a time.
///
/// The first byte picks a path:
/// - even: the rest is a record's plaintext (format 1 to 3, or 4) → `RecordCodec.decode`; a decoded record
///   must survive encode → decode unchanged (format 4 with its secret and date apart, format 3 with its secret
///   apart, and format 2);
/// - odd: the rest is a row (class number, then the plaintext), sealed with a fixed key and the associated data
///   FORMAT.md specifies (a format 3 row, or with bit 4 of the first byte a format 4 row with a secret part
///   without a secret), then opened with `RecordSealer.open`: it must give exactly what
///   `decode` gives (or `decode` errors), and the same blob with one byte flipped must fail with `decode`.
public enum RecordExercise {
    public static let name = "record"
    private static let key: [UInt8] = Array(0..<32)
    // `nonisolated(unsafe)`: created once, then only read (RecordSealer is immutable).
    nonisolated(unsafe) private static let fixture: (sealer: RecordSealer, encryption: SecretKey)? = {
        guard let sealer = try? RecordSealer.make(.raw(Data(key)), storedKDF: nil, cost: .minimum),
              let master = try? SecretKey(copying: key),
              let encryption = try? Sodium.derive(master, id: 1, context: "SSencryp")
        else { return nil }
        return (sealer, encryption)
    }()

    public static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        guard let first = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        if first & 1 == 0 {
            try decode(rest)
        } else {
            try openRow(cls: Int64((first >> 1) & 7) % 7, format4: first & 0x10 != 0, rest)
        }
    }

    private static func decode(_ plain: [UInt8]) throws(FuzzFinding) {
        guard let record = RecordCodec.decode(plain) ?? RecordCodec.decode(format4: plain, modified: nil, data: nil)
        else { return }
        // Format 4 and format 3 (the secret given apart, as a table's `secret` column holds it) and format 2
        // (inside).
        guard let back4 = RecordCodec.decode(format4: RecordCodec.encode(record), modified: nil, data: record.data),
              back4 == record,
              let back3 = RecordCodec.decode(RecordCodec.encodeFormat3(record), secret: record.data.map { Array($0) }),
              back3 == record,
              let inside = RecordCodec.decode(RecordCodec.encodeWithSecret(record)), inside == record
        else {
            throw FuzzFinding(name, "a decoded record does not survive encode → decode")
        }
    }

    private static func openRow(cls: Int64, format4: Bool, _ plain: [UInt8]) throws(FuzzFinding) {
        guard let (sealer, encryption) = fixture else { throw FuzzFinding(name, "no fixture key") }
        let ref = [UInt8](repeating: 0xA5, count: 32)
        let ukey = [UInt8](repeating: 0x5A, count: 32)
        // FORMAT.md: "SSrow1" ‖ cls (1 byte) ‖ ref (32) ‖ ukey (32)
        let ad = Array("SSrow1".utf8) + [UInt8(truncatingIfNeeded: cls)] + ref + ukey
        var blob = Sodium.seal(plain, ad: ad, key: encryption)
        let decoded = format4 ? RecordCodec.decode(format4: plain, modified: nil, data: nil) : RecordCodec.decode(plain)
        let expected = decoded.flatMap { RecordSealer.classNumber($0.itemClass) == cls ? $0 : nil }
        // A format 4 row: its secret part (no secret, the decoded record's reference), no date part.
        var secret: [UInt8]? = nil
        let mdat: [UInt8]? = nil
        if format4 {
            let refBytes = Array(decoded?.persistentRef.data ?? Data())
            let trailer = refBytes + withUnsafeBytes(of: UInt32(refBytes.count).bigEndian, Array.init) + [0]
            secret = Sodium.seal(trailer, ad: Array("SSsec4".utf8) + [UInt8(truncatingIfNeeded: cls)] + ref + ukey,
                                 key: encryption)
        }
        func open(_ blob: [UInt8]) -> Result<ItemRecord, SecureStoreError> {
            Result { () throws(SecureStoreError) -> ItemRecord in
                try sealer.open(SealedRecord(cls: cls, ref: ref, ukey: ukey, svc: [], acct: [], blob: blob, secret: secret,
                                             mdat: mdat), id: 1)
            }
        }
        let opened = open(blob)
        switch (opened, expected) {
        case (.success(let a), let b?) where a == b: break
        case (.failure(let e), nil) where e.code == .decode: break
        default:
            throw FuzzFinding(name, "open gave \(opened) but the plaintext decodes to \(String(describing: expected))")
        }
        // Any altered byte (nonce, ciphertext or tag) must be refused as damaged.
        let at = Int(plain.reduce(UInt32(0)) { $0 &* 31 &+ UInt32($1) } % UInt32(blob.count))
        blob[at] ^= 0x01
        let tampered = open(blob)
        guard case .failure(let e) = tampered, e.code == .decode else {
            throw FuzzFinding(name, "a blob with byte \(at) flipped was not refused with decode: \(tampered)")
        }
        // A blob of arbitrary bytes (too short, or never sealed) is refused too.
        if case .success = open(plain) { throw FuzzFinding(name, "raw bytes opened as a sealed blob") }
    }
}
