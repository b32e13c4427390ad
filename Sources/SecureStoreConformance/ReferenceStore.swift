public import SecureStoreCore
import Foundation

/// A deliberately naive keychain written straight from the semantics article
/// (`Sources/SecureStoreCore/SecureStoreCore.docc/Semantics.md`): one array, linear scans, its own tables of attributes and keys, none of the core's semantics code. The differential test compares every
/// backend against it, so that two independent readings of the rules must agree.
public final class ReferenceStore: SecureStore {
    private struct Stored {
        var ref: PersistentRef
        var cls: ItemClass
        var attrs: [String: AttributeValue]   // by Apple code
        var data: Data?   // nil: added without a secret (not the same as an empty one)
    }

    private let groups: [String]
    private let items = Locked<[Stored]>([])

    public init(accessGroups: [String]) {
        groups = accessGroups
    }

    public var storeDescription: String { "reference model" }
    public var guarantees: StorageGuarantees {
        StorageGuarantees(atomicWrites: true, acrossProcesses: .notShared, acrossMachines: .notShared,
                          durableOnReturn: false, insertionOrder: .processCounter)
    }

    // Tables, from the semantics article.
    private static let common = ["pdmn", "agrp", "sync", "cdat", "mdat", "labl"]
    private static let password = ["desc", "icmt", "crtr", "type", "invi", "nega", "acct"]
    private static let cert = ["ctyp", "cenc", "subj", "issr", "slnr", "skid", "pkhh"]
    private static let key = ["kcls", "klbl", "perm", "atag", "type", "bsiz", "esiz", "encr", "decr", "drve", "sign",
                              "vrfy", "wrap", "unwp", "sens", "extr", "sdat", "edat", "crtr"]
    private static func allowed(_ c: ItemClass) -> Set<String> {
        switch c {
        case .genericPassword: Set(common + password + ["svce", "gena"])
        case .internetPassword: Set(common + password + ["sdmn", "srvr", "ptcl", "atyp", "port", "path"])
        case .certificate: Set(common + cert)
        case .key: Set(common + key)
        case .identity: Set(common + cert + key)
        }
    }
    private static func uniqueness(_ c: ItemClass) -> [String] {
        switch c {
        case .genericPassword: ["acct", "svce", "agrp", "sync"]
        case .internetPassword: ["acct", "sdmn", "srvr", "ptcl", "atyp", "port", "path", "agrp", "sync"]
        case .certificate, .identity: ["ctyp", "issr", "slnr", "agrp", "sync"]
        case .key: ["kcls", "type", "klbl", "atag", "bsiz", "esiz", "crtr", "agrp", "sync"]
        }
    }
    private static let numbers: Set<String> = ["crtr", "type", "port", "ctyp", "cenc", "kcls", "bsiz", "esiz"]
    private static let flags: Set<String> = ["sync", "invi", "nega", "perm", "encr", "decr", "drve", "sign", "vrfy",
                                             "wrap", "unwp", "sens", "extr"]
    private static let dates: Set<String> = ["cdat", "mdat", "sdat", "edat"]
    private static let binary: Set<String> = ["gena", "subj", "issr", "slnr", "skid", "pkhh", "klbl", "atag"]
    private static let accessibility: Set<String> = ["ak", "ck", "dk", "akpu", "aku", "cku", "dku"]

    // MARK: Values

    /// Checks and normalizes one value: numbers and flags become .number / .bool; text stays as given.
    private func clean(_ code: String, _ v: AttributeValue) throws(SecureStoreError) -> AttributeValue {
        if code == "ptcl" {   // Apple's number attribute that keeps strings it cannot read as numbers
            switch v {
            case .number: return v
            case .bool(let b): return .number(b ? 1 : 0)
            case .string(let s):
                if let n = Int32(s), "\(n)" == s { return .number(Int64(n)) }
                return v
            default: throw .param(code, "not a number or a string")
            }
        }
        if code == "atyp" {   // Apple's blob attribute: text, data or a number, kept as given
            switch v {
            case .number, .string, .data: return v
            case .bool(let b): return .number(b ? 1 : 0)
            default: throw .param(code, "not text or a number")
            }
        }
        if Self.numbers.contains(code) {
            switch v {
            case .number: return v
            case .bool(let b): return .number(b ? 1 : 0)
            case .string(let s):
                if let n = Int64(s.trimmingCharacters(in: .whitespaces)) { return .number(n) }
            default: break
            }
            throw .param(code, "not a number")
        }
        if Self.flags.contains(code) {
            switch v {
            case .bool: return v
            case .number(let n): return .bool(n != 0)
            case .string(let s):
                if ["1", "true", "yes"].contains(s.lowercased()) { return .bool(true) }
                if ["0", "false", "no"].contains(s.lowercased()) { return .bool(false) }
            default: break
            }
            throw .param(code, "not a boolean")
        }
        if Self.dates.contains(code) {
            if case .date(let d) = v, !d.timeIntervalSinceReferenceDate.isNaN { return v }
            throw .param(code, "not a date")
        }
        switch v {
        case .string(let s):
            if code == "pdmn", !Self.accessibility.contains(s) { throw .param(code, "bad accessibility") }
            return v
        case .data(let d):
            if code == "pdmn" {
                guard let s = String(data: d, encoding: .utf8), Self.accessibility.contains(s) else {
                    throw .param(code, "bad accessibility")
                }
                return .string(s)
            }
            return v
        default: throw .param(code, "not text")
        }
    }

