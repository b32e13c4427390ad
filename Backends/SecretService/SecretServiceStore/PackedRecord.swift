import Foundation
import SecureStoreCore

/// The packed record (``Mapping/recordKeyV4``; ``Mapping/recordKey`` in v2 and v3): the record's attributes,
/// its insertion sequence, whether it has a secret and (v3, v4) its class, in one attribute value.
///
/// Written as v4, `4:` + unpadded base64 of
///
///     header u8 · sequence varint · entries…
///
/// The header's bit 0 says the record has a secret, bits 1–3 are its class (``classes``), and bits 4–7 stand
/// for the values almost every record has, which then have no entry: bit 4 `sync` false, bit 5 `pdmn` `ak`,
/// bit 6 `agrp` `securestore`, bit 7 `mdat` equal to `cdat` (both present). Entries follow in increasing code
/// number to the end: `number u8` (the attribute's place in ``codes``) · tag u8 · body, tags `s` text and `d`
/// data (length varint · bytes), `n` a number (zigzag varint), `0`/`1` a flag (no body), `t` a date (the bit
/// pattern of its `timeIntervalSinceReferenceDate`, 8 bytes big-endian). A text value that is also a plain
/// attribute (`service`, `account`, `server`) has no entry: the item's plain attribute is the value. A varint
/// is LEB128 (7 bits a byte, low first, shortest form).
///
/// v3 (read only), `3:` + base64 of
///
///     flags u8 (bit 0: has a secret) · class length u8 · class ASCII · sequence varint · count varint ·
///     count × (code length u8 · code UTF-8 · tag u8 · value length varint · value)
///
/// where tag `p` (no length, no value) means "the text of the item's plain attribute". v2 (read only), `2:` +
/// base64 of
///
///     flags u8 · sequence u64 · count u16 · count × (code length u8 · code · tag u8 · value length u32 · value)
///
/// (integers big-endian). Tags of v2 and v3: `s` text (UTF-8), `d` data, `n` Int64 (8 bytes big-endian), `b` one
/// byte 0/1, `t` the date as in v4. Decoding is strict: exact lengths, shortest varints, known codes and tags,
/// no repeated code, nothing after the last attribute.
enum PackedRecord {
    static let prefix = "3:"
    static let v2Prefix = "2:"
    static let v4Prefix = "4:"

