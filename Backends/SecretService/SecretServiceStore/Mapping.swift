import Foundation
import SecureStoreCore

/// How an ``ItemRecord`` becomes Secret Service string attributes and back. See `MAPPING.md`.
enum Mapping {
    /// Mappings v1–v3 only (read, never written: a v4 item has no explicit schema, which would cost 96 bytes of
    /// gnome-keyring's file per item; gnome-keyring reports such an item as `org.freedesktop.Secret.Generic`).
    static let schemaKey = "xdg:schema"
    static let schema = "org.securestore.Item"
    static let namespaceKey = "securestore.namespace"
    /// Mappings v1 and v2 only (read, never written: v3 packs the class): the item class.
    static let classKey = "securestore.class"
    /// Mapping v1 only (read, never written): the insertion sequence.
    static let sequenceKey = "securestore.seq"
    /// Mappings v1–v3: the persistent reference, 32 lowercase hex digits.
    static let refKey = "securestore.ref"
    /// Mapping v4: the persistent reference, base64 without padding (22 characters).
    static let refKeyV4 = "ref"
    /// The hashed unique key (v3, and v4 items that no plain attribute narrows a uniqueness search to); the
    /// raw key in v1 and v2.
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
    /// Mapping v4: the packed record (``PackedRecord``, `4:`).
    static let recordKeyV4 = "record"
    static let contentType = "application/octet-stream"

    /// The attributes every search of one store carries: the namespace (items of every mapping have it; v1–v3
    /// items also carry ``schema``, v4 items no explicit schema, so the namespace alone scopes both).
    static func scope(namespace: String) -> [String: String] {
        [namespaceKey: namespace]
    }

    /// The searches for one persistent reference: the v4 form and the v1–v3 form.
    static func refSearches(namespace: String, ref: PersistentRef) -> [[String: String]] {
        [[namespaceKey: namespace, refKeyV4: refAttributeV4(ref)], [namespaceKey: namespace, refKey: refAttribute(ref)]]
    }

    /// Unpadded base64 (v4 values): the padding carries nothing.
    static func base64(_ bytes: some Sequence<UInt8>) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The bytes of unpadded base64, only in the canonical form ``base64(_:)`` writes (no padding, no
    /// stray bits).
    static func unbase64(_ text: some StringProtocol) -> [UInt8]? {
        let count = text.utf8.count
        guard count % 4 != 1, !text.contains("=") else { return nil }
        guard let data = Data(base64Encoded: String(text) + String(repeating: "=", count: (4 - count % 4) % 4)) else { return nil }
        let bytes = [UInt8](data)
        guard base64(bytes) == text else { return nil }
        return bytes
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
    static func uniqueKeyAttribute(_ key: UniqueKey) -> String { hex(withUnsafeBytes(of: key.withUnsafeBytes { FNV1a.hash($0) }.bigEndian) { Array($0) }) }
    /// `securestore.key` of mappings v1 and v2 (read, never written): base64 of the key's bytes.
    static func legacyUniqueKeyAttribute(_ key: UniqueKey) -> String { Data(key.bytes).base64EncodedString() }
    static func refAttribute(_ ref: PersistentRef) -> String { hex(ref.data) }
    static func refAttributeV4(_ ref: PersistentRef) -> String { base64(ref.data) }
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

    /// The Secret Service attributes of a stored record (mapping v4): the namespace, the reference, the plain
    /// attributes other tools and searches use, everything else packed into ``recordKeyV4``, and
    /// ``uniqueKeyKey`` only when ``needsKeyAttribute(_:)``.
    static func attributes(of record: ItemRecord, namespace: String, sequence: UInt64) -> [String: String] {
        var out = [namespaceKey: namespace, refKeyV4: refAttributeV4(record.persistentRef)]
        for (name, plain) in plainKeys {
            if let text = plainText(record[name]) { out[plain] = text }
        }
        if needsKeyAttribute(record) { out[uniqueKeyKey] = uniqueKeyAttribute(record.uniqueKey) }
        out[recordKeyV4] = PackedRecord.encode(record, sequence: sequence)
        return out
    }

    /// The value a plain attribute carries: text, or data that is exact UTF-8, that D-Bus can carry.
    static func plainText(_ value: AttributeValue?) -> String? {
        guard let text = value.flatMap(exactText), isSafe(text) else { return nil }
        return text
    }

    /// Whether an item needs ``uniqueKeyKey``: every item but a generic password with a non-empty plain
    /// `service` or `account`. A uniqueness search for such a password's key finds it by those plain
    /// attributes, since the core passes the new record with the search (``SecretServiceTransaction/find(_:)``).
    static func needsKeyAttribute(_ record: ItemRecord) -> Bool {
        guard record.itemClass == .genericPassword else { return true }
        return plainText(record[.service])?.isEmpty ?? true && plainText(record[.account])?.isEmpty ?? true
    }

    /// The item label shown by keyring tools: the record's label, else service/server and account.
    static func label(of record: ItemRecord) -> String {
        if let l = record[.label].flatMap(exactText), isSafe(l), !l.isEmpty { return l }
        let host = (record[.service] ?? record[.server]).flatMap(exactText) ?? ""
        let account = record[.account].flatMap(exactText) ?? ""
        let parts = [host, account].filter { !$0.isEmpty && isSafe($0) }
        return parts.isEmpty ? "SecureStore \(record.itemClass)" : parts.joined(separator: " / ")
    }

    enum DecodeFailure: Error { case missing(String), malformed(String) }

    /// A record and its insertion sequence from an item's attributes and secret: mapping v4 when the item has
    /// ``recordKeyV4``, v3 or v2 when it has ``recordKey``, else v1 (every attribute typed in its own
    /// `securestore.attr.<code>`, `securestore.seq`).
    static func record(from attributes: [String: String], data: Data) throws(DecodeFailure) -> (ItemRecord, UInt64) {
        if let packed = attributes[recordKeyV4] {
            guard let refText = attributes[refKeyV4] else { throw .missing(refKeyV4) }
            guard let refBytes = unbase64(refText) else { throw .malformed(refKeyV4) }
            guard let decoded = PackedRecord.decodeV4(packed, plain: attributes) else { throw .malformed(recordKeyV4) }
            if !decoded.hasData, !data.isEmpty { throw .malformed(recordKeyV4) }
            return (ItemRecord(persistentRef: PersistentRef(data: Data(refBytes)), itemClass: decoded.itemClass,
                               attributes: decoded.values, data: decoded.hasData ? data : nil), decoded.sequence)
        }
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
        if let packed = attributes[recordKeyV4] { return PackedRecord.decodeV4(packed, plain: attributes)?.itemClass }
        if let packed = attributes[recordKey], let decoded = PackedRecord.decode(packed, plain: attributes),
           let c = decoded.itemClass {
            return c
        }
        return attributes[classKey].flatMap(ItemClass.init(rawValue:))
    }
}
