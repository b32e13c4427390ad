package import SecureStore
package import Foundation

/// The compact binary form of one record's plaintext (see FORMAT.md): it keeps each value's exact case.
///
/// Version 3 (written) holds everything but the secret, and says whether the item has one: the secret is
/// sealed on its own (a column of its own in a table). Version 2 (read) holds the secret after a "has a secret"
/// flag; version 1 (read) always held one, so a version 1 record with 0 bytes of secret keeps its meaning: an
/// empty secret.
package enum RecordCodec {
    package static let version: UInt8 = 3
    /// The secret inside the record, after a "has a secret" flag; still read.
    package static let version2: UInt8 = 2
    /// The first version, still read: the secret inside, no "has a secret" flag.
    package static let version1: UInt8 = 1

    /// Format 3: the record without its secret (whether it has one is in the record).
    package static func encode(_ record: ItemRecord) -> [UInt8] {
        encode(record, version: version)
    }

    /// Format 2: the record with its secret inside (what tests and old readers use).
    package static func encodeWithSecret(_ record: ItemRecord) -> [UInt8] {
        encode(record, version: version2)
    }

    private static func encode(_ record: ItemRecord, version: UInt8) -> [UInt8] {
        var out: [UInt8] = [version]
        appendBytes(&out, Array(record.itemClass.rawValue.utf8))
        appendBytes(&out, Array(record.persistentRef.data))
        if let data = record.data {
            out.append(1)
            if version == version2 { appendBytes(&out, Array(data)) }
        } else {
            out.append(0)
        }
        let names = record.attributes.keys.sorted()
        appendU32(&out, UInt32(names.count))
        for name in names {
            guard let value = record.attributes[name] else { continue }
            appendBytes(&out, Array(name.code.utf8))
            switch value {
            case .string(let s): out.append(1); appendBytes(&out, Array(s.utf8))
            case .data(let d): out.append(2); appendBytes(&out, Array(d))
            case .number(let n): out.append(3); appendU64(&out, UInt64(bitPattern: n))
            case .bool(let b): out.append(4); out.append(b ? 1 : 0)
            case .date(let d): out.append(5); appendU64(&out, d.timeIntervalSinceReferenceDate.bitPattern)
            }
        }
        return out
    }

    /// The record in `bytes`, or nil when they are not a well-formed encoding. `secret` is the secret stored
    /// apart from a format 3 record (nil: none); formats 1 and 2 hold theirs, so `secret` must be nil for them.
    package static func decode(_ bytes: [UInt8], secret: [UInt8]? = nil) -> ItemRecord? {
        decode(bytes, secretData: secret.map { Data($0) })
    }

    /// ``decode(_:secret:)`` with the secret already in the `Data` the record will hold.
    package static func decode(_ bytes: [UInt8], secretData secret: Data?) -> ItemRecord? {
        var r = Reader(bytes: bytes)
        guard let v = r.byte(), v == version || v == version2 || v == version1,
              let cls = r.slice().flatMap({ utf8($0) }).flatMap({ ItemClass(rawValue: $0) }),
              let ref = r.slice()
        else { return nil }
        let data: Data?
        if v != version, secret != nil { return nil }
        if v == version1 {
            guard let d = r.slice() else { return nil }
            data = Data(d)
        } else {
            switch (r.byte(), v == version) {
            case (0, true), (0, false):
                guard secret == nil else { return nil }
                data = nil
            case (1, true):
                guard let secret else { return nil }
                data = secret
            case (1, false):
                guard let d = r.slice() else { return nil }
                data = Data(d)
            default: return nil
            }
        }
        guard let count = r.u32() else { return nil }
        var attributes: [AttributeName: AttributeValue] = [:]
        attributes.reserveCapacity(min(Int(count), 64))
        var previous: AttributeName?
        for _ in 0..<count {
            // Exactly what `encode` writes: attribute codes (not readable names), each once, in order.
            guard let code = r.slice(), let name = AttributeName.withCode(utf8: code),
                  previous.map({ $0 < name }) ?? true, let tag = r.byte()
            else { return nil }
            previous = name
            let value: AttributeValue
            switch tag {
            case 1:
                guard let b = r.slice(), let s = utf8(b) else { return nil }
                value = .string(s)
            case 2:
                guard let b = r.slice() else { return nil }
                value = .data(Data(b))
            case 3:
                guard let n = r.u64() else { return nil }
                value = .number(Int64(bitPattern: n))
            case 4:
                guard let b = r.byte(), b <= 1 else { return nil }
                value = .bool(b == 1)
            case 5:
                // A NaN date never equals itself: not a date this library writes (the core refuses them).
                guard let n = r.u64(), !Double(bitPattern: n).isNaN else { return nil }
                value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: n)))
            default:
                return nil
            }
            attributes[name] = value
        }
        guard r.atEnd else { return nil }
        return ItemRecord(persistentRef: PersistentRef(data: Data(ref)), itemClass: cls, attributes: attributes,
                          data: data)
    }

    /// Valid UTF-8 as a string, else nil (the standard library's validation: much cheaper than Foundation's
    /// `String(bytes:encoding:)` on every attribute of every record read).
    /// ASCII (the usual service, account and label) is taken as it is; anything else is validated.
    private static func utf8(_ bytes: ArraySlice<UInt8>) -> String? {
        let ascii = bytes.withUnsafeBytes { raw in
            var any: UInt8 = 0
            for byte in raw { any |= byte }
            return any < 0x80
        }
        return ascii ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }

    private static func appendU32(_ out: inout [UInt8], _ n: UInt32) {
        withUnsafeBytes(of: n.bigEndian) { out.append(contentsOf: $0) }
    }

    private static func appendU64(_ out: inout [UInt8], _ n: UInt64) {
        withUnsafeBytes(of: n.bigEndian) { out.append(contentsOf: $0) }
    }

    private static func appendBytes(_ out: inout [UInt8], _ bytes: [UInt8]) {
        appendU32(&out, UInt32(bytes.count))
        out.append(contentsOf: bytes)
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        var atEnd: Bool { at == bytes.count }

        mutating func byte() -> UInt8? {
            guard at < bytes.count else { return nil }
            defer { at += 1 }
            return bytes[at]
        }

        mutating func u32() -> UInt32? {
            guard bytes.count - at >= 4 else { return nil }
            var n: UInt32 = 0
            for i in 0..<4 { n = n << 8 | UInt32(bytes[at + i]) }
            at += 4
            return n
        }

        mutating func u64() -> UInt64? {
            guard bytes.count - at >= 8 else { return nil }
            var n: UInt64 = 0
            for i in 0..<8 { n = n << 8 | UInt64(bytes[at + i]) }
            at += 8
            return n
        }

        /// A length-prefixed chunk without copying it.
        mutating func slice() -> ArraySlice<UInt8>? {
            guard let n = u32(), bytes.count - at >= Int(n) else { return nil }
            defer { at += Int(n) }
            return bytes[at..<at + Int(n)]
        }
    }
}
