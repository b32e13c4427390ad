import Testing
import Foundation
import SecureStoreCore
@testable import SecureStoreSecretService

/// Mapping v1, as earlier versions wrote it: every attribute typed in its own `securestore.attr.<code>`, the
/// sequence in `securestore.seq`, `securestore.nodata` on an item without a secret. Kept here as the test
/// fixture writer (the backend only reads v1).
enum V1Fixture {
    static func attributes(of record: ItemRecord, namespace: String, sequence: UInt64) -> [String: String] {
        var out = [Mapping.schemaKey: Mapping.schema, Mapping.namespaceKey: namespace]
        out[Mapping.classKey] = record.itemClass.rawValue
        let digits = String(sequence)
        out[Mapping.sequenceKey] = String(repeating: "0", count: 20 - digits.count) + digits
        out[Mapping.refKey] = Mapping.refAttribute(record.persistentRef)
        out[Mapping.uniqueKeyKey] = Mapping.legacyUniqueKeyAttribute(record.uniqueKey)
        if record.data == nil { out[Mapping.noDataKey] = "1" }
        for (name, value) in record.attributes { out[Mapping.attributePrefix + name.code] = Mapping.encode(value) }
        if let service = record.attributes[.service].flatMap(Mapping.exactText) { out["service"] = service }
        if let account = record.attributes[.account].flatMap(Mapping.exactText) { out["account"] = account }
        return out
    }
}

/// Mapping v2, as the previous version wrote it: class and raw unique key as attributes, the record packed with
/// fixed-width integers under `2:`. Kept here as the test fixture writer (the backend only reads v2).
enum V2Fixture {
    static func attributes(of record: ItemRecord, namespace: String, sequence: UInt64) -> [String: String] {
        var out = [Mapping.schemaKey: Mapping.schema, Mapping.namespaceKey: namespace]
        out[Mapping.classKey] = record.itemClass.rawValue
        out[Mapping.refKey] = Mapping.refAttribute(record.persistentRef)
        out[Mapping.uniqueKeyKey] = Mapping.legacyUniqueKeyAttribute(record.uniqueKey)
        for (name, plain) in Mapping.plainKeys {
            if let text = record.attributes[name].flatMap(Mapping.exactText), Mapping.isSafe(text) { out[plain] = text }
        }
        var bytes: [UInt8] = [record.data == nil ? 0 : 1]
        func append(_ v: UInt64, _ n: Int) { for i in stride(from: n - 1, through: 0, by: -1) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(8 * i))) } }
        append(sequence, 8)
        append(UInt64(record.attributes.count), 2)
        for (name, value) in record.attributes.sorted(by: { $0.key.code < $1.key.code }) {
            bytes.append(UInt8(name.code.utf8.count))
            bytes += Array(name.code.utf8)
            let (tag, body) = fixtureValue(value)
            bytes.append(tag.asciiValue ?? 0)
            append(UInt64(body.count), 4)
            bytes += body
        }
        out[Mapping.recordKey] = "2:" + Data(bytes).base64EncodedString()
        return out
    }
}

/// A value as the v2 and v3 packed records wrote it: its tag and its bytes (numbers and dates as 8 bytes,
/// big-endian; a date by its bit pattern).
func fixtureValue(_ value: AttributeValue) -> (tag: Character, body: [UInt8]) {
    func bigEndian(_ v: UInt64) -> [UInt8] { stride(from: 7, through: 0, by: -1).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * $0)) } }
    switch value {
    case .string(let s): return ("s", Array(s.utf8))
    case .data(let d): return ("d", Array(d))
    case .number(let n): return ("n", bigEndian(UInt64(bitPattern: n)))
    case .bool(let b): return ("b", [b ? 1 : 0])
    case .date(let d): return ("t", bigEndian(d.timeIntervalSinceReferenceDate.bitPattern))
    }
}

