package import SecureStoreCore
package import Foundation

/// The compact binary forms of one record's plaintext (see FORMAT.md): they keep each value's exact case.
///
/// Version 4 (written) holds every attribute and nothing about the secret (sealed on its own with the
/// reference and whether the item has one, ``writeSecret(_:into:)``); a change of secret alone leaves it as
/// stored and seals the new modification date apart (``encodeDate(_:)``), which then overrides the one inside.
/// Version 3 (read) says whether the item has a secret, which is sealed apart; version 2 (read) holds the
/// secret after a "has a secret" flag; version 1 (read) always held one, so a version 1 record with 0 bytes of
/// secret keeps its meaning: an empty secret.
package enum RecordCodec {
    package static let version: UInt8 = 4
    /// The modification date and the "has a secret" flag inside, the secret apart; still read.
    package static let version3: UInt8 = 3
    /// The secret inside the record, after a "has a secret" flag; still read.
    package static let version2: UInt8 = 2
    /// The first version, still read: the secret inside, no "has a secret" flag.
    package static let version1: UInt8 = 1

    /// Format 4: the record without its secret.
    package static func encode(_ record: ItemRecord) -> [UInt8] {
        encode(record, version: version)
    }

    /// Format 3: the record without its secret (whether it has one is in the record); what a schema 3 store
    /// holds (tests build such stores with it).
    package static func encodeFormat3(_ record: ItemRecord) -> [UInt8] {
        encode(record, version: version3)
    }

    /// Format 2: the record with its secret inside (what tests and old readers use).
    package static func encodeWithSecret(_ record: ItemRecord) -> [UInt8] {
        encode(record, version: version2)
    }

    private static func encode(_ record: ItemRecord, version: UInt8) -> [UInt8] {
        let fields = Fields(record, version: version)
        return [UInt8](unsafeUninitializedCapacity: fields.count) { buffer, count in
            fields.write(into: UnsafeMutableRawBufferPointer(buffer))
            count = fields.count
        }
    }

    /// The record's modification date, nil when it has none that is a date (only a record made by hand: the
    /// core dates every item).
    package static func modificationDate(of record: ItemRecord) -> Date? {
        if case .date(let d)? = record[.modificationDate] { return d }
        return nil
    }

    /// Whether `a` and `b` have the same format 4 record: the same class, reference and attributes but for
    /// a modification date that is a date in both (what a change of secret alone leaves as it was). Records
    /// of different attribute counts are taken as different (the caller then seals the record again).
    package static func sameRecordApartFromDate(_ a: ItemRecord, _ b: ItemRecord) -> Bool {
        guard a.itemClass == b.itemClass, a.persistentRef == b.persistentRef else { return false }
        let x = a.entries, y = b.entries
        guard x.count == y.count else { return false }
        for i in x.indices {
            guard x[i].name == y[i].name else { return false }
            if x[i].name == .modificationDate, case .date = x[i].value, case .date = y[i].value { continue }
            guard x[i].value == y[i].value else { return false }
        }
        return true
    }

    /// A record's fields in the order format 4 (or 3, or 2) writes them, and the exact size of the encoding:
    /// the encoder writes into one buffer of that size (the plaintext of a sealed record is written straight
    /// into the buffer it is sealed in, see ``RecordSealer``), with no array per field.
    package struct Fields {
        let record: ItemRecord
        let version: UInt8
        /// The encoding's size in bytes.
        package let count: Int

        package init(_ record: ItemRecord, version: UInt8 = RecordCodec.version) {
            precondition(version >= 2 && version <= 4, "only formats 2 to 4 are written")
            self.record = record
            self.version = version
            var n = 1 + 4 + record.itemClass.rawValue.utf8.count + 4 + record.persistentRef.byteCount + 4
            if version < 4 { n += 1 }
            if version == 2, let data = record.data { n += 4 + data.count }
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
        package func write(into out: UnsafeMutableRawBufferPointer) {
            var w = Writer(out: out)
            w.byte(version)
            w.text(record.itemClass.rawValue)
            record.persistentRef.withUnsafeBytes { w.bytes($0) }
            if version < 4 {
                if let data = record.data {
                    w.byte(1)
                    if version == 2 { w.data(data) }
                } else {
                    w.byte(0)
                }
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

    // MARK: The parts a format 4 row seals apart

    /// The plaintext of a format 4 row's sealed secret: the secret's bytes (none for an item without one),
    /// then the item's persistent reference, the reference's length (u32) and whether the item has a
    /// secret (0 or 1). The reference is there so that a lookup that returns only data can answer from this
    /// part alone; the secret comes first so that it is opened straight into the `Data` that holds it.
    package static func secretCount(_ record: ItemRecord) -> Int {
        (record.data?.count ?? 0) + record.persistentRef.byteCount + 5
    }

    /// Writes ``secretCount(_:)`` bytes of `record`'s secret part into `out`.
    package static func writeSecret(_ record: ItemRecord, into out: UnsafeMutableRawBufferPointer) {
        var at = 0
        func put(_ bytes: UnsafeRawBufferPointer) {
            if bytes.count > 0 { UnsafeMutableRawBufferPointer(rebasing: out[at..<at + bytes.count]).copyMemory(from: bytes) }
            at += bytes.count
        }
        record.data?.withUnsafeBytes { put($0) }
        record.persistentRef.withUnsafeBytes { put($0) }
        out.storeBytes(of: UInt32(truncatingIfNeeded: record.persistentRef.byteCount).bigEndian, toByteOffset: at,
                       as: UInt32.self)
        out[at + 4] = record.data == nil ? 0 : 1
        precondition(at + 5 == out.count, "the secret part's size was miscounted")
    }

    /// The trailer of a format 4 secret part: whether the item has a secret, its reference and how many bytes
    /// of secret come before the trailer; nil when it is not one (a secret flagged absent has no bytes).
    package static func decodeSecretTrailer(_ plain: UnsafeRawBufferPointer)
        -> (present: Bool, ref: PersistentRef, dataCount: Int)?
    {
        guard plain.count >= 5, plain[plain.count - 1] <= 1 else { return nil }
        let present = plain[plain.count - 1] == 1
        let refCount = Int(plain[(plain.count - 5)..<(plain.count - 1)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        let dataCount = plain.count - 5 - refCount
        guard dataCount >= 0, present || dataCount == 0 else { return nil }
        let ref = PersistentRef(bytes: UnsafeRawBufferPointer(rebasing: plain[dataCount..<dataCount + refCount]))
        return (present, ref, dataCount)
    }

    /// The plaintext of a format 4 row's sealed modification date (written by a change of secret alone, which
    /// leaves the record as stored): the date's 8 bytes, as in a record.
    package static func encodeDate(_ date: Date) -> [UInt8] {
        withUnsafeBytes(of: date.timeIntervalSinceReferenceDate.bitPattern.bigEndian, Array.init)
    }

    /// The date in a modification-date part, nil when it is not one (8 bytes, not a NaN).
    package static func decodeDate(_ plain: UnsafeRawBufferPointer) -> Date? {
        guard plain.count == 8 else { return nil }
        let bits = plain.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard !Double(bitPattern: bits).isNaN else { return nil }
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
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

    /// The record in `bytes` (format 1 to 3), or nil when they are not a well-formed encoding. `secret` is the
    /// secret stored apart from a format 3 record (nil: none); formats 1 and 2 hold theirs, so `secret` must be
    /// nil for them.
    package static func decode(_ bytes: [UInt8], secret: [UInt8]? = nil) -> ItemRecord? {
        decode(bytes, secretData: secret.map { Data($0) })
    }

    /// ``decode(_:secret:)`` with the secret already in the `Data` the record will hold.
    package static func decode(_ bytes: [UInt8], secretData secret: Data?) -> ItemRecord? {
        decode(bytes, secret: .opened(secret))
    }

    /// The record in `bytes` (format 1 to 3) without its secret (a read that returns no data): `secretSealed`
    /// says whether the row holds a sealed secret, which must agree with the record's flag; the record's
    /// ``ItemRecord/data`` is nil. A format 1 or 2 record's secret, inside it, is left out too.
    package static func decode(_ bytes: [UInt8], secretSealed: Bool) -> ItemRecord? {
        decode(bytes, secret: .leftSealed(present: secretSealed))
    }

    /// The format 4 record in `bytes` with the parts its row seals apart: the secret (nil: none, or not
    /// opened) and the modification date written by a change of secret alone (nil: none), which replaces the
    /// one inside. Nil when `bytes` are not a format 4 record, or when there is such a date but the record
    /// holds no modification date that is a date, or a later one (dates only move forward).
    package static func decode(format4 bytes: [UInt8], modified: Date?, data: Data?) -> ItemRecord? {
        decode(bytes, secret: .apart(data: data, modified: modified))
    }

    /// The class and reference a format 4 record in `bytes` begins with, its attributes not read: what a find
    /// needs that reads neither attributes nor secrets (``RowRead/referenceOnly(_:)``). Nil when `bytes` are not
    /// a format 4 record or do not begin as one.
    package static func classAndReference(format4 bytes: [UInt8]) -> (itemClass: ItemClass, ref: PersistentRef)? {
        var r = Reader(bytes: bytes)
        return format4Header(&r)
    }

    /// The version byte (format 4), class and reference a format 4 record begins with, read from `r`.
    private static func format4Header(_ r: inout Reader) -> (itemClass: ItemClass, ref: PersistentRef)? {
        guard r.byte() == version, let cls = r.slice().flatMap({ utf8($0) }).flatMap({ ItemClass(rawValue: $0) }),
              let ref = r.slice()
        else { return nil }
        return (cls, ref.withUnsafeBytes { PersistentRef(bytes: $0) })
    }

    /// The class, reference and modification date of a format 4 record in `bytes`, its other attributes
    /// stepped over, not decoded: what an update of the secret alone reads (``RowRead/referenceAndDate(_:)``).
    /// `modified` is the record's own date (nil: it has none, or a value that is no date, which the core never
    /// writes); `apart`, when given, is the row's date part,
    /// which replaces it and must not precede it (as ``decode(format4:modified:data:)`` requires). Nil when
    /// `bytes` are not a format 4 record or do not step over as one, or the dates break that rule.
    package static func classReferenceAndDate(format4 bytes: [UInt8], apart: Date?)
        -> (itemClass: ItemClass, ref: PersistentRef, modified: Date?)?
    {
        var r = Reader(bytes: bytes)
        guard let (cls, ref) = format4Header(&r), let count = r.u32() else { return nil }
        var inside: Date? = nil
        for _ in 0..<count {
            guard let code = r.slice(), let tag = r.byte() else { return nil }
            let isDate = code.elementsEqual(modificationDateCode)
            switch tag {
            case 1, 2: guard r.slice() != nil else { return nil }
            case 3: guard r.u64() != nil else { return nil }
            case 4: guard r.byte() != nil else { return nil }
            case 5:
                guard let n = r.u64(), !Double(bitPattern: n).isNaN else { return nil }
                if isDate { inside = Date(timeIntervalSinceReferenceDate: Double(bitPattern: n)) }
            default: return nil
            }
            if isDate { break }   // codes ascend: nothing after the date is read
        }
        if let apart {
            guard let inside, !(apart < inside) else { return nil }
            return (cls, ref, apart)
        }
        return (cls, ref, inside)
    }

    private static let modificationDateCode = Array(AttributeName.modificationDate.code.utf8)

    /// The format of the record in `bytes` (its first byte), nil for none.
    package static func format(_ bytes: [UInt8]) -> UInt8? {
        guard let v = bytes.first, v >= version1, v <= version else { return nil }
        return v
    }

    /// The parts of a record stored apart from it: a format 3 record's secret, opened (nil: the row has none)
    /// or left sealed; a format 4 record's secret and modification date.
    private enum StoredSecret {
        case opened(Data?)
        case leftSealed(present: Bool)
        case apart(data: Data?, modified: Date?)
    }

    private static func decode(_ bytes: [UInt8], secret stored: StoredSecret) -> ItemRecord? {
        var r = Reader(bytes: bytes)
        guard let v = r.byte(), v == version || v == version3 || v == version2 || v == version1,
              let cls = r.slice().flatMap({ utf8($0) }).flatMap({ ItemClass(rawValue: $0) }),
              let ref = r.slice()
        else { return nil }
        let data: Data?
        var modified: Date? = nil
        if case .apart(let secret, let date) = stored {
            guard v == version else { return nil }
            (data, modified) = (secret, date)
        } else {
            guard v != version else { return nil }
            let present: Bool, secret: Data?, omitted: Bool
            switch stored {
            case .opened(let data): (present, secret, omitted) = (data != nil, data, false)
            case .leftSealed(let sealed): (present, secret, omitted) = (sealed, nil, true)
            case .apart: return nil
            }
            if v != version3, present { return nil }
            if v == version1 {
                guard let d = r.slice() else { return nil }
                data = omitted ? nil : copied(d)
            } else {
                switch (r.byte(), v == version3) {
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
        }
        guard let count = r.u32() else { return nil }
        // Read in the record's own order (ascending codes, checked below): the entries become its layout as
        // they are (`ItemRecord`'s fixed slots), with no dictionary on the way.
        var entries: [ItemRecord.Entry] = []
        entries.reserveCapacity(min(Int(count) + 1, 64))
        var previous: ArraySlice<UInt8>?
        var replacedDate = false
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
            // A format 4 row's later modification date, sealed apart, replaces the one inside.
            if let modified, name == .modificationDate {
                guard case .date(let inside) = value, !(modified < inside) else { return nil }
                entries.append(ItemRecord.Entry(name, .date(modified)))
                replacedDate = true
                continue
            }
            entries.append(ItemRecord.Entry(name, value))
        }
        guard r.atEnd, modified == nil || replacedDate else { return nil }
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
