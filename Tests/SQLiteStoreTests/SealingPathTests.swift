import Testing
import Foundation
import SecureStoreCore
import SecureStoreCrypto

/// The sealing path's shortcuts (blind-index states keyed once per store, records encoded and sealed in one
/// buffer) against independent references: keyed BLAKE2b-256 answers from another implementation, and the
/// record format written the plain way, a field at a time, as FORMAT.md describes it.
@Suite("Sealing path")
struct SealingPathTests {
    /// Keyed BLAKE2b-256 of `domain ‖ bytes` with the key `(i * 37 + 11) & 0xff` (i = 0…31) over the bytes
    /// `(i * 7 + 3) & 0xff` (i = 0…n-1), from Python's `hashlib.blake2b(…, key=…, digest_size=32)`: lengths
    /// on both sides of BLAKE2b's 128-byte block and of libsodium's two-block buffer.
    static let vectors: [(count: Int, domain: UInt8, hex: String)] = [
        (0, 1, "2f9d0cc2988233d3a30921d6d1b34f6ef15810acdfbac10dc8c27442efd322da"),
        (1, 2, "068769400430448ebce18d11c4ad7676b191f327128ab4c2bef668ea8a55d3bc"),
        (31, 4, "896d09177d241d238762429433e50f272d6aea155829ace1d2576276d2dac874"),
        (126, 3, "1d6ec94eebe3261fb44211d45e648bd9e6f460748efe777e2706c7d15a1a9c98"),
        (127, 4, "42984a4eefdd92807f77853cf6db9b6c8b6b37414cacebfa2bd3ee96f1eaad9e"),
        (128, 1, "a5199cee5b7b58f3e20a7536577f505d856f0ef96de844b01e7bbe03f6fc01c5"),
        (129, 2, "959868063f6865ac8851882b345ddc7a3e3f7a3d2f012e466fbd62e262ec059a"),
        (255, 4, "c93e2ddcced39962437c37397e8435f5494cc3974d071b75ba6789ca46fe3e6e"),
        (256, 1, "18e34aece2c208d6c997add7c63bcb430907ca8c15add92756993c71d9c2b71f"),
        (257, 2, "7410ce823dca3a231dd2f4d4050a014bd1e34b3aadffc7bbead016c2af608e0f"),
        (1000, 1, "706d55384b3dee0432f7b8c5e5c001395002660394be133a51f42849a9e5d659"),
    ]