/// Mapping v3, as the previous version wrote it: schema, hex reference, hashed key on every item, the class
/// packed with the record under `3:` (codes spelled out, `p` for a value kept as a plain attribute). Kept here
/// as the test fixture writer (the backend only reads v3).
enum V3Fixture {
    static func attributes(of record: ItemRecord, namespace: String, sequence: UInt64) -> [String: String] {
        var out = [Mapping.schemaKey: Mapping.schema, Mapping.namespaceKey: namespace]
        out[Mapping.refKey] = Mapping.refAttribute(record.persistentRef)
        out[Mapping.uniqueKeyKey] = Mapping.uniqueKeyAttribute(record.uniqueKey)
        for (name, plain) in Mapping.plainKeys {
            if let text = record.attributes[name].flatMap(Mapping.exactText), Mapping.isSafe(text) { out[plain] = text }
        }
        func varint(_ v: UInt64, _ out: inout [UInt8]) {
            var v = v
            while v >= 0x80 { out.append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
            out.append(UInt8(v))
        }
        var bytes: [UInt8] = [record.data == nil ? 0 : 1, UInt8(record.itemClass.rawValue.utf8.count)] + Array(record.itemClass.rawValue.utf8)
        varint(sequence, &bytes)
        varint(UInt64(record.attributes.count), &bytes)
        for (name, value) in record.attributes.sorted(by: { $0.key.code < $1.key.code }) {
            bytes.append(UInt8(name.code.utf8.count))
            bytes += Array(name.code.utf8)
            if case .string(let s) = value, Mapping.isSafe(s), Mapping.plainKeys.contains(where: { $0.0 == name }) {
                bytes.append(UInt8(ascii: "p"))
                continue
            }
            let (tag, body) = fixtureValue(value)
            bytes.append(tag.asciiValue ?? 0)
            varint(UInt64(body.count), &bytes)
            bytes += body
        }
        out[Mapping.recordKey] = "3:" + Data(bytes).base64EncodedString()
        return out
    }
}

/// The mapping without a keyring: v4 round trips, v3, v2 and v1 items read, strict decoding.
/// Whether these tests run on KeePassXC (scripts/with-keepassxc.sh). It differs from gnome-keyring where MAPPING.md
/// ("Providers") says: it merges the attributes an item is given with those it has (an upgraded item keeps its old
/// attributes beside the v4 ones; reads use the v4 ones), answers writes with prompts, and (as the tests run it)
/// saves on exit only.
let onKeePassXC = ProcessInfo.processInfo.environment["SECURESTORE_SECRET_SERVICE_PROVIDER"] == "keepassxc"

@Suite("Secret Service mapping")
struct MappingTests {

    static let attributes: [AttributeName: AttributeValue] = [
        .server: "h", .protocol: .number(0x6874_7073), .authenticationType: "dflt", .account: .data(Data([0, 1, 255])),
        .label: "", .comment: "💬\u{0}", .port: 443, .creationDate: .date(Date(timeIntervalSinceReferenceDate: 0.1 + 1e-9)),
        .isInvisible: true, .accessGroup: "g", .synchronizable: false,
    ]

    /// Records of every shape the tests round-trip: every value kind, unsafe text, the implied values and
    /// their neighbours, negative and large numbers.
    static let shapes: [(ItemClass, [AttributeName: AttributeValue])] = {
        let date = AttributeValue.date(Date(timeIntervalSinceReferenceDate: 7.25e8 + 1e-6))
        return [
            (.internetPassword, attributes),
            (.genericPassword, [.service: "a\u{0}b", .account: "alice", .accessGroup: "g",
                                .creationDate: .date(Date(timeIntervalSinceReferenceDate: -1e9))]),
            (.genericPassword, [:]),
            (.key, [.label: "k"]),
            (.genericPassword, [.service: "s", .account: "", .accessGroup: "securestore", .accessible: "ak",
                                .synchronizable: false, .creationDate: date, .modificationDate: date]),
            (.genericPassword, [.service: .data(Data("s".utf8)), .accessGroup: "securestore ", .accessible: "ck",
                                .synchronizable: true, .creationDate: date,
                                .modificationDate: .date(Date(timeIntervalSinceReferenceDate: 7.25e8))]),
            (.certificate, [.modificationDate: date, .certificateType: .number(-1), .serialNumber: .data(Data()),
                            .accessible: "dk"]),
            (.internetPassword, [.port: .number(Int64.min), .protocol: "htps", .authenticationType: .number(Int64.max),
                                 .server: "", .path: "/"]),
        ]
    }()

