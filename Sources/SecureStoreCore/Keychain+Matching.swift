import Foundation

// Matching records against a prepared query, and uniqueness.

extension Keychain {
    func duplicate(_ record: ItemRecord) -> SecureStoreError {
        let key = record.itemClass.uniquenessKey.map { name -> String in
            let value = record[name] ?? name.defaultValue
            return "\(name.name)=\(value.map { String(describing: $0) } ?? "nil")"
        }.joined(separator: ", ")
        return SecureStoreError(.duplicateItem,
            "A \(record.itemClass) with the same uniqueness key already exists (\(key)). Update it, or delete it "
            + "first; attributes outside the key (label, comment, accessibility, the secret) never make items distinct.")
    }

    func checkCollisions(_ updated: [ItemRecord], in txn: inout Backend.Transaction) throws(SecureStoreError) {
        var keys: [UniqueKey: ItemRecord] = [:]
        for record in updated {
            if keys.updateValue(record, forKey: record.uniqueKey) != nil { throw duplicate(record) }
        }
        let refs = Set(updated.map(\.persistentRef))
        let others = try txn.find(updated.count == 1 ? RecordFilter(uniquenessOf: updated[0]) : RecordFilter(uniqueKeys: Array(keys.keys)))
        for other in others where !refs.contains(other.persistentRef) {
            if let record = keys[other.uniqueKey] { throw duplicate(record) }
        }
    }

    func matching(_ query: PreparedQuery, in txn: inout Backend.Transaction, max: Int?)
        throws(SecureStoreError) -> [ItemRecord]
    {
        Self.matching(query, in: try txn.find(query.filter), max: max)
    }

    /// The first `max` of `found` (a backend's answer to `query.filter`) that match, in order.
    static func matching(_ query: PreparedQuery, in found: consuming [ItemRecord], max: Int?) -> [ItemRecord] {
        // The backend's array, taken over (`consuming`: no copy) and changed only when a record does not match,
        // which a query its key decides never finds: the matches are moved to the front in order, the rest cut.
        var found = found
        if let miss = found.firstIndex(where: { !Self.matches($0, query) }) {
            var kept = miss
            for next in (miss + 1)..<found.count where Self.matches(found[next], query) {
                found.swapAt(kept, next)
                kept += 1
            }
            found.removeSubrange(kept...)
        }
        if let max, found.count > max { found.removeSubrange(max...) }
        return found
    }

    static func matches(_ record: ItemRecord, _ query: PreparedQuery) -> Bool {
        if query.keyDecides, let keys = query.filter.uniqueKeys, keys.contains(record.uniqueKey) { return true }
        if let ref = query.filter.persistentRef, record.persistentRef != ref { return false }
        if let c = query.itemClass, record.itemClass != c { return false }
        guard let group = record[.accessGroup]?.text, query.groups.contains(group) else { return false }
        if let sync = query.synchronizable, (record[.synchronizable]?.integer == 1) != sync { return false }
        for (name, wanted) in query.attributes {
            guard let have = record[name] ?? name.defaultValue,
                  Self.equal(have, wanted, kind: name.kind, caseInsensitive: query.caseInsensitive)
            else { return false }
        }
        return true
    }

    static func equal(_ a: AttributeValue, _ b: AttributeValue, kind: AttributeKind, caseInsensitive: Bool) -> Bool {
        switch kind {
        case .text:
            if caseInsensitive, let x = a.text, let y = b.text { return x.lowercased() == y.lowercased() }
            return sameBytes(a, b)
        case .data:
            return sameBytes(a, b)
        case .number, .bool:
            return a.integer == b.integer
        case .date:
            if case .date(let x) = a, case .date(let y) = b { return x == y }
            return false
        case .numberOrText, .textOrNumber:
            // A number equals a number; text equals text (as for `.text`); a number never equals text.
            switch (a, b) {
            case (.number(let x), .number(let y)): return x == y
            case (.number, _), (_, .number): return false
            default: return equal(a, b, kind: .text, caseInsensitive: caseInsensitive)
            }
        }
    }

    /// `a.bytes == b.bytes` without building arrays.
    static func sameBytes(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        switch (a, b) {
        case (.string(var x), .string(var y)):
            // Native strings are contiguous UTF-8: compare the buffers (withUTF8 copies only bridged ones).
            return x.withUTF8 { a in y.withUTF8 { b in sameMemory(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) } }
        case (.data(let x), .data(let y)): return x == y
        case (.string(let x), .data(let y)), (.data(let y), .string(let x)): return x.utf8.elementsEqual(y)
        default: return a.bytes == b.bytes
        }
    }
}