    @Test("blind indexes from the per-store keyed states equal keyed BLAKE2b-256 of domain ‖ bytes, call after call")
    func blindIndexVectors() throws {
        let key = try SecretKey(copying: (0..<32).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) })
        let indexer = try BlindIndexKey(key, domains: 1...4)
        // Twice, forwards then backwards: a hash must leave its domain's shared state as it found it.
        for vector in Self.vectors + Self.vectors.reversed() {
            let bytes = (0..<vector.count).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
            let index = bytes.withUnsafeBytes { indexer.index(domain: vector.domain, $0) }
            #expect(index.map { String(format: "%02x", $0) }.joined() == vector.hex, "\(vector.count) bytes")
        }
    }

    /// FORMAT.md's record, written a field at a time into a growing array (format 4; or 3, or 2 with the secret).
    static func reference(_ record: ItemRecord, version: UInt8) -> [UInt8] {
        func u32(_ n: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(n).bigEndian, Array.init) }
        func u64(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian, Array.init) }
        func chunk(_ b: [UInt8]) -> [UInt8] { u32(b.count) + b }
        var out: [UInt8] = [version]
        out += chunk(Array(record.itemClass.rawValue.utf8)) + chunk(Array(record.persistentRef.data))
        if version < 4 {
            if let data = record.data { out += [1] + (version == 2 ? chunk(Array(data)) : []) } else { out += [0] }
        }
        let names = record.attributes.keys.sorted()   // by code (AttributeName's own order)
        out += u32(names.count)
        for name in names {
            out += chunk(Array(name.code.utf8))
            switch record.attributes[name] {
            case .string(let s)?: out += [1] + chunk(Array(s.utf8))
            case .data(let d)?: out += [2] + chunk(Array(d))
            case .number(let n)?: out += [3] + u64(UInt64(bitPattern: n))
            case .bool(let b)?: out += [4, b ? 1 : 0]
            case .date(let d)?: out += [5] + u64(d.timeIntervalSinceReferenceDate.bitPattern)
            case nil: break
            }
        }
        return out
    }

    /// Every attribute name, so generated records hold any set of codes.
    static let names: [AttributeName] = [
        .accessible, .accessGroup, .synchronizable, .creationDate, .modificationDate, .label, .description, .comment,
        .creator, .type, .isInvisible, .isNegative, .account, .service, .generic, .securityDomain, .server, .protocol,
        .authenticationType, .port, .path, .certificateType, .certificateEncoding, .subject, .issuer, .serialNumber,
        .subjectKeyID, .publicKeyHash, .keyClass, .applicationLabel, .isPermanent, .applicationTag, .keySizeInBits,
        .effectiveKeySize, .canEncrypt, .canDecrypt, .canDerive, .canSign, .canVerify, .canWrap, .canUnwrap,
        .isSensitive, .isExtractable, .startDate, .endDate,
    ]

    static func randomRecord(_ rng: inout some RandomNumberGenerator) -> ItemRecord {
        let texts = ["", "s", "Zürich", "日本語", String(repeating: "x", count: 300), "a\u{0}b"]
        var attributes: [AttributeName: AttributeValue] = [:]
        for name in names.shuffled(using: &rng).prefix(Int.random(in: 0...names.count, using: &rng)) {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: attributes[name] = .string(texts.randomElement(using: &rng) ?? "")
            case 1: attributes[name] = .data(Data((0..<Int.random(in: 0...200, using: &rng)).map { UInt8(truncatingIfNeeded: $0) }))
            case 2: attributes[name] = .number(Int64.random(in: .min ... .max, using: &rng))
            case 3: attributes[name] = .bool(Bool.random(using: &rng))
            default: attributes[name] = .date(Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &rng)))
            }
        }
        let data: Data? = switch Int.random(in: 0..<3, using: &rng) {
        case 0: nil
        case 1: Data()
        default: Data((0..<Int.random(in: 1...5000, using: &rng)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        }
        return ItemRecord(persistentRef: .random(), itemClass: ItemClass.allCases.randomElement(using: &rng) ?? .genericPassword,
                          attributes: attributes, data: data)
    }

    @Test("the one-buffer encoder writes FORMAT.md's records byte for byte (formats 4, 3, 2), and sealed rows open to the same record, in part as asked")
    func encoderAndSealer() throws {
        var rng = SystemRandomNumberGenerator()
        let sealer = try RecordSealer.make(.raw(Data((0..<32).map { UInt8($0) })), storedKDF: nil, cost: .minimum,
                                           creatingKeyFile: false)
        var previous: SealedRecord?
        var previousDate: [UInt8]?
        for round in 0..<300 {
            var record = Self.randomRecord(&rng)
            if round % 2 == 0 {   // half of them with a modification date that is a date, as every stored item has
                var attributes = record.attributes
                attributes[.modificationDate] = .date(Date(timeIntervalSinceReferenceDate: Double(round) * 1.5))
                record = ItemRecord(persistentRef: record.persistentRef, itemClass: record.itemClass,
                                    attributes: attributes, data: record.data)
            }
            #expect(RecordCodec.encode(record) == Self.reference(record, version: 4))
            #expect(RecordCodec.encodeFormat3(record) == Self.reference(record, version: 3))
            #expect(RecordCodec.encodeWithSecret(record) == Self.reference(record, version: 2))
            let sealed = sealer.seal(record)
            #expect(sealed.ref == sealer.refIndex(record.persistentRef))
            #expect(sealed.ukey == sealer.uniqueKeyIndex(record.uniqueKey))
            #expect(sealed.svc == sealer.attributeIndex(.service, record.attributes[.service]))
            #expect(sealed.acct == sealer.attributeIndex(.account, record.attributes[.account]))
            #expect(sealed.blob != nil && sealed.secret != nil && sealed.mdat == nil, "a new row: record and secret parts")
            let opened = try sealer.open(sealed, id: 1)
            #expect(opened == record && opened.data == record.data)
            // A change of secret alone: the new secret part and the date sealed apart, with the stored record.
            let rotated = record.updated([:], modified: Date(timeIntervalSinceReferenceDate: 1e9 + Double(round)),
                                         data: Data("rotated \(round)".utf8))
            let partial = sealer.seal(rotated, parts: .secret)
            #expect(partial.blob == nil && partial.secret != nil && partial.mdat != nil)
            let afterRotation = SealedRecord(cls: sealed.cls, ref: sealed.ref, ukey: sealed.ukey, svc: sealed.svc,
                                             acct: sealed.acct, blob: sealed.blob, secret: partial.secret, mdat: partial.mdat)
            if RecordCodec.modificationDate(of: record) != nil {
                #expect(try sealer.open(afterRotation, id: 1) == rotated)
            } else {   // a record made by hand without a date: nothing to put a date over
                #expect(partial.mdat == nil || (try? sealer.open(afterRotation, id: 1)) == nil)
            }
            // Without data: the same record, no secret.
            let withoutData = try sealer.open(sealed, id: 1, .withoutData)
            #expect(withoutData == ItemRecord(persistentRef: record.persistentRef, itemClass: record.itemClass,
                                              attributes: record.attributes, data: nil))
            // By key: the secret part alone gives the reference, the secret and the key it was found by.
            let byKey = try sealer.open(sealed, id: 1, .dataOnly(record.uniqueKey))
            #expect(byKey.persistentRef == record.persistentRef && byKey.data == record.data
                    && byKey.uniqueKey == record.uniqueKey && byKey.itemClass == record.itemClass && byKey.attributeCount == 0)
            // By key for a change of secret alone: the reference and the modification date, no other attribute
            // and no secret; after such a change, the date part's date.
            let date = RecordCodec.modificationDate(of: record)
            let dated = try sealer.open(sealed, id: 1, .referenceAndDate(record.uniqueKey))
            #expect(dated.persistentRef == record.persistentRef && dated.itemClass == record.itemClass && dated.data == nil
                    && dated.uniqueKey == record.uniqueKey && dated.attributesOmitted
                    && RecordCodec.modificationDate(of: dated) == date && dated.attributeCount == (date == nil ? 0 : 1))
            #expect(RecordCodec.classReferenceAndDate(format4: RecordCodec.encode(record), apart: nil)?.modified == date)
            if date != nil {
                let rotatedDate = try sealer.open(afterRotation, id: 1, .referenceAndDate(record.uniqueKey))
                #expect(RecordCodec.modificationDate(of: rotatedDate) == RecordCodec.modificationDate(of: rotated))
                #expect(rotatedDate.attributeCount == 1 && rotatedDate.data == nil)
            }
            // The format 3 rows of schema 3 stores still open to the same record.
            #expect(try sealer.open(sealer.sealForTesting(record, format: 3), id: 1) == record)
            // A flipped byte anywhere in any sealed part is refused, whichever parts the read opens.
            func flipped(_ bytes: [UInt8]?) -> [UInt8]? {
                guard var bytes else { return nil }
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= 0x01
                return bytes
            }
            let damaged = [
                SealedRecord(cls: sealed.cls, ref: sealed.ref, ukey: sealed.ukey, svc: sealed.svc, acct: sealed.acct,
                             blob: flipped(sealed.blob), secret: sealed.secret, mdat: sealed.mdat),
                SealedRecord(cls: sealed.cls, ref: sealed.ref, ukey: sealed.ukey, svc: sealed.svc, acct: sealed.acct,
                             blob: sealed.blob, secret: flipped(sealed.secret), mdat: sealed.mdat),
                SealedRecord(cls: sealed.cls, ref: sealed.ref, ukey: sealed.ukey, svc: sealed.svc, acct: sealed.acct,
                             blob: sealed.blob, secret: partial.secret, mdat: flipped(partial.mdat) ?? [0]),
            ]
            for (part, row) in damaged.enumerated() {
                #expect(throws: SecureStoreError.self, "part \(part)") { _ = try sealer.open(row, id: 1) }
            }
            #expect(throws: SecureStoreError.self) { _ = try sealer.open(damaged[1], id: 1, .dataOnly(record.uniqueKey)) }
            for row in [damaged[0], damaged[2]] where row.mdat != [0] {   // the record and date parts: what it opens
                #expect(throws: SecureStoreError.self) { _ = try sealer.open(row, id: 1, .referenceAndDate(record.uniqueKey)) }
            }
            // Another row's secret part or date (its own valid seal) does not open in this row: each is bound to
            // its row's reference (and the secret to its class and unique key).
            if let other = previous {
                let swappedSecret = SealedRecord(cls: sealed.cls, ref: sealed.ref, ukey: sealed.ukey, svc: sealed.svc,
                                                 acct: sealed.acct, blob: sealed.blob, secret: other.secret, mdat: sealed.mdat)
                #expect(throws: SecureStoreError.self) { _ = try sealer.open(swappedSecret, id: 1, .dataOnly(record.uniqueKey)) }
                if let otherDate = previousDate {
                    let swappedDate = SealedRecord(cls: sealed.cls, ref: sealed.ref, ukey: sealed.ukey, svc: sealed.svc,
                                                   acct: sealed.acct, blob: sealed.blob, secret: sealed.secret, mdat: otherDate)
                    #expect(throws: SecureStoreError.self) { _ = try sealer.open(swappedDate, id: 1, .withoutData) }
                    #expect(throws: SecureStoreError.self) {
                        _ = try sealer.open(swappedDate, id: 1, .referenceAndDate(record.uniqueKey))
                    }
                }
                // The same secret part under another unique-key index (a row whose `ukey` column was swapped).
                guard other.ukey != sealed.ukey else { (previous, previousDate) = (sealed, partial.mdat); continue }
                let movedKey = SealedRecord(cls: sealed.cls, ref: sealed.ref, ukey: other.ukey, svc: sealed.svc,
                                            acct: sealed.acct, blob: sealed.blob, secret: sealed.secret, mdat: sealed.mdat)
                #expect(throws: SecureStoreError.self) { _ = try sealer.open(movedKey, id: 1, .dataOnly(record.uniqueKey)) }
            }
            (previous, previousDate) = (sealed, partial.mdat)
        }
    }
}
