import Foundation
import SecureStore

/// How an ``ItemRecord`` becomes Secret Service string attributes and back. See `MAPPING.md`.
enum Mapping {
    static let schemaKey = "xdg:schema"
    static let schema = "org.securestore.Item"
    static let namespaceKey = "securestore.namespace"
    static let classKey = "securestore.class"
    static let sequenceKey = "securestore.seq"
    static let refKey = "securestore.ref"
    static let uniqueKeyKey = "securestore.key"
    /// `"1"` on an item added without a secret (its D-Bus secret is then empty); absent on every other item,
    /// so items written before it existed keep their meaning (a 0-byte secret is an empty secret).
    static let noDataKey = "securestore.nodata"
    static let attributePrefix = "securestore.attr."
    static let plainService = "service"
    static let plainAccount = "account"
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

    static func uniqueKeyAttribute(_ key: UniqueKey) -> String { Data(key.bytes).base64EncodedString() }
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

    /// Every Secret Service attribute of a stored record.
    static func attributes(of record: ItemRecord, namespace: String, sequence: UInt64) -> [String: String] {
        var out = scope(namespace: namespace)
        out[classKey] = record.itemClass.rawValue
        out[sequenceKey] = sequenceAttribute(sequence)
        out[refKey] = refAttribute(record.persistentRef)
        out[uniqueKeyKey] = uniqueKeyAttribute(record.uniqueKey)
        if record.data == nil { out[noDataKey] = "1" }
        for (name, value) in record.attributes {
            out[attributePrefix + name.code] = encode(value)
        }
        if let service = record.attributes[.service].flatMap(exactText), isSafe(service) {
            out[plainService] = service
        }
        if let account = record.attributes[.account].flatMap(exactText), isSafe(account) {
            out[plainAccount] = account
        }
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

    /// A record and its insertion sequence from an item's attributes and secret.
    static func record(from attributes: [String: String], data: Data) throws(DecodeFailure) -> (ItemRecord, UInt64) {
        guard let classText = attributes[classKey] else { throw .missing(classKey) }
        guard let itemClass = ItemClass(rawValue: classText) else { throw .malformed(classKey) }
        guard let seqText = attributes[sequenceKey] else { throw .missing(sequenceKey) }
        guard let seq = UInt64(seqText) else { throw .malformed(sequenceKey) }
        guard let refText = attributes[refKey] else { throw .missing(refKey) }
        guard let refData = unhex(refText) else { throw .malformed(refKey) }
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
        return (ItemRecord(persistentRef: PersistentRef(data: refData), itemClass: itemClass, attributes: values,
                           data: secret), seq)
    }
}