    @Test("v4: nil, empty and non-empty secrets, every value kind, the class and the sequence come back exactly")
    func v4() throws {
        for (itemClass, values) in Self.shapes {
            for data in [nil, Data(), Data("x".utf8)] as [Data?] {
                for sequence in [0, 7, 127, 128, 1_700_000_000_000_000_000, UInt64.max] as [UInt64] {
                    let record = ItemRecord(persistentRef: .random(), itemClass: itemClass, attributes: values, data: data)
                    let attributes = Mapping.attributes(of: record, namespace: "ns", sequence: sequence)
                    #expect(attributes[Mapping.recordKeyV4]?.hasPrefix("4:") == true)
                    #expect(attributes[Mapping.schemaKey] == nil && attributes[Mapping.refKey] == nil
                            && attributes[Mapping.recordKey] == nil && attributes[Mapping.classKey] == nil)
                    #expect(attributes.keys.allSatisfy { !$0.hasPrefix(Mapping.attributePrefix) })
                    #expect(attributes[Mapping.refKeyV4]?.utf8.count == 22)
                    #expect((attributes[Mapping.uniqueKeyKey]?.utf8.count ?? 16) == 16)
                    let (back, decodedSequence) = try Mapping.record(from: attributes, data: data ?? Data())
                    #expect(back == record && decodedSequence == sequence, "\(itemClass) \(values)")
                    #expect(Mapping.itemClass(from: attributes) == itemClass)
                }
            }
        }
        // A reference a caller made up (not 16 bytes) survives too.
        let odd = ItemRecord(persistentRef: PersistentRef(data: Data([1, 2, 3])), itemClass: .key, attributes: [:], data: nil)
        #expect(try Mapping.record(from: Mapping.attributes(of: odd, namespace: "ns", sequence: 1), data: Data()).0 == odd)
        let inet = ItemRecord(persistentRef: .random(), itemClass: .internetPassword, attributes: Self.attributes, data: nil)
        let attributes = Mapping.attributes(of: inet, namespace: "ns", sequence: 1)
        #expect(attributes["server"] == "h" && attributes["account"] == nil)   // data account: not text
        // A text value kept as a plain attribute is stored once: changing the plain attribute changes the record.
        var renamed = attributes
        renamed["server"] = "other"
        #expect(try Mapping.record(from: renamed, data: Data()).0.attributes[.server] == "other")
        let generic = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: Self.shapes[1].1, data: nil)
        #expect(Mapping.attributes(of: generic, namespace: "ns", sequence: 1)["service"] == nil)
    }

    @Test("v4: the key attribute only where no plain service or account of a generic password narrows a uniqueness search")
    func v4KeyAttribute() {
        func attributes(_ itemClass: ItemClass, _ values: [AttributeName: AttributeValue]) -> [String: String] {
            Mapping.attributes(of: ItemRecord(persistentRef: .random(), itemClass: itemClass, attributes: values, data: nil),
                               namespace: "ns", sequence: 1)
        }
        for values: [AttributeName: AttributeValue] in [[.service: "s"], [.account: "a"], [.service: "s", .account: "a"],
                                                        [.service: "", .account: "a"], [.service: .data(Data("s".utf8))]] {
            #expect(attributes(.genericPassword, values)[Mapping.uniqueKeyKey] == nil, "\(values)")
        }
        for values: [AttributeName: AttributeValue] in [[:], [.service: "", .account: ""], [.service: "a\u{0}b"],
                                                        [.account: .data(Data([0xFF]))], [.label: "only a label"]] {
            #expect(attributes(.genericPassword, values)[Mapping.uniqueKeyKey] != nil, "\(values)")
        }
        #expect(attributes(.internetPassword, [.server: "h", .account: "a"])[Mapping.uniqueKeyKey] != nil)
        #expect(attributes(.key, [:])[Mapping.uniqueKeyKey] != nil)
    }

    @Test("v4: the tables name every attribute and class, the usual generic password packs to 13 bytes")
    func v4Tables() throws {
        #expect(Set(AttributeName.all.map(\.code)).isSubset(of: Set(PackedRecord.codes)))
        #expect(Set(PackedRecord.codes).count == PackedRecord.codes.count && PackedRecord.codes.count < Int(PackedRecord.escape))
        #expect(Set(PackedRecord.classes) == Set(ItemClass.allCases) && PackedRecord.classes.count <= 8)
        // What an add through the core stores for (service, account): both plain, the defaults implied, one date.
        let now = AttributeValue.date(Date())
        let record = ItemRecord(persistentRef: .random(), itemClass: .genericPassword,
                                attributes: [.service: "svc-3", .account: "acct-42", .accessGroup: "securestore",
                                             .accessible: "ak", .synchronizable: false, .creationDate: now, .modificationDate: now],
                                data: Data("secret".utf8))
        let attributes = Mapping.attributes(of: record, namespace: "ns", sequence: 300)
        #expect(Set(attributes.keys) == [Mapping.namespaceKey, Mapping.refKeyV4, "service", "account", Mapping.recordKeyV4])
        let packed = try #require(attributes[Mapping.recordKeyV4])
        let bytes = try #require(Mapping.unbase64(packed.dropFirst(2)))
        // header: secret · class 0 · sync, pdmn, agrp implied · mdat = cdat; sequence 300; cdat (number 3, `t`, 8 bytes)
        #expect(bytes.count == 13 && Array(bytes.prefix(5)) == [0xF1, 0xAC, 0x02, 3, UInt8(ascii: "t")])
        #expect(packed.utf8.count == 20)
    }

    @Test("v3 items (written by the previous version) read back exactly")
    func v3() throws {
        for (itemClass, values) in Self.shapes {
            for data in [nil, Data(), Data("x".utf8)] as [Data?] {
                let record = ItemRecord(persistentRef: .random(), itemClass: itemClass, attributes: values, data: data)
                let attributes = V3Fixture.attributes(of: record, namespace: "ns", sequence: 128)
                let (back, sequence) = try Mapping.record(from: attributes, data: data ?? Data())
                #expect(back == record && sequence == 128)
                #expect(Mapping.itemClass(from: attributes) == itemClass)
            }
        }
    }

    @Test("v2 items (written by the previous version) read back exactly")
    func v2() throws {
        for data in [nil, Data(), Data("x".utf8)] as [Data?] {
            let record = ItemRecord(persistentRef: .random(), itemClass: .internetPassword, attributes: Self.attributes, data: data)
            let attributes = V2Fixture.attributes(of: record, namespace: "ns", sequence: 7)
            let (back, sequence) = try Mapping.record(from: attributes, data: data ?? Data())
            #expect(back == record && sequence == 7)
            #expect(Mapping.itemClass(from: attributes) == .internetPassword)
        }
    }

    @Test("v1 items (written by earlier versions) read back exactly, the no-secret marker included")
    func v1() throws {
        for data in [nil, Data(), Data("x".utf8)] as [Data?] {
            let record = ItemRecord(persistentRef: .random(), itemClass: .internetPassword, attributes: Self.attributes, data: data)
            let (back, sequence) = try Mapping.record(from: V1Fixture.attributes(of: record, namespace: "ns", sequence: 1_700_000_000_000_000_000),
                                                      data: data ?? Data())
            #expect(back == record && sequence == 1_700_000_000_000_000_000)
        }
        // Before the marker existed: no attribute, empty secret = an empty secret.
        let record = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: [.service: "s"], data: Data())
        #expect(try Mapping.record(from: V1Fixture.attributes(of: record, namespace: "ns", sequence: 1), data: Data()).0.data == Data())
    }

    @Test("malformed items are refused: markers, packed records cut, padded or of another version")
    func malformed() throws {
        let none = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: [.service: "s"], data: nil)
        var v1 = V1Fixture.attributes(of: none, namespace: "ns", sequence: 1)
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: v1, data: Data("x".utf8)) }
        v1[Mapping.noDataKey] = "yes"
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: v1, data: Data()) }
        let v2 = V2Fixture.attributes(of: none, namespace: "ns", sequence: 1)
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: v2, data: Data("x".utf8)) }
        let packed = try #require(v2[Mapping.recordKey])
        let bytes = try #require(Data(base64Encoded: String(packed.dropFirst(2))))
        for bad in ["4:" + packed.dropFirst(2), "2:" + bytes.dropLast().base64EncodedString(),
                    "2:" + (bytes + Data([0])).base64EncodedString(), "2:***", ""] {
            var attributes = v2
            attributes[Mapping.recordKey] = bad
            #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: attributes, data: Data()) }
        }
        var noClass = v2
        noClass[Mapping.classKey] = nil
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: noClass, data: Data()) }

        let v3 = V3Fixture.attributes(of: none, namespace: "ns", sequence: 1)
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: v3, data: Data("x".utf8)) }
        var noPlain = v3
        noPlain["service"] = nil   // the packed record says "the plain attribute": it must be there
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: noPlain, data: Data()) }
        let packed3 = try #require(v3[Mapping.recordKey])
        let bytes3 = [UInt8](try #require(Data(base64Encoded: String(packed3.dropFirst(2)))))
        // flags 0 · class "genp" · sequence 1 · count 1 · "svce" p
        #expect(bytes3 == [0, 4] + Array("genp".utf8) + [1, 1, 4] + Array("svce".utf8) + [UInt8(ascii: "p")])
        let header: [UInt8] = [0, 4] + Array("genp".utf8)
        for bad: [UInt8] in [Array(bytes3.dropLast()), bytes3 + [0],
                             header + [0x81, 0x00, 0],                                  // overlong sequence
                             header + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0],   // over 64 bits
                             [0, 4] + Array("gen?".utf8) + [1, 0],                     // unknown class
                             [2, 4] + Array("genp".utf8) + [1, 0],                     // unknown flag
                             header + [1, 1, 4] + Array("cmmt".utf8) + [UInt8(ascii: "p")],   // plain tag on a non-plain attribute
                             header + [1, 1, 4] + Array("cmmt".utf8) + [UInt8(ascii: "s"), 5, 0x61],   // value cut
                             header + [1, 1, 4] + Array("cmmt".utf8) + [UInt8(ascii: "x"), 0]] {
            var attributes = v3
            attributes[Mapping.recordKey] = "3:" + Data(bad).base64EncodedString()
            #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: attributes, data: Data()) }
        }
        var good = v3
        good[Mapping.recordKey] = "3:" + Data(header + [0x80, 0x01, 0]).base64EncodedString()   // sequence 128, shortest
        #expect(try Mapping.record(from: good, data: Data()).1 == 128)

        let v4 = Mapping.attributes(of: none, namespace: "ns", sequence: 1)
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: v4, data: Data("x".utf8)) }
        for (key, bad) in [(Mapping.refKeyV4, "AAAA="), (Mapping.refKeyV4, "AAB"), (Mapping.refKeyV4, "A"), (Mapping.refKeyV4, "*")] {
            var attributes = v4
            attributes[key] = bad   // padded, stray bits, cut, not base64
            #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: attributes, data: Data()) }
        }
        var noRef = v4
        noRef[Mapping.refKeyV4] = nil
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: noRef, data: Data()) }
        let packed4 = try #require(v4[Mapping.recordKeyV4])
        let bytes4 = try #require(Mapping.unbase64(packed4.dropFirst(2)))
        #expect(bytes4 == [0, 1], "no secret · class 0 · nothing implied · sequence 1 · svce only as the plain attribute")
        let date: [UInt8] = [UInt8(ascii: "t"), 0, 0, 0, 0, 0, 0, 0, 0]
        for bad: [UInt8] in [[], [0], [0, 0x81, 0x00],                                  // cut, overlong sequence
                             [0x0A, 1], [0x80, 1],                                       // class 5, same dates without cdat
                             [0, 1, 13, UInt8(ascii: "s"), 0, 13, UInt8(ascii: "s"), 0], // repeated code
                             [0, 1, 13, UInt8(ascii: "s"), 0, 12, UInt8(ascii: "s"), 0], // codes out of order
                             [0x10, 1, 2, UInt8(ascii: "0")],                            // implied sync given again
                             [0, 1, 45, UInt8(ascii: "s"), 0],                           // number past the table
                             [0, 1, 7, UInt8(ascii: "s"), 5, 0x61],                      // value cut
                             [0, 1, 7, UInt8(ascii: "x")],                               // unknown tag
                             [0, 1, 3] + date.dropLast(),                                // date cut
                             [0, 1, 19, UInt8(ascii: "n"), 0x80, 0x00],                  // overlong number
                             [0, 1, 0xFF, 4] + Array("svce".utf8) + [UInt8(ascii: "s"), 0],   // escaped code of the table
                             [0, 1, 0xFF, 4] + Array("zzzz".utf8) + [UInt8(ascii: "s"), 0]] { // unknown code
            var attributes = v4
            attributes[Mapping.recordKeyV4] = "4:" + Mapping.base64(bad)
            #expect(throws: Mapping.DecodeFailure.self, "\(bad)") { try Mapping.record(from: attributes, data: Data()) }
        }
        for bad in ["3:" + packed4.dropFirst(2), "4:" + Data(bytes4).base64EncodedString() + "==", "4:***", ""] {
            var attributes = v4
            attributes[Mapping.recordKeyV4] = bad
            #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: attributes, data: Data()) }
        }
        var numbers = v4
        numbers[Mapping.recordKeyV4] = "4:" + Mapping.base64([0, 1, 3] + date + [19, UInt8(ascii: "n"), 0x03])
        #expect(try Mapping.record(from: numbers, data: Data()).0.attributes[.port] == .number(-2))
    }
}