    private static func defaultValue(_ code: String) -> AttributeValue? {
        if numbers.contains(code) { return .number(0) }
        if flags.contains(code) { return .bool(false) }
        if dates.contains(code) { return nil }
        return .data(Data())
    }

    private static func bytes(_ v: AttributeValue) -> Data? {
        switch v {
        case .string(let s): Data(s.utf8)
        case .data(let d): d
        default: nil
        }
    }

    private static func same(_ code: String, _ a: AttributeValue?, _ b: AttributeValue, folding: Bool) -> Bool {
        guard let a = a ?? defaultValue(code) else { return false }
        switch (a, b) {
        case (.number(let x), .number(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.date(let x), .date(let y)): return x == y
        default:
            guard let x = bytes(a), let y = bytes(b) else { return false }
            if folding, !binary.contains(code), let s = String(data: x, encoding: .utf8), let t = String(data: y, encoding: .utf8) {
                return s.lowercased() == t.lowercased()
            }
            return x == y
        }
    }

    private func sameKey(_ a: Stored, _ b: Stored) -> Bool {
        a.cls == b.cls && Self.uniqueness(a.cls).allSatisfy { code in
            guard let bv = b.attrs[code] ?? Self.defaultValue(code) else { return a.attrs[code] == nil }
            return Self.same(code, a.attrs[code], bv, folding: false)
        }
    }

    /// The documented limits (SecureStoreCore.docc/Limits.md), written out here on purpose: the model does not share them.
    static let secretLimit = 1_048_576
    static let attributeLimit = 16_384

    private static func checkSize(_ code: String, _ v: AttributeValue) throws(SecureStoreError) {
        if let b = bytes(v), b.count > attributeLimit { throw .param(code, "attribute value over \(attributeLimit) bytes") }
    }

    private static func checkSecret(_ data: Data?) throws(SecureStoreError) {
        if let data, data.count > secretLimit { throw .param("data", "secret over \(secretLimit) bytes") }
    }

    private func cleanAll(_ cls: ItemClass, _ attrs: [AttributeName: AttributeValue], writing: Bool = false)
        throws(SecureStoreError) -> [String: AttributeValue]
    {
        // Values of the class's attributes first (param), then attributes the class lacks (noSuchAttribute).
        let sorted = attrs.sorted { $0.key.code < $1.key.code }
        var out: [String: AttributeValue] = [:]
        for (name, v) in sorted where Self.allowed(cls).contains(name.code) {
            out[name.code] = try clean(name.code, v)
            if writing, let cleaned = out[name.code] { try Self.checkSize(name.code, cleaned) }
        }
        for (name, _) in sorted where !Self.allowed(cls).contains(name.code) {
            throw SecureStoreError(.noSuchAttribute, name.code, parameter: name.code)
        }
        if let g = out["agrp"] {
            guard let b = Self.bytes(g), let s = String(data: b, encoding: .utf8), groups.contains(s) else {
                throw SecureStoreError(.missingEntitlement, "group", parameter: "agrp")
            }
        }
        return out
    }

    // MARK: Operations

    public func add(_ item: NewItem, returning: ReturnOptions) throws(SecureStoreError) -> Item {
        var attrs = try cleanAll(item.itemClass, item.attributes, writing: true)
        try Self.checkSecret(item.data)
        if attrs["agrp"] == nil { attrs["agrp"] = .string(groups[0]) }
        if attrs["pdmn"] == nil { attrs["pdmn"] = .string(item.itemClass == .certificate ? "dk" : "ak") }
        if attrs["sync"] == nil { attrs["sync"] = .bool(false) }
        let now = Date()
        attrs["cdat"] = .date(now)
        attrs["mdat"] = .date(now)
        let new = Stored(ref: .random(), cls: item.itemClass, attrs: attrs, data: item.data)
        try items.withLock { (all: inout [Stored]) throws(SecureStoreError) in
            for old in all where sameKey(old, new) {
                let names = Self.uniqueness(new.cls).compactMap { AttributeName(codeOrName: $0)?.name }
                throw SecureStoreError(.duplicateItem, "an item with the same \(names.joined(separator: ", ")) exists")
            }
            all.append(new)
        }
        return result([new], returning)[0]
    }

    private struct Filter {
        var ref: PersistentRef?
        var cls: ItemClass?
        var attrs: [String: AttributeValue] = [:]
        var sync: Bool? = false
        var folding = false
    }

    private func filter(_ q: ItemQuery) throws(SecureStoreError) -> Filter {
        if let ref = q.persistentRef {
            if !q.attributes.isEmpty || q.synchronizableAny { throw .param("persistentRef", "combined") }
            return Filter(ref: ref, cls: q.itemClass, sync: nil)
        }
        guard let cls = q.itemClass else { throw .param("itemClass", "missing") }
        var f = Filter(cls: cls, attrs: try cleanAll(cls, q.attributes), folding: q.caseInsensitive)
        if let s = f.attrs.removeValue(forKey: "sync") {
            if q.synchronizableAny { throw .param("synchronizableAny", "both") }
            f.sync = s == .bool(true)
        } else if q.synchronizableAny {
            f.sync = nil
        }
        return f
    }

    private func hit(_ i: Stored, _ f: Filter) -> Bool {
        if let r = f.ref, i.ref != r { return false }
        if let c = f.cls, i.cls != c { return false }
        if let s = f.sync, i.attrs["sync"] != .bool(s) { return false }
        guard let gv = i.attrs["agrp"], let gb = Self.bytes(gv), let g = String(data: gb, encoding: .utf8), groups.contains(g) else {
            return false
        }
        for (code, v) in f.attrs where !Self.same(code, i.attrs[code], v, folding: f.folding && code != "agrp") { return false }
        return true
    }

    private func result(_ found: [Stored], _ r: ReturnOptions) -> [Item] {
        found.map {
            Item(itemClass: $0.cls,
                 attributes: r.contains(.attributes) ? Dictionary(uniqueKeysWithValues: $0.attrs.compactMap { code, v in
                     AttributeName(codeOrName: code).map { ($0, v) } }) : nil,
                 data: r.contains(.data) ? $0.data : nil,
                 persistentRef: r.contains(.persistentRef) ? $0.ref : nil)
        }
    }

    public func items(matching q: ItemQuery) throws(SecureStoreError) -> [Item] {
        var limit = Int.max
        switch q.limit ?? .all {
        case .one: limit = 1
        case .all: break
        case .count(let n):
            if n <= 0 { throw .param("limit", "bad") }
            limit = n
        }
        let f = try filter(q)
        let found = items.withLock { all in Array(all.filter { hit($0, f) }.prefix(limit)) }
        return result(found, q.returning)
    }

    public func update(_ q: ItemQuery, with changes: ItemChanges) throws(SecureStoreError) -> Int {
        if q.limit != nil || q.caseInsensitive { throw .param("limit", "match key in update") }
        if !q.returning.isEmpty { throw .param("returning", "return key in update") }
        let f = try filter(q)
        var codes: [String: AttributeValue] = [:]
        let settable = changes.attributes.filter { $0.key.code != "cdat" && $0.key.code != "mdat" }.sorted { $0.key.code < $1.key.code }
        let known = q.itemClass.map { Self.allowed($0) }
        for (name, v) in settable where known?.contains(name.code) ?? true {
            codes[name.code] = try clean(name.code, v)
            if let cleaned = codes[name.code] { try Self.checkSize(name.code, cleaned) }
        }
        if let known {
            for (name, _) in settable where !known.contains(name.code) {
                throw SecureStoreError(.noSuchAttribute, name.code, parameter: name.code)
            }
        }
        if let g = codes["agrp"] {
            guard let b = Self.bytes(g), let s = String(data: b, encoding: .utf8), groups.contains(s) else {
                throw SecureStoreError(.missingEntitlement, "group", parameter: "agrp")
            }
        }
        try Self.checkSecret(changes.data)
        return try items.withLock { (all: inout [Stored]) throws(SecureStoreError) -> Int in
            var next = all
            var touched: [Int] = []
            let now = Date()
            for i in next.indices where hit(next[i], f) {
                for code in codes.keys where !Self.allowed(next[i].cls).contains(code) {
                    throw SecureStoreError(.noSuchAttribute, code, parameter: code)
                }
                next[i].attrs.merge(codes) { _, new in new }
                if let d = changes.data { next[i].data = d }
                var m = now
                if case .date(let old)? = all[i].attrs["mdat"], m <= old { m = old.addingTimeInterval(0.001) }
                next[i].attrs["mdat"] = .date(m)
                touched.append(i)
            }
            if touched.isEmpty { throw .notFound() }
            for i in touched {
                for j in next.indices where j != i && sameKey(next[i], next[j]) {
                    throw SecureStoreError(.duplicateItem, "duplicate")
                }
            }
            all = next
            return touched.count
        }
    }

    public func delete(_ q: ItemQuery) throws(SecureStoreError) -> Int {
        if q.limit != nil || q.caseInsensitive { throw .param("limit", "match key in delete") }
        let f = try filter(q)
        return try items.withLock { (all: inout [Stored]) throws(SecureStoreError) -> Int in
            let before = all.count
            all.removeAll { hit($0, f) }
            if all.count == before { throw .notFound() }
            return before - all.count
        }
    }

    public func clear(_ classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
        items.withLock { all in
            let before = all.count
            all.removeAll { classes.contains($0.cls) }
            return before - all.count
        }
    }
}
