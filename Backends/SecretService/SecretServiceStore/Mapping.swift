import Foundation
import SecureStore

/// How an ``ItemRecord`` becomes Secret Service string attributes and back. See `MAPPING.md`.
enum Mapping {
    static let schemaKey = "xdg:schema"
    static let schema = "org.securestore.Item"
    static let namespaceKey = "securestore.namespace"
    /// Mappings v1 and v2 only (read, never written: v3 packs the class): the item class.
    static let classKey = "securestore.class"
    /// Mapping v1 only (read, never written): the insertion sequence.
    static let sequenceKey = "securestore.seq"
    static let refKey = "securestore.ref"
    static let uniqueKeyKey = "securestore.key"
    /// Mapping v1 only (read, never written): `"1"` on an item added without a secret (its D-Bus secret is then empty); absent on every other item,
    /// so items written before it existed keep their meaning (a 0-byte secret is an empty secret).
    static let noDataKey = "securestore.nodata"
    /// Mapping v1 only (read, never written): one attribute per record attribute, typed by ``encode(_:)``.
    static let attributePrefix = "securestore.attr."
    static let plainService = "service"
    static let plainAccount = "account"
    static let plainServer = "server"
    /// Mappings v2 and v3: every attribute of the record, its sequence and its no-secret flag (v3: also its
    /// class), packed (``PackedRecord``).
    static let recordKey = "securestore.record"
    static let contentType = "application/octet-stream"

    /// The attributes every search of one store carries: schema and namespace.
    static func scope(namespace: String) -> [String: String] {
        [schemaKey: schema, namespaceKey: namespace]
    }

    /// Text that can travel as a D-Bus string and through C: no NUL, no noncharacters.
    static func isSafe(_ s: String) -> Bool {
        for u in s.unicodeScalars {
            let v = u.value
            if v == 0 || (0xFDD0...0xFDEF).contains(v) || (v & 0xFFFE) == 0xFFFE { return false }
        }
        return true
    }

