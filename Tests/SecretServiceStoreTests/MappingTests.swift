import Testing
import Foundation
import SecureStore
@testable import SecureStoreSecretService

/// Mapping v1, as earlier versions wrote it: every attribute typed in its own `securestore.attr.<code>`, the
/// sequence in `securestore.seq`, `securestore.nodata` on an item without a secret. Kept here as the test
/// fixture writer (the backend only reads v1).
enum V1Fixture {
    static func attributes(of record: ItemRecord, namespace: String, sequence: UInt64) -> [String: String] {
        var out = Mapping.scope(namespace: namespace)
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
        var out = Mapping.scope(namespace: namespace)
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
            var body: [UInt8] = []
            let tag: Character
            switch value {
            case .string(let s): (tag, body) = ("s", Array(s.utf8))
            case .data(let d): (tag, body) = ("d", Array(d))
            case .number(let n): tag = "n"; for i in stride(from: 7, through: 0, by: -1) { body.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: n) >> UInt64(8 * i))) }
            case .bool(let b): (tag, body) = ("b", [b ? 1 : 0])
            case .date(let d): tag = "t"; for i in stride(from: 7, through: 0, by: -1) { body.append(UInt8(truncatingIfNeeded: d.timeIntervalSinceReferenceDate.bitPattern >> UInt64(8 * i))) }
            }
            bytes.append(tag.asciiValue ?? 0)
            append(UInt64(body.count), 4)
            bytes += body
        }
        out[Mapping.recordKey] = "2:" + Data(bytes).base64EncodedString()
        return out
    }
}

/// The mapping without a keyring: v3 round trips, v2 and v1 items read, strict decoding.
@Suite("Secret Service mapping")
struct MappingTests {
    static let attributes: [AttributeName: AttributeValue] = [
        .server: "h", .protocol: .number(0x6874_7073), .authenticationType: "dflt", .account: .data(Data([0, 1, 255])),
        .label: "", .comment: "💬\u{0}", .port: 443, .creationDate: .date(Date(timeIntervalSinceReferenceDate: 0.1 + 1e-9)),
        .isInvisible: true, .accessGroup: "g", .synchronizable: false,
    ]

    @Test("v3: nil, empty and non-empty secrets, every value kind, the class and the sequence come back exactly")
    func v3() throws {
        let unsafeService: [AttributeName: AttributeValue] = [.service: "a\u{0}b", .account: "alice", .accessGroup: "g",
                                                             .creationDate: .date(Date(timeIntervalSinceReferenceDate: -1e9))]
        for (itemClass, values) in [(ItemClass.internetPassword, Self.attributes), (.genericPassword, unsafeService),
                                    (.genericPassword, [:]), (.key, [.label: "k"])] {
            for data in [nil, Data(), Data("x".utf8)] as [Data?] {
                for sequence in [0, 7, 127, 128, 1_700_000_000_000_000_000, UInt64.max] as [UInt64] {
                    let record = ItemRecord(persistentRef: .random(), itemClass: itemClass, attributes: values, data: data)
                    let attributes = Mapping.attributes(of: record, namespace: "ns", sequence: sequence)
                    #expect(attributes[Mapping.recordKey]?.hasPrefix("3:") == true)
                    #expect(attributes.keys.allSatisfy { !$0.hasPrefix(Mapping.attributePrefix) }
                            && attributes[Mapping.noDataKey] == nil && attributes[Mapping.classKey] == nil)
                    #expect(attributes[Mapping.uniqueKeyKey]?.utf8.count == 16)
                    let (back, decodedSequence) = try Mapping.record(from: attributes, data: data ?? Data())
                    #expect(back == record && decodedSequence == sequence)
                    #expect(Mapping.itemClass(from: attributes) == itemClass)
                }
            }
        }
        let inet = ItemRecord(persistentRef: .random(), itemClass: .internetPassword, attributes: Self.attributes, data: nil)
        let attributes = Mapping.attributes(of: inet, namespace: "ns", sequence: 1)
        #expect(attributes["server"] == "h" && attributes["account"] == nil)   // data account: not text
        // A text value kept as a plain attribute is stored once: changing the plain attribute changes the record.
        var renamed = attributes
        renamed["server"] = "other"
        #expect(try Mapping.record(from: renamed, data: Data()).0.attributes[.server] == "other")
        let generic = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: unsafeService, data: nil)
        #expect(Mapping.attributes(of: generic, namespace: "ns", sequence: 1)["service"] == nil)
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

        let v3 = Mapping.attributes(of: none, namespace: "ns", sequence: 1)
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
    }
}

/// Mapping v1 items in a real keyring, written raw by `secret-tool` (as an earlier version left them).
@Suite("Secret Service mapping v1 items in the keyring", .serialized, .timeLimit(.minutes(2)))
struct MappingKeyringTests {
    func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test("v1 items are read, keep their order before new items, are upgraded to v3 on write, and secret-tool still finds them")
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
            try SecretServiceStoreTests.run(["sh", "-c", "secret-tool search --all xdg:schema org.securestore.Item "
                                             + "securestore.namespace \(quote(namespace)) 2>&1"]).stdout
        }
        let before = try raw()
        #expect(before.components(separatedBy: "attribute.securestore.attr.").count > 1, "still v1 before a write: \(before)")
        try store.update(ItemQuery(.genericPassword, [.service: .string(service)]), with: ItemChanges([.comment: "upgraded"]))
        let after = try raw()
        #expect(!after.contains("attribute.securestore.attr.") && !after.contains("attribute.securestore.seq"), "upgraded on write")
        #expect(!after.contains("attribute.securestore.class"), "v3 packs the class")
        #expect(after.components(separatedBy: "attribute.securestore.record = 3:").count == 4)
        #expect(try all().map { $0.attributes[.account] } == ["alice", "bob", "carol"], "the order survives the upgrade")
        let lookup = try SecretServiceStoreTests.run(["secret-tool", "lookup", "service", service, "account", "alice"])
        #expect(lookup.status == 0 && lookup.stdout == "v1-secret", "secret-tool prints the user's secret")
        #expect(try all()[1].data == nil, "an item without a secret keeps having none")
    }

    @Test("v2 items are read, found by their unique key (no duplicate), looked up, deleted and upgraded to v3 on write")
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
        let raw = try SecretServiceStoreTests.run(["sh", "-c", "secret-tool search --all xdg:schema org.securestore.Item "
                                                   + "securestore.namespace \(quote(namespace)) 2>&1"]).stdout
        #expect(raw.contains("attribute.securestore.record = 3:") && !raw.contains("attribute.securestore.class"), "upgraded: \(raw)")
        #expect(try store.item(matching: alice)?.data == Data("v2-secret".utf8))
        let lookup = try SecretServiceStoreTests.run(["secret-tool", "lookup", "service", service, "account", "alice"])
        #expect(lookup.status == 0 && lookup.stdout == "v2-secret", "secret-tool prints the user's secret")
        #expect(throws: SecureStoreError.self) {
            try store.add(NewItem(.genericPassword, [.service: .string(service), .account: "alice"]))
        }
    }
}