/// Mapping v1 items in a real keyring, written raw by `secret-tool` (as an earlier version left them).
@Suite("Secret Service mapping v1 items in the keyring", .serialized, .timeLimit(.minutes(2)), .requires(.secretService))
struct MappingKeyringTests {
    func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test("v1 items are read, keep their order before new items, are upgraded to v4 on write, and secret-tool still finds them")
    func v1ItemsInKeyring() throws {
        let source = try SecretServiceStoreTests.freshStore()
        let namespace = "tests-v1-\(UInt64.random(in: 0...UInt64.max))"
        let service = "v1-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? source.clear() }
        try source.add(NewItem(.genericPassword, [.service: .string(service), .account: "alice"], data: Data("v1-secret".utf8)))
        try source.add(NewItem(.genericPassword, [.service: .string(service), .account: "bob"], data: nil))
        let records = try source.exportRecords()
        #expect(records.count == 2)
        // Written by secret-tool with v1 attributes into a fresh namespace; sequences as v1 wrote them
        // (nanoseconds since 1970).
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ss-v1-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        for (i, record) in records.enumerated() {
            try (record.data ?? Data()).write(to: file)
            let attributes = V1Fixture.attributes(of: record, namespace: namespace, sequence: 1_700_000_000_000_000_000 + UInt64(i))
            let words = attributes.sorted { $0.key < $1.key }.flatMap { [quote($0.key), quote($0.value)] }
            let stored = try SecretServiceStoreTests.run(["sh", "-c", "secret-tool store --label v1 " + words.joined(separator: " ")
                                                          + " < " + quote(file.path)])
            #expect(stored.status == 0)
        }
        let store = try SecretServiceStore(namespace: namespace)
        defer { _ = try? store.clear() }
        func all() throws -> [ItemRecord] { try store.exportRecords() }
        #expect(try all() == records, "v1 items read back exactly, in their order")
        try store.add(NewItem(.genericPassword, [.service: .string(service), .account: "carol"], data: Data("new".utf8)))
        #expect(try all().map { $0.attributes[.account] } == ["alice", "bob", "carol"], "a new item comes after the v1 items")
        func raw() throws -> String {
            // secret-tool prints the attributes to standard error.
            try SecretServiceStoreTests.run(["sh", "-c", "secret-tool search --all "
                                             + "securestore.namespace \(quote(namespace)) 2>&1"]).stdout
        }
        let before = try raw()
        #expect(before.components(separatedBy: "attribute.securestore.attr.").count > 1, "still v1 before a write: \(before)")
        try store.update(ItemQuery(.genericPassword, [.service: .string(service)]), with: ItemChanges([.comment: "upgraded"]))
        let after = try raw()
        if !onKeePassXC {
            #expect(!after.contains("attribute.securestore.attr.") && !after.contains("attribute.securestore.seq"), "upgraded on write")
            #expect(!after.contains("attribute.securestore.class"), "v4 packs the class")
        }
        #expect(after.components(separatedBy: "attribute.record = 4:").count == 4)
        #expect(try all().map { $0.attributes[.account] } == ["alice", "bob", "carol"], "the order survives the upgrade")
        let lookup = try SecretServiceStoreTests.run(["secret-tool", "lookup", "service", service, "account", "alice"])
        #expect(lookup.status == 0 && lookup.stdout == "v1-secret", "secret-tool prints the user's secret")
        #expect(try all()[1].data == nil, "an item without a secret keeps having none")
    }