    /// The value's bytes read as UTF-8 text, only when that is exact (no BOM stripping, no repair).
    static func exactText(_ value: AttributeValue) -> String? {
        switch value {
        case .string(let s): return s
        case .data(let d): return String(validating: d, as: UTF8.self)
        default: return nil
        }
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unhex(_ s: String) -> Data? {
        let chars = Array(s.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var out = Data(capacity: chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// `securestore.key` of mapping v3: 16 hex digits of the key's 64-bit FNV-1a hash. Searches only narrow
    /// by it; the core compares whole keys, so a collision costs one more item read, never a wrong answer.
    static func uniqueKeyAttribute(_ key: UniqueKey) -> String { hex(withUnsafeBytes(of: FNV1a.hash(key.bytes).bigEndian) { Array($0) }) }
    /// `securestore.key` of mappings v1 and v2 (read, never written): base64 of the key's bytes.
    static func legacyUniqueKeyAttribute(_ key: UniqueKey) -> String { Data(key.bytes).base64EncodedString() }
    static func refAttribute(_ ref: PersistentRef) -> String { hex(ref.data) }
    static func sequenceAttribute(_ seq: UInt64) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    /// `s:` text, `S:` base64 of text that cannot travel as a D-Bus string, `d:` base64 data, `n:` decimal,
    /// `b:0`/`b:1`, `t:` the 16 hex digits of the date's `timeIntervalSinceReferenceDate` bit pattern.
    static func encode(_ value: AttributeValue) -> String {
        switch value {
        case .string(let s):
            return isSafe(s) ? "s:" + s : "S:" + Data(s.utf8).base64EncodedString()
        case .data(let d):
            return "d:" + d.base64EncodedString()
        case .number(let n):
            return "n:" + String(n)
        case .bool(let b):
            return b ? "b:1" : "b:0"
        case .date(let date):
            let bits = date.timeIntervalSinceReferenceDate.bitPattern
            let digits = String(bits, radix: 16)
            return "t:" + String(repeating: "0", count: 16 - digits.count) + digits
        }
    }

    static func decode(_ text: String) -> AttributeValue? {
        guard text.utf8.count >= 2 else { return nil }
        let tag = text.prefix(2)
        let body = String(text.dropFirst(2))
        switch tag {
        case "s:":
            return .string(body)
        case "S:":
            guard let d = Data(base64Encoded: body), let s = String(validating: d, as: UTF8.self) else { return nil }
            return .string(s)
        case "d:":
            return Data(base64Encoded: body).map { .data($0) }
        case "n:":
            return Int64(body).map { .number($0) }
        case "b:":
            return body == "1" ? .bool(true) : body == "0" ? .bool(false) : nil
        case "t:":
            guard body.utf8.count == 16, let bits = UInt64(body, radix: 16) else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
        default:
            return nil
        }
    }

    /// The plain attributes written for other tools and searches, by the record attribute they copy.
    static let plainKeys: [(AttributeName, String)] = [(.service, plainService), (.account, plainAccount), (.server, plainServer)]

    /// The Secret Service attributes of a stored record (mapping v3): what searches and other tools use, as
    /// plain attributes, and everything else packed into ``recordKey`` (the class included, so it is no
    /// attribute of its own).
    static func attributes(of record: ItemRecord, namespace: String, sequence: UInt64) -> [String: String] {
        var out = scope(namespace: namespace)
        out[refKey] = refAttribute(record.persistentRef)
        out[uniqueKeyKey] = uniqueKeyAttribute(record.uniqueKey)
        for (name, plain) in plainKeys {
            if let text = record.attributes[name].flatMap(exactText), isSafe(text) { out[plain] = text }
        }
        out[recordKey] = PackedRecord.encode(record, sequence: sequence)
        return out
    }

    /// The item label shown by keyring tools: the record's label, else service/server and account.
    static func label(of record: ItemRecord) -> String {
        if let l = record.attributes[.label].flatMap(exactText), isSafe(l), !l.isEmpty { return l }
        let host = (record.attributes[.service] ?? record.attributes[.server]).flatMap(exactText) ?? ""
        let account = record.attributes[.account].flatMap(exactText) ?? ""
        let parts = [host, account].filter { !$0.isEmpty && isSafe($0) }
        return parts.isEmpty ? "SecureStore \(record.itemClass)" : parts.joined(separator: " / ")
    }

    enum DecodeFailure: Error { case missing(String), malformed(String) }

    /// A record and its insertion sequence from an item's attributes and secret: mapping v3 or v2 when the
    /// item has ``recordKey``, else v1 (every attribute typed in its own `securestore.attr.<code>`,
    /// `securestore.seq`).
    static func record(from attributes: [String: String], data: Data) throws(DecodeFailure) -> (ItemRecord, UInt64) {
        guard let refText = attributes[refKey] else { throw .missing(refKey) }
        guard let refData = unhex(refText) else { throw .malformed(refKey) }
        let ref = PersistentRef(data: refData)
        if let packed = attributes[recordKey] {
            guard let decoded = PackedRecord.decode(packed, plain: attributes) else { throw .malformed(recordKey) }
            let itemClass: ItemClass
            if let c = decoded.itemClass {
                itemClass = c
            } else {   // v2: the class is an attribute of its own
                guard let classText = attributes[classKey] else { throw .missing(classKey) }
                guard let c = ItemClass(rawValue: classText) else { throw .malformed(classKey) }
                itemClass = c
            }
            if !decoded.hasData, !data.isEmpty { throw .malformed(recordKey) }
            return (ItemRecord(persistentRef: ref, itemClass: itemClass, attributes: decoded.values,
                               data: decoded.hasData ? data : nil), decoded.sequence)
        }
        guard let classText = attributes[classKey] else { throw .missing(classKey) }
        guard let itemClass = ItemClass(rawValue: classText) else { throw .malformed(classKey) }
        guard let seqText = attributes[sequenceKey] else { throw .missing(sequenceKey) }
        guard let seq = UInt64(seqText) else { throw .malformed(sequenceKey) }
        var secret: Data? = data
        if let flag = attributes[noDataKey] {
            guard flag == "1", data.isEmpty else { throw .malformed(noDataKey) }
            secret = nil
        }
        var values: [AttributeName: AttributeValue] = [:]
        for (key, text) in attributes where key.hasPrefix(attributePrefix) {
            let code = String(key.dropFirst(attributePrefix.count))
            guard let name = AttributeName(codeOrName: code), name.code == code else { throw .malformed(key) }
            guard let value = decode(text) else { throw .malformed(key) }
            values[name] = value
        }
        return (ItemRecord(persistentRef: ref, itemClass: itemClass, attributes: values, data: secret), seq)
    }

    /// The class of an item (every mapping), without decoding the rest; nil when it has none.
    static func itemClass(from attributes: [String: String]) -> ItemClass? {
        if let packed = attributes[recordKey], let decoded = PackedRecord.decode(packed, plain: attributes),
           let c = decoded.itemClass {
            return c
        }
        return attributes[classKey].flatMap(ItemClass.init(rawValue:))
    }
}

/// The packed record (``Mapping/recordKey``): the record's attributes, its insertion sequence and whether it
/// has a secret (v3 also its class), in one attribute value.
///
/// Written as v3, `3:` + base64 of
///
///     flags u8 (bit 0: has a secret) · class length u8 · class ASCII · sequence varint · count varint ·
///     count × (code length u8 · code UTF-8 · tag u8 · value length varint · value)
///
/// where a varint is LEB128 (7 bits a byte, low first, shortest form) and tag `p` (no length, no value)
/// means "the text of the item's plain attribute" (`service`, `account`, `server`), so those values are
/// stored once. v2 (read only), `2:` + base64 of
///
///     flags u8 · sequence u64 · count u16 · count × (code length u8 · code · tag u8 · value length u32 · value)
///
/// (integers big-endian). Tags of both: `s` text (UTF-8), `d` data, `n` Int64 (8 bytes big-endian), `b` one
/// byte 0/1, `t` the date's `timeIntervalSinceReferenceDate` bit pattern (8 bytes big-endian). Decoding is
/// strict: exact lengths, shortest varints, known codes and tags, no repeated code, nothing after the last
/// attribute.
enum PackedRecord {
    static let prefix = "3:"
    static let v2Prefix = "2:"

    static func encode(_ record: ItemRecord, sequence: UInt64) -> String {
        var out: [UInt8] = [record.data == nil ? 0 : 1]
        let className = Array(record.itemClass.rawValue.utf8)
        out.append(UInt8(className.count))
        out += className
        appendVarint(sequence, to: &out)
        let entries = record.attributes.sorted { $0.key.code < $1.key.code }
        appendVarint(UInt64(entries.count), to: &out)
        for (name, value) in entries {
            let code = Array(name.code.utf8)
            out.append(UInt8(code.count))
            out += code
            if case .string(let s) = value, Mapping.isSafe(s), Mapping.plainKeys.contains(where: { $0.0 == name }) {
                out.append(UInt8(ascii: "p"))
                continue
            }
            let (tag, body) = tagged(value)
            out.append(tag)
            appendVarint(UInt64(body.count), to: &out)
            out += body
        }
        return prefix + Data(out).base64EncodedString()
    }

    private static func tagged(_ value: AttributeValue) -> (UInt8, [UInt8]) {
        switch value {
        case .string(let s): (UInt8(ascii: "s"), Array(s.utf8))
        case .data(let d): (UInt8(ascii: "d"), Array(d))
        case .number(let n): (UInt8(ascii: "n"), bigEndian(UInt64(bitPattern: n)))
        case .bool(let b): (UInt8(ascii: "b"), [b ? 1 : 0])
        case .date(let date): (UInt8(ascii: "t"), bigEndian(date.timeIntervalSinceReferenceDate.bitPattern))
        }
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
        func varint() -> UInt64? {
            var value: UInt64 = 0
            for i in 0..<10 {
                guard let byte = take(1)?.first else { return nil }
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
