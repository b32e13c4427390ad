import Testing
import Foundation
import SecureStoreConformance
@testable import SecureStoreCore
import SecureStoreInMemory

/// The core's cheaper representations take the same decisions as the plain ones they replace: attribute names
/// compared by their packed code against their codes, unique keys appended a block at a time against a
/// byte-by-byte encoder, query preparation against the same rules written with dictionary probes, references without a
/// stored `Data` against their bytes.
@Suite("Core representations")
struct RepresentationTests {
    static let names = AttributeName.all + [.keyType]

    @Test("attribute names: equal and equally hashed exactly when their codes are equal")
    func attributeNameEquality() {
        for a in Self.names {
            for b in Self.names {
                #expect((a == b) == (a.code == b.code), "\(a) \(b)")
                if a == b { #expect(a.hashValue == b.hashValue, "\(a) \(b)") }
            }
        }
        #expect(Set(Self.names).count == Set(Self.names.map(\.code)).count)
    }

    /// The unique key's bytes as the format defines them, one byte at a time.
    static func referenceKey(_ itemClass: ItemClass, _ values: [AttributeName: AttributeValue]) -> [UInt8] {
        func length(_ n: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: UInt32(truncatingIfNeeded: n) >> (24 - 8 * UInt32($0))) } }
        func integer(_ i: Int64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: i) >> (56 - 8 * UInt64($0))) } }
        var out = Array(itemClass.rawValue.utf8)
        for name in itemClass.uniquenessKey {
            out.append(0x1F)
            switch values[name] ?? name.defaultValue {
            case .string(let s)?: out += length(s.utf8.count) + Array(s.utf8)
            case .data(let d)?: out += length(d.count) + Array(d)
            case .number(let i)?:
                if name.kind == .numberOrText || name.kind == .textOrNumber { out += [0xFF, 0xFF, 0xFF, 0xFF] }
                out += integer(i)
            case .bool(let b)?: out += integer(b ? 1 : 0)
            case .date?, nil: break
            }
        }
        return out
    }

    static func randomValue(for name: AttributeName, _ rng: inout SplitMix64) -> AttributeValue {
        let texts = ["", "a", "svc-17", "ünï ☃ 🔑", String(repeating: "x", count: 300), "80", "htps"]
        switch Int.random(in: 0..<6, using: &rng) {
        case 0, 1: return .string(texts.randomElement(using: &rng) ?? "")
        case 2: return .data(Data((0..<Int.random(in: 0..<40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        case 3: return .number(Int64.random(in: Int64.min...Int64.max, using: &rng))
        case 4: return .bool(Bool.random(using: &rng))
        default: return .date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...1_000_000, using: &rng))))
        }
    }

    @Test("unique keys: block appends equal the byte-by-byte encoding on generated values")
    func uniqueKeyBytes() {
        var rng = SplitMix64(seed: 0x5EC0_5EC0)
        for _ in 0..<5000 {
            let itemClass = ItemClass.allCases.randomElement(using: &rng) ?? .genericPassword
            var values: [AttributeName: AttributeValue] = [:]
            for name in itemClass.uniquenessKey where Bool.random(using: &rng) {
                values[name] = Self.randomValue(for: name, &rng)
            }
            let key = UniqueKey(itemClass: itemClass) { values[$0] }
            #expect(key.bytes == Self.referenceKey(itemClass, values), "\(itemClass) \(values)")
        }
    }

    @Test("query preparation: its decisions equal the rules written with dictionary probes")
    func preparedQueries() throws {
        let store = try InMemoryStore(configuration: StoreConfiguration(accessGroups: ["g1", "g2"]))
        var rng = SplitMix64(seed: 0x9E37_0017)
        var prepared = 0, probes = 0
        for _ in 0..<20_000 {
            let itemClass = ItemClass.allCases.randomElement(using: &rng) ?? .genericPassword
            var query = ItemQuery(itemClass)
            // Mostly the class's own attributes (often its whole key), sometimes another class's.
            let pool = Bool.random(using: &rng) ? itemClass.uniquenessKey : Self.names
            for name in pool where Int.random(in: 0..<3, using: &rng) > 0 {
                query.attributes[name] = name == .accessGroup ? .string(["g1", "g2", "g3"].randomElement(using: &rng) ?? "")
                    : name == .synchronizable ? .bool(Bool.random(using: &rng))
                    : name == .accessible ? .string(["ak", "dk", "zz"].randomElement(using: &rng) ?? "")
                    : Int.random(in: 0..<4, using: &rng) == 0 ? Self.randomValue(for: name, &rng)
                    : name.kind == .number || name.kind == .bool ? .number(Int64.random(in: 0...3, using: &rng))
                    : .string(["a", "b", ""].randomElement(using: &rng) ?? "")
            }
            query.synchronizableAny = Int.random(in: 0..<4, using: &rng) == 0
            query.caseInsensitive = Int.random(in: 0..<5, using: &rng) == 0
            let result = Result { () throws(SecureStoreError) in try store.prepare(query, for: .copy) }
            // The rules with dictionary probes: the same validation, then the same decisions on the dictionary.
            let reference = Result { () throws(SecureStoreError) in try store.validate(query.attributes, for: itemClass) }
            switch (result, reference) {
            case (.failure(let a), .failure(let b)):
                #expect(a.code == b.code && a.parameter == b.parameter)
            case (.failure(let a), .success(let normal)):
                // Validation passed; only the sync/any conflict may refuse the query afterwards.
                #expect(a.parameter == "synchronizableAny" && normal[.synchronizable] != nil && query.synchronizableAny)
            case (.success, .failure(let b)):
                Issue.record("prepare accepted what validation refuses: \(b)")
            case (.success(let p), .success(var normal)):
                prepared += 1
                let sync = normal.removeValue(forKey: .synchronizable)
                let group = normal.removeValue(forKey: .accessGroup)
                #expect(p.attributes == normal)
                #expect(p.synchronizable == (sync.map { $0.integer == 1 } ?? (query.synchronizableAny ? nil : false)))
                #expect(p.groups == Set(group.map { [$0.text ?? ""] } ?? ["g1", "g2"]))
                let namesKey = itemClass.uniquenessKey.allSatisfy { $0 == .accessGroup || $0 == .synchronizable || normal[$0] != nil }
                let probe = !query.caseInsensitive && namesKey
                #expect((p.filter.uniqueKeys != nil) == probe, "\(query)")
                #expect(p.keyDecides == (probe && normal.keys.allSatisfy { itemClass.uniquenessKey.contains($0) }), "\(query)")
                if probe { probes += 1 }
            }
        }
        #expect(prepared > 2000 && probes > 500, "too few queries reached the decisions: \(prepared), \(probes)")
    }

    @Test("references: bytes, equality and hashing as the Data they were made from")
    func references() {
        var rng = SplitMix64(seed: 0x0F0F)
        var made: [(Data, PersistentRef)] = []
        for count in [0, 1, 8, 15, 16, 17, 32, 40] {
            for _ in 0..<4 {
                let data = Data((0..<count).map { _ in UInt8.random(in: 0...1, using: &rng) })
                made.append((data, PersistentRef(data: data)))
            }
        }
        for _ in 0..<8 { let r = PersistentRef.random(); made.append((r.data, r)) }
        for (data, ref) in made {
            #expect(ref.data == data)
            for (otherData, other) in made {
                #expect((ref == other) == (data == otherData), "\(data as NSData) \(otherData as NSData)")
                if ref == other { #expect(ref.hashValue == other.hashValue) }
            }
        }
        #expect(PersistentRef.random().data.count == 16)
        // Read in place from a decoder's buffer: the same reference as from a `Data`.
        for (data, ref) in made {
            let inPlace = data.withUnsafeBytes { PersistentRef(bytes: $0) }
            #expect(inPlace == ref && inPlace.data == data && inPlace.hashValue == ref.hashValue, "\(data as NSData)")
        }
    }

    @Test("references in tables: equal references hash alike, and a table keyed by them finds each one")
    func referenceTableHash() {
        var rng = SplitMix64(seed: 0xAB)
        var refs: [PersistentRef] = (0..<2048).map { _ in PersistentRef.random() }
        // References a caller made: short, long, differing in one bit or only in length (trailing zeros).
        for count in [0, 1, 7, 8, 9, 15, 16, 17, 40] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            refs.append(PersistentRef(data: Data(bytes)))
            refs.append(PersistentRef(data: Data(bytes + [0])))
            for bit in 0..<min(count * 8, 128) {
                var flipped = bytes
                flipped[bit / 8] ^= 1 << (bit % 8)
                refs.append(PersistentRef(data: Data(flipped)))
            }
        }
        for ref in refs.prefix(300) {
            let copy = ref.data.withUnsafeBytes { PersistentRef(bytes: $0) }
            #expect(copy == ref && copy.hashValue == ref.hashValue)
        }
        // A table keyed by them finds each one, and only its own.
        var table: [PersistentRef: Int] = [:]
        for (i, ref) in refs.enumerated() where table[ref] == nil { table[ref] = i }
        #expect(table.count == Set(refs.map(\.data)).count)
        for (i, ref) in refs.enumerated() { #expect(table[ref].map { refs[$0] == ref && $0 <= i } == true) }
    }

    @Test("attribute codes: the packed-code switch finds every code of `all`, and nothing else")
    func packedCodes() {
        for name in Self.names {
            let found = AttributeName.withCode(utf8: ArraySlice(name.code.utf8))
            #expect(found?.code == name.code, "\(name)")
            #expect(found == name, "\(name)")
        }
        let codes = Set(AttributeName.all.map(\.code))
        var rng = SplitMix64(seed: 0xC0DE)
        let letters = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        for _ in 0..<5000 {
            let bytes = (0..<4).map { _ in letters[Int.random(in: 0..<letters.count, using: &rng)] }
            let text = String(decoding: bytes, as: UTF8.self)
            #expect((AttributeName.withCode(utf8: ArraySlice(bytes)) != nil) == codes.contains(text), "\(text)")
        }
        for other in ["", "acc", "accts", "ACCT", "svce\u{0}"] {
            #expect(AttributeName.withCode(utf8: ArraySlice(other.utf8)) == nil, "\(other)")
        }
    }

    @Test("attribute names in tables: one hash per code, and dictionaries keyed by them work")
    func nameHashing() {
        var byHash: [Int: String] = [:]
        for name in Self.names {
            if let other = byHash.updateValue(name.code, forKey: name.hashValue) { #expect(other == name.code, "\(name)") }
        }
        #expect(AttributeName.type.hashValue == AttributeName.keyType.hashValue)
        var table: [AttributeName: Int] = [:]
        for (i, name) in AttributeName.all.enumerated() { table[name] = i }
        #expect(table.count == AttributeName.all.count)
        for (i, name) in AttributeName.all.enumerated() { #expect(table[name] == i, "\(name)") }
        #expect(table[.keyType] == table[.type])
        #expect(Set(Self.names).count == AttributeName.all.count)
    }

    @Test("records: a copy shares its fields; records made apart with the same fields are equal, with one hash")
    func records() {
        let ref = PersistentRef.random()
        let attributes: [AttributeName: AttributeValue] = [.service: "s", .account: "a", .accessGroup: "g",
                                                           .synchronizable: false]
        let a = ItemRecord(persistentRef: ref, itemClass: .genericPassword, attributes: attributes, data: Data("x".utf8))
        let b = ItemRecord(persistentRef: ref, itemClass: .genericPassword, attributes: attributes, data: Data("x".utf8))
        #expect(a == b && a.hashValue == b.hashValue && a.uniqueKey == b.uniqueKey)
        let copy = a
        #expect(copy == a && copy.attributes == attributes && copy.data == Data("x".utf8) && copy.persistentRef == ref)
        let noData = ItemRecord(persistentRef: ref, itemClass: .genericPassword, attributes: attributes, data: nil)
        let otherRef = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: attributes,
                                  data: Data("x".utf8))
        var changed = attributes
        changed[.label] = "l"
        let otherAttributes = ItemRecord(persistentRef: ref, itemClass: .genericPassword, attributes: changed,
                                         data: Data("x".utf8))
        for other in [noData, otherRef, otherAttributes] { #expect(a != other) }
        #expect(Set([a, b, copy, noData, otherRef, otherAttributes]).count == 4)
    }

    @Test("class sets as bits: a class defines exactly the attributes of its set; eight attributes have fixed slots")
    func classBitsAndSlots() {
        for itemClass in ItemClass.allCases {
            let set = AttributeName.attributes(of: itemClass)
            for name in Self.names {
                #expect(itemClass.defines(name) == set.contains(name), "\(itemClass) \(name)")
                let inKey = itemClass.uniquenessKey.contains(name) && name != .accessGroup && name != .synchronizable
                #expect(itemClass.hasInKey(name) == inKey, "\(itemClass) \(name)")
            }
            #expect(itemClass.keyAttributeCountButGroupAndSync
                    == itemClass.uniquenessKey.filter { $0 != .accessGroup && $0 != .synchronizable }.count)
        }
        let fixed: [AttributeName] = [.accessible, .accessGroup, .synchronizable, .creationDate, .modificationDate,
                                      .service, .server, .account]
        #expect(fixed.map(\.fixedSlot) == Array(0..<8).map { Optional($0) })
        for name in Self.names where !fixed.contains(name) { #expect(name.fixedSlot == nil, "\(name)") }
        let sorted = Self.names.sorted { $0.code < $1.code }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.code != b.code {
            #expect(a.sortsBefore(b) && !b.sortsBefore(a), "\(a) \(b)")
        }
    }

    @Test("records: every attribute read through its slot or a scan equals the dictionary it was made from")
    func recordLayout() {
        var rng = SplitMix64(seed: 0x5107)
        let values: [AttributeValue] = ["a", "b", .bool(true), .number(7), .data(Data([1, 2])),
                                        .date(Date(timeIntervalSince1970: 1))]
        for round in 0..<300 {
            let itemClass = ItemClass.allCases[round % ItemClass.allCases.count]
            var attributes: [AttributeName: AttributeValue] = [:]
            for name in AttributeName.attributes(of: itemClass) where Bool.random(using: &rng) {
                attributes[name] = values[Int.random(in: 0..<values.count, using: &rng)]
            }
            let record = ItemRecord(persistentRef: .random(), itemClass: itemClass, attributes: attributes, data: nil)
            #expect(record.attributes == attributes && record.attributeCount == attributes.count)
            for name in Self.names { #expect(record[name] == attributes[name], "\(name)") }
            var codes: [String] = []
            record.forEachAttribute { name, _ in codes.append(name.code) }
            #expect(codes == codes.sorted() && Set(codes).count == codes.count)
            // An update replaces, adds and stamps the modification date, and keeps the order.
            var changes: [AttributeName: AttributeValue] = [:]
            for name in AttributeName.attributes(of: itemClass) where Int.random(in: 0..<4, using: &rng) == 0 {
                changes[name] = "changed"
            }
            let modified = Date(timeIntervalSince1970: 99)
            let updated = record.updated(changes, modified: modified, data: Data("d".utf8))
            var expected = attributes.merging(changes) { $1 }
            expected[.modificationDate] = .date(modified)
            #expect(updated.attributes == expected && updated.persistentRef == record.persistentRef)
            for name in Self.names { #expect(updated[name] == expected[name], "\(name)") }
            #expect(updated == ItemRecord(persistentRef: record.persistentRef, itemClass: itemClass,
                                          attributes: expected, data: Data("d".utf8)))
        }
    }
}
