package import SecureStoreCore
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
        let fields = Fields(record, withSecret: version == version2)
        return [UInt8](unsafeUninitializedCapacity: fields.count) { buffer, count in
            fields.write(version: version, into: UnsafeMutableRawBufferPointer(buffer))
            count = fields.count
        }
    }

    /// A record's fields in the order format 3 (or 2) writes them, and the exact size of the encoding: the
    /// encoder writes into one buffer of that size (the plaintext of a sealed record is written straight into
    /// the buffer it is sealed in, see ``RecordSealer``), with no array per field.
    package struct Fields {
        let record: ItemRecord
        let withSecret: Bool
        /// The encoding's size in bytes.
        package let count: Int

        package init(_ record: ItemRecord, withSecret: Bool = false) {
            self.record = record
            self.withSecret = withSecret
            var n = 1 + 4 + record.itemClass.rawValue.utf8.count + 4 + record.persistentRef.byteCount + 1 + 4
            if withSecret, let data = record.data { n += 4 + data.count }
            // The record keeps its attributes in byte order of their codes: the order written (and required
            // by `decode`), so they are written as they are, without a sort or a copy.
            for entry in record.entries {
                n += 4 + entry.name.withCodeUTF8 { $0.count } + 1
                switch entry.value {
                case .string(let s): n += 4 + s.utf8.count
                case .data(let d): n += 4 + d.count
                case .number, .date: n += 8
                case .bool: n += 1
                }
            }
            count = n
        }

        /// Writes the encoding (exactly ``count`` bytes) to `out`.
        package func write(version: UInt8, into out: UnsafeMutableRawBufferPointer) {
            var w = Writer(out: out)
            w.byte(version)
            w.text(record.itemClass.rawValue)
            record.persistentRef.withUnsafeBytes { w.bytes($0) }
            if let data = record.data {
                w.byte(1)
                if withSecret { w.data(data) }
            } else {
                w.byte(0)
            }
            w.u32(UInt32(record.attributeCount))
            for entry in record.entries {
                entry.name.withCodeUTF8 { w.bytes(UnsafeRawBufferPointer($0)) }
                switch entry.value {
                case .string(let s): w.byte(1); w.text(s)
                case .data(let d): w.byte(2); w.data(d)
                case .number(let n): w.byte(3); w.u64(UInt64(bitPattern: n))
                case .bool(let b): w.byte(4); w.byte(b ? 1 : 0)
                case .date(let d): w.byte(5); w.u64(d.timeIntervalSinceReferenceDate.bitPattern)
                }
            }
            precondition(w.at == count, "the record encoding's size was miscounted")
        }
    }

    /// Writes into a buffer sized exactly for what is written (checked by the caller at the end).
    private struct Writer {
        let out: UnsafeMutableRawBufferPointer
        var at = 0

        mutating func byte(_ b: UInt8) {
            out[at] = b
            at += 1
        }

        mutating func u32(_ n: UInt32) {
            out.storeBytes(of: n.bigEndian, toByteOffset: at, as: UInt32.self)
            at += 4
        }

        mutating func u64(_ n: UInt64) {
            out.storeBytes(of: n.bigEndian, toByteOffset: at, as: UInt64.self)
            at += 8
        }

        mutating func bytes(_ b: UnsafeRawBufferPointer) {
            u32(UInt32(b.count))
            if b.count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: out[at..<at + b.count]).copyMemory(from: b)
            }
            at += b.count
        }

        mutating func text(_ s: String) {
            var s = s
            s.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }   // copies only a bridged string
        }

        mutating func data(_ d: Data) {
            d.withUnsafeBytes { bytes($0) }
        }
    }

    /// The record in `bytes`, or nil when they are not a well-formed encoding. `secret` is the secret stored
    /// apart from a format 3 record (nil: none); formats 1 and 2 hold theirs, so `secret` must be nil for them.
    package static func decode(_ bytes: [UInt8], secret: [UInt8]? = nil) -> ItemRecord? {
        decode(bytes, secretData: secret.map { Data($0) })
    }

    /// ``decode(_:secret:)`` with the secret already in the `Data` the record will hold.
    package static func decode(_ bytes: [UInt8], secretData secret: Data?) -> ItemRecord? {
        decode(bytes, secret: .opened(secret))
    }

    /// The record in `bytes` without its secret (a read that returns no data): `secretSealed` says whether the
    /// row holds a sealed secret, which must agree with the record's flag; the record's ``ItemRecord/data`` is
    /// nil. A format 1 or 2 record's secret, inside it, is left out too.
    package static func decode(_ bytes: [UInt8], secretSealed: Bool) -> ItemRecord? {
        decode(bytes, secret: .leftSealed(present: secretSealed))
    }

    /// The secret stored apart from a format 3 record: opened (nil: the row has none), or left sealed.
    private enum StoredSecret {
        case opened(Data?)
        case leftSealed(present: Bool)
    }

    private static func decode(_ bytes: [UInt8], secret stored: StoredSecret) -> ItemRecord? {
        var r = Reader(bytes: bytes)
        guard let v = r.byte(), v == version || v == version2 || v == version1,
              let cls = r.slice().flatMap({ utf8($0) }).flatMap({ ItemClass(rawValue: $0) }),
              let ref = r.slice()
        else { return nil }
        let present: Bool, secret: Data?, omitted: Bool
        switch stored {
        case .opened(let data): (present, secret, omitted) = (data != nil, data, false)
        case .leftSealed(let sealed): (present, secret, omitted) = (sealed, nil, true)
        }
        let data: Data?
        if v != version, present { return nil }
        if v == version1 {
            guard let d = r.slice() else { return nil }
            data = omitted ? nil : copied(d)
        } else {
            switch (r.byte(), v == version) {
            case (0, true), (0, false):
                guard !present else { return nil }
                data = nil
            case (1, true):
                guard present else { return nil }
                data = secret
            case (1, false):
                guard let d = r.slice() else { return nil }
                data = omitted ? nil : copied(d)
            default: return nil
            }
        }
        guard let count = r.u32() else { return nil }
        // Read in the record's own order (ascending codes, checked below): the entries become its layout as
        // they are (`ItemRecord`'s fixed slots), with no dictionary on the way.
        var entries: [ItemRecord.Entry] = []
        entries.reserveCapacity(min(Int(count), 64))
        var previous: ArraySlice<UInt8>?
        for _ in 0..<count {
            // Exactly what `encode` writes: attribute codes (not readable names), each once, in byte order
            // (the codes' bytes compared, as `encode` sorts them).
            guard let code = r.slice(), let name = AttributeName.withCode(utf8: code),
                  previous.map({ $0.lexicographicallyPrecedes(code) }) ?? true, let tag = r.byte()
            else { return nil }
            previous = code
            let value: AttributeValue
            switch tag {
            case 1:
                guard let b = r.slice(), let s = utf8(b) else { return nil }
                value = .string(s)
            case 2:
                guard let b = r.slice() else { return nil }
                value = .data(copied(b))
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
            entries.append(ItemRecord.Entry(name, value))
        }
        guard r.atEnd else { return nil }
        return ItemRecord(persistentRef: ref.withUnsafeBytes { PersistentRef(bytes: $0) }, itemClass: cls, ordered: entries,
                          data: data)
    }

    /// The bytes of `slice` as `Data`, copied in one block (`Data`'s generic sequence initializer goes a byte
    /// at a time).
    private static func copied(_ slice: ArraySlice<UInt8>) -> Data {
        slice.withUnsafeBytes { Data($0) }
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