    /// v4's class numbers (frozen: a stored item's meaning must not change).
    static let classes: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key, .identity]
    /// v4's attribute numbers: Apple's codes, in this frozen order (`keyType` and `type` share `type`).
    static let codes: [String] = [
        "pdmn", "agrp", "sync", "cdat", "mdat", "labl", "desc", "icmt", "crtr", "type", "invi", "nega", "acct",
        "svce", "gena", "sdmn", "srvr", "ptcl", "atyp", "port", "path", "ctyp", "cenc", "subj", "issr", "slnr",
        "skid", "pkhh", "kcls", "klbl", "perm", "atag", "bsiz", "esiz", "encr", "decr", "drve", "sign", "vrfy",
        "wrap", "unwp", "sens", "extr", "sdat", "edat",
    ]
    static let numberOfCode: [String: UInt8] = Dictionary(uniqueKeysWithValues: codes.enumerated().map { ($1, UInt8($0)) })
    /// The values the header's bits 4–6 stand for (frozen, like the tables).
    static let implied: [(bit: UInt8, name: AttributeName, value: AttributeValue)] = [
        (0x10, .synchronizable, .bool(false)), (0x20, .accessible, .string("ak")), (0x40, .accessGroup, .string("securestore")),
    ]
    static let sameDates: UInt8 = 0x80
    /// The number of an entry whose code follows it (code length u8 · code UTF-8): a code missing from
    /// ``codes``. Such entries come last, in increasing code order.
    static let escape: UInt8 = 0xFF

    static func encode(_ record: ItemRecord, sequence: UInt64) -> String {
        guard let classNumber = classes.firstIndex(of: record.itemClass) else { return "" }   // every class is listed
        var header = UInt8(record.data == nil ? 0 : 1) | UInt8(classNumber) << 1
        var skip: Set<AttributeName> = []
        for (bit, name, value) in implied where record[name] == value {
            header |= bit
            skip.insert(name)
        }
        if let created = record[.creationDate], record[.modificationDate] == created, case .date = created {
            header |= sameDates
            skip.insert(.modificationDate)
        }
        var entries: [(number: UInt8, code: String, value: AttributeValue)] = []
        for entry in record.entries where !skip.contains(entry.name) {
            let (name, value) = (entry.name, entry.value)
            if case .string(let s) = value, Mapping.isSafe(s), Mapping.plainKeys.contains(where: { $0.0 == name }) { continue }
            entries.append((numberOfCode[name.code] ?? escape, name.code, value))
        }
        entries.sort { ($0.number, $0.code) < ($1.number, $1.code) }
        var out: [UInt8] = [header]
        appendVarint(sequence, to: &out)
        for (number, code, value) in entries {
            out.append(number)
            if number == escape {   // a code missing from the table (none is: a test checks it)
                out.append(UInt8(code.utf8.count))
                out += Array(code.utf8)
            }
            switch value {
            case .string(let s):
                out.append(UInt8(ascii: "s"))
                appendVarint(UInt64(s.utf8.count), to: &out)
                out += Array(s.utf8)
            case .data(let d):
                out.append(UInt8(ascii: "d"))
                appendVarint(UInt64(d.count), to: &out)
                out += Array(d)
            case .number(let n):
                out.append(UInt8(ascii: "n"))
                appendVarint(UInt64(bitPattern: (n << 1) ^ (n >> 63)), to: &out)
            case .bool(let b):
                out.append(UInt8(ascii: b ? "1" : "0"))
            case .date(let date):
                out.append(UInt8(ascii: "t"))
                out += bigEndian(date.timeIntervalSinceReferenceDate.bitPattern)
            }
        }
        return v4Prefix + Mapping.base64(out)
    }

    /// A v4 packed record; nil for anything malformed. `plain`: the item's attributes, for the values stored
    /// only as plain attributes.
    static func decodeV4(_ text: String, plain: [String: String])
        -> (itemClass: ItemClass, values: [AttributeName: AttributeValue], hasData: Bool, sequence: UInt64)?
    {
        guard text.hasPrefix(v4Prefix), let bytes = Mapping.unbase64(text.dropFirst(v4Prefix.count)) else { return nil }
        var at = 0
        func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, bytes.count - at >= n else { return nil }
            defer { at += n }
            return bytes[at..<at + n]
        }
        guard let header = take(1)?.first, Int(header >> 1 & 0x07) < classes.count,
              let sequence = varint(bytes, &at) else { return nil }
        let itemClass = classes[Int(header >> 1 & 0x07)]
        var values: [AttributeName: AttributeValue] = [:]
        for (bit, name, value) in implied where header & bit != 0 { values[name] = value }
        var last = -1
        var lastCode = ""
        while at < bytes.count {
            guard let number = take(1)?.first, Int(number) >= last else { return nil }
            let code: String
            if number == escape {
                guard let length = take(1)?.first, let codeBytes = take(Int(length)),
                      let c = String(validating: codeBytes, as: UTF8.self), c > lastCode, numberOfCode[c] == nil else { return nil }
                (code, lastCode) = (c, c)
            } else {
                guard Int(number) > last, Int(number) < codes.count else { return nil }
                code = codes[Int(number)]
            }
            guard let name = AttributeName(codeOrName: code), name.code == code, values[name] == nil,
                  let tag = take(1)?.first else { return nil }
            last = Int(number)
            let value: AttributeValue
            switch tag {
            case UInt8(ascii: "s"), UInt8(ascii: "d"):
                guard let size = varint(bytes, &at), size <= UInt64(bytes.count), let body = take(Int(size)) else { return nil }
                if tag == UInt8(ascii: "d") {
                    value = .data(Data(body))
                } else {
                    guard let s = String(validating: body, as: UTF8.self) else { return nil }
                    value = .string(s)
                }
            case UInt8(ascii: "n"):
                guard let z = varint(bytes, &at) else { return nil }
                value = .number(Int64(bitPattern: z >> 1) ^ -Int64(bitPattern: z & 1))
            case UInt8(ascii: "0"), UInt8(ascii: "1"):
                value = .bool(tag == UInt8(ascii: "1"))
            case UInt8(ascii: "t"):
                guard let body = take(8) else { return nil }
                value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })))
            default:
                return nil
            }
            values[name] = value
        }
        if header & sameDates != 0 {
            guard let created = values[.creationDate], case .date = created, values[.modificationDate] == nil else { return nil }
            values[.modificationDate] = created
        }
        for (name, key) in Mapping.plainKeys where values[name] == nil {
            if let s = plain[key] { values[name] = .string(s) }
        }
        return (itemClass, values, header & 1 == 1, sequence)
    }

    /// A LEB128 varint at `at` (shortest form, at most 64 bits); nil otherwise.
    static func varint(_ bytes: [UInt8], _ at: inout Int) -> UInt64? {
        var value: UInt64 = 0
        for i in 0..<10 {
            guard at < bytes.count else { return nil }
            let byte = bytes[at]
            at += 1
            let bits = UInt64(byte & 0x7F)
            guard i < 9 || bits <= 1 else { return nil }   // beyond 64 bits
            value |= bits << UInt64(7 * i)
            if byte & 0x80 == 0 {
                guard i == 0 || byte != 0 else { return nil }   // not the shortest form
                return value
            }
        }
        return nil
    }

    /// The class (v3; nil for v2), the attributes, whether the record has a secret, and its sequence; nil for
    /// anything malformed. `plain`: the item's attributes, for the values stored once as plain attributes.
    static func decode(_ text: String, plain: [String: String])
        -> (itemClass: ItemClass?, values: [AttributeName: AttributeValue], hasData: Bool, sequence: UInt64)?
    {
        let v3 = text.hasPrefix(prefix)
        guard v3 || text.hasPrefix(v2Prefix), let data = Data(base64Encoded: String(text.dropFirst(prefix.count))) else {
            return nil
        }
        let bytes = [UInt8](data)
        var at = 0
        func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, bytes.count - at >= n else { return nil }
            defer { at += n }
            return bytes[at..<at + n]
        }
        func integer(_ n: Int) -> UInt64? {
            take(n).map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        }
        func varint() -> UInt64? { Self.varint(bytes, &at) }
        guard let flags = integer(1), flags <= 1 else { return nil }
        var itemClass: ItemClass? = nil
        let sequence: UInt64, count: UInt64
        if v3 {
            guard let length = integer(1), let classBytes = take(Int(length)),
                  let c = String(validating: classBytes, as: UTF8.self).flatMap(ItemClass.init(rawValue:)),
                  let s = varint(), let n = varint() else { return nil }
            (itemClass, sequence, count) = (c, s, n)
        } else {
            guard let s = integer(8), let n = integer(2) else { return nil }
            (sequence, count) = (s, n)
        }
        var values: [AttributeName: AttributeValue] = [:]
        var read: UInt64 = 0
        while read < count {
            read += 1
            guard let length = integer(1), let codeBytes = take(Int(length)),
                  let code = String(validating: codeBytes, as: UTF8.self),
                  let name = AttributeName(codeOrName: code), name.code == code, values[name] == nil,
                  let tag = integer(1) else { return nil }
            if v3, tag == UInt64(UInt8(ascii: "p")) {
                guard let key = Mapping.plainKeys.first(where: { $0.0 == name })?.1, let s = plain[key] else { return nil }
                values[name] = .string(s)
                continue
            }
            guard let size = v3 ? varint() : integer(4), size <= UInt64(bytes.count), let body = take(Int(size)) else {
                return nil
            }
            let value: AttributeValue
            switch UInt8(tag) {
            case UInt8(ascii: "s"):
                guard let s = String(validating: body, as: UTF8.self) else { return nil }
                value = .string(s)
            case UInt8(ascii: "d"):
                value = .data(Data(body))
            case UInt8(ascii: "n"):
                guard body.count == 8 else { return nil }
                value = .number(Int64(bitPattern: body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }))
            case UInt8(ascii: "b"):
                guard body.count == 1, let flag = body.first, flag <= 1 else { return nil }
                value = .bool(flag == 1)
            case UInt8(ascii: "t"):
                guard body.count == 8 else { return nil }
                value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })))
            default:
                return nil
            }
            values[name] = value
        }
        guard at == bytes.count else { return nil }
        return (itemClass, values, flags == 1, sequence)
    }

    private static func bigEndian(_ v: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) }
    }

    private static func appendVarint(_ v: UInt64, to out: inout [UInt8]) {
        var v = v
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }
}