    @Test("v2 items are read, found by their unique key (no duplicate), looked up, deleted and upgraded to v4 on write")
    func v2ItemsInKeyring() throws {
        let source = try SecretServiceStoreTests.freshStore()
        let namespace = "tests-v2-\(UInt64.random(in: 0...UInt64.max))"
        let service = "v2-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? source.clear() }
        try source.add(NewItem(.genericPassword, [.service: .string(service), .account: "alice"], data: Data("v2-secret".utf8)))
        try source.add(NewItem(.genericPassword, [.service: .string(service), .account: "bob"], data: nil))
        try source.add(NewItem(.internetPassword, [.server: "h", .account: .data(Data([0, 1]))], data: Data("i".utf8)))
        let records = try source.exportRecords()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ss-v2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        for (i, record) in records.enumerated() {
            try (record.data ?? Data()).write(to: file)
            let attributes = V2Fixture.attributes(of: record, namespace: namespace, sequence: UInt64(i + 1))
            let words = attributes.sorted { $0.key < $1.key }.flatMap { [quote($0.key), quote($0.value)] }
            let stored = try SecretServiceStoreTests.run(["sh", "-c", "secret-tool store --label v2 " + words.joined(separator: " ")
                                                          + " < " + quote(file.path)])
            #expect(stored.status == 0)
        }
        let store = try SecretServiceStore(namespace: namespace)
        defer { _ = try? store.clear() }
        #expect(try store.exportRecords() == records, "v2 items read back exactly, in their order")
        for item in [NewItem(.genericPassword, [.service: .string(service), .account: "alice"], data: Data("again".utf8)),
                     NewItem(.internetPassword, [.server: "h", .account: .data(Data([0, 1]))])] {
            #expect(throws: SecureStoreError.self) { try store.add(item) }
            do { try store.add(item) } catch { #expect(error.code == .duplicateItem) }
        }
        let alice = ItemQuery(.genericPassword, [.service: .string(service), .account: "alice"], returning: .data)
        #expect(try store.item(matching: alice)?.data == Data("v2-secret".utf8))
        #expect(try store.delete(ItemQuery(.genericPassword, [.service: .string(service), .account: "bob"])) == 1)
        #expect(try store.clear([.internetPassword]) == 1, "clearing one class finds the v2 item by its class attribute")
        try store.update(ItemQuery(.genericPassword, [.service: .string(service)]), with: ItemChanges([.comment: "upgraded"]))
        let raw = try SecretServiceStoreTests.run(["sh", "-c", "secret-tool search --all "
                                                   + "securestore.namespace \(quote(namespace)) 2>&1"]).stdout
        #expect(raw.contains("attribute.record = 4:")
                && (onKeePassXC || !raw.contains("attribute.securestore.class")), "upgraded: \(raw)")
        #expect(try store.item(matching: alice)?.data == Data("v2-secret".utf8))
        let lookup = try SecretServiceStoreTests.run(["secret-tool", "lookup", "service", service, "account", "alice"])
        #expect(lookup.status == 0 && lookup.stdout == "v2-secret", "secret-tool prints the user's secret")
        #expect(throws: SecureStoreError.self) {
            try store.add(NewItem(.genericPassword, [.service: .string(service), .account: "alice"]))
        }
    }

    /// Stores `records` with `fixture`'s attributes through `secret-tool` (as an earlier version left them).
    func storeRaw(_ records: [ItemRecord], namespace: String,
                  _ fixture: (ItemRecord, String, UInt64) -> [String: String]) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ss-raw-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        for (i, record) in records.enumerated() {
            try (record.data ?? Data()).write(to: file)
            let attributes = fixture(record, namespace, UInt64(i + 1))
            let words = attributes.sorted { $0.key < $1.key }.flatMap { [quote($0.key), quote($0.value)] }
            let stored = try SecretServiceStoreTests.run(["sh", "-c", "secret-tool store --label old " + words.joined(separator: " ")
                                                          + " < " + quote(file.path)])
            #expect(stored.status == 0)
        }
    }

    func rawAttributes(_ namespace: String) throws -> String {
        try SecretServiceStoreTests.run(["sh", "-c", "secret-tool search --all securestore.namespace \(quote(namespace)) 2>&1"]).stdout
    }

    @Test("v3 items are read, found by their unique key (no duplicate), looked up, deleted and upgraded to v4 on write")
    func v3ItemsInKeyring() throws {
        let source = try SecretServiceStoreTests.freshStore()
        let namespace = "tests-v3-\(UInt64.random(in: 0...UInt64.max))"
        let service = "v3-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? source.clear() }
        try source.add(NewItem(.genericPassword, [.service: .string(service), .account: "alice"], data: Data("v3-secret".utf8)))
        try source.add(NewItem(.genericPassword, [.service: .string(service), .account: "bob"], data: nil))
        try source.add(NewItem(.internetPassword, [.server: "h", .account: .data(Data([0, 1]))], data: Data("i".utf8)))
        try source.add(NewItem(.key, [.applicationTag: .data(Data(service.utf8)), .label: "k"], data: Data("key".utf8)))
        let records = try source.exportRecords()
        try storeRaw(records, namespace: namespace, V3Fixture.attributes)
        let store = try SecretServiceStore(namespace: namespace)
        defer { _ = try? store.clear() }
        #expect(try store.exportRecords() == records, "v3 items read back exactly, in their order")
        for item in [NewItem(.genericPassword, [.service: .string(service), .account: "alice"], data: Data("again".utf8)),
                     NewItem(.internetPassword, [.server: "h", .account: .data(Data([0, 1]))]),
                     NewItem(.key, [.applicationTag: .data(Data(service.utf8))])] {
            do { try store.add(item); Issue.record("a duplicate of a v3 item was added") } catch { #expect(error.code == .duplicateItem) }
        }
        let alice = ItemQuery(.genericPassword, [.service: .string(service), .account: "alice"], returning: .data)
        #expect(try store.item(matching: alice)?.data == Data("v3-secret".utf8))
        #expect(try store.item(matching: .item(records[0].persistentRef, returning: .data))?.data
                == Data("v3-secret".utf8), "found by its reference (v3 form)")
        #expect(try store.delete(ItemQuery(.genericPassword, [.service: .string(service), .account: "bob"])) == 1)
        #expect(try store.clear([.internetPassword]) == 1, "clearing one class finds the v3 item by its packed class")
        try store.update(ItemQuery(.genericPassword, [.service: .string(service)]), with: ItemChanges([.comment: "upgraded"]))
        try store.update(ItemQuery(.key, [:]), with: ItemChanges([.label: "k2"]))
        let raw = try rawAttributes(namespace)
        #expect(raw.components(separatedBy: "attribute.record = 4:").count == 3, "both upgraded: \(raw)")
        // (gnome-keyring keeps an item's schema when its attributes are set without one.)
        if !onKeePassXC {
            #expect(!raw.contains("attribute.securestore.record") && !raw.contains("attribute.securestore.ref"),
                    "no v3 attribute left: \(raw)")
            #expect(raw.components(separatedBy: "attribute.securestore.key").count == 2, "only the key item keeps a key attribute: \(raw)")
        }
        #expect(try store.item(matching: alice)?.data == Data("v3-secret".utf8))
        #expect(try store.item(matching: .item(records[0].persistentRef, returning: .data))?.data
                == Data("v3-secret".utf8), "found by its reference (v4 form)")
        let lookup = try SecretServiceStoreTests.run(["secret-tool", "lookup", "service", service, "account", "alice"])
        #expect(lookup.status == 0 && lookup.stdout == "v3-secret", "secret-tool prints the user's secret")
        for item in [NewItem(.genericPassword, [.service: .string(service), .account: "alice"]),
                     NewItem(.key, [.applicationTag: .data(Data(service.utf8))])] {
            do { try store.add(item); Issue.record("a duplicate of an upgraded item was added") } catch { #expect(error.code == .duplicateItem) }
        }
    }

    @Test("v4 generic passwords without a key attribute stay unique: add, update into another's key, import; secret-tool finds them")
    func v4UniqueWithoutKeyAttribute() throws {
        let namespace = "tests-v4-\(UInt64.random(in: 0...UInt64.max))"
        let service = "v4-\(UInt32.random(in: 0...UInt32.max))"
        let store = try SecretServiceStore(namespace: namespace)
        defer { _ = try? store.clear() }
        try store.add(NewItem(.genericPassword, [.service: .string(service), .account: "alice"], data: Data("v4 sécret\n".utf8)))
        try store.add(NewItem(.genericPassword, [.service: .string(service), .account: "bob"], data: Data("b".utf8)))
        try store.add(NewItem(.genericPassword, [.account: "carol"], data: Data("c".utf8)))
        try store.add(NewItem(.genericPassword, [:], data: Data("none".utf8)))
        let raw = try rawAttributes(namespace)
        #expect(raw.components(separatedBy: "attribute.securestore.key").count == 2,
                "only the password without service and account has a key attribute: \(raw)")
        #expect(!raw.contains("org.securestore.Item") && !raw.contains("attribute.xdg:schema"), "no explicit schema: \(raw)")
        for item in [NewItem(.genericPassword, [.service: .string(service), .account: "alice"]),
                     NewItem(.genericPassword, [.account: "carol", .service: ""]),
                     NewItem(.genericPassword, [.service: ""])] {
            do { try store.add(item); Issue.record("a duplicate was added: \(item)") } catch { #expect(error.code == .duplicateItem) }
        }
        // Updates that would give one item another's key: one item, then two at once (dave: service2 / alice).
        do {
            try store.update(ItemQuery(.genericPassword, [.service: .string(service), .account: "bob"]), with: ItemChanges([.account: "alice"]))
            Issue.record("an update made a duplicate")
        } catch { #expect(error.code == .duplicateItem) }
        do {
            try store.update(ItemQuery(.genericPassword, [.account: "carol"]), with: ItemChanges([.service: .string(service), .account: "alice"]))
            Issue.record("an update made a duplicate")
        } catch { #expect(error.code == .duplicateItem) }
        try store.add(NewItem(.genericPassword, [.service: .string(service + "2"), .account: "alice"], data: Data("d".utf8)))
        do {
            try store.update(ItemQuery(.genericPassword, [.service: .string(service)]), with: ItemChanges([.service: .string(service + "2")]))
            Issue.record("an update of two items made a duplicate")
        } catch { #expect(error.code == .duplicateItem) }
        #expect(try store.delete(ItemQuery(.genericPassword, [.service: .string(service + "2")])) == 1)
        // An import of a copy of alice (another reference, same key) clashes.
        let records = try store.exportRecords()
        let target = try SecretServiceStore(namespace: namespace + "-copy")
        defer { _ = try? target.clear() }
        #expect(try target.importRecords(records) == 4)
        let copy = records.map { ItemRecord(persistentRef: .random(), itemClass: $0.itemClass, attributes: $0.attributes, data: $0.data) }
        do { _ = try target.importRecords([copy[0]]); Issue.record("an import made a duplicate") } catch { #expect(error.code == .duplicateItem) }
        #expect(try target.exportRecords() == records)
        let lookup = try SecretServiceStoreTests.run(["secret-tool", "lookup", "service", service, "account", "alice"])
        #expect(lookup.status == 0 && lookup.stdout == "v4 sécret\n", "secret-tool prints exactly the user's secret")
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: .string(service)], limit: .all, returning: .data))
                .compactMap(\.data) == [Data("v4 sécret\n".utf8), Data("b".utf8)])
    }
}
