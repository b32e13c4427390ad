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
        out[Mapping.uniqueKeyKey] = Mapping.uniqueKeyAttribute(record.uniqueKey)
        if record.data == nil { out[Mapping.noDataKey] = "1" }
        for (name, value) in record.attributes { out[Mapping.attributePrefix + name.code] = Mapping.encode(value) }
        if let service = record.attributes[.service].flatMap(Mapping.exactText) { out["service"] = service }
        if let account = record.attributes[.account].flatMap(Mapping.exactText) { out["account"] = account }
        return out
    }
}

/// The mapping without a keyring: v2 round trips, v1 items read, strict decoding.
@Suite("Secret Service mapping")
struct MappingTests {
    static let attributes: [AttributeName: AttributeValue] = [
        .server: "h", .protocol: .number(0x6874_7073), .authenticationType: "dflt", .account: .data(Data([0, 1, 255])),
        .label: "", .comment: "💬\u{0}", .port: 443, .creationDate: .date(Date(timeIntervalSinceReferenceDate: 0.1 + 1e-9)),
        .isInvisible: true, .accessGroup: "g", .synchronizable: false,
    ]

    @Test("v2: nil, empty and non-empty secrets, every value kind and the sequence come back exactly")
    func v2() throws {
        for data in [nil, Data(), Data("x".utf8)] as [Data?] {
            let record = ItemRecord(persistentRef: .random(), itemClass: .internetPassword, attributes: Self.attributes, data: data)
            let attributes = Mapping.attributes(of: record, namespace: "ns", sequence: 7)
            #expect(attributes[Mapping.recordKey]?.hasPrefix("2:") == true)
            #expect(attributes.keys.allSatisfy { !$0.hasPrefix(Mapping.attributePrefix) } && attributes[Mapping.noDataKey] == nil)
            #expect(attributes["server"] == "h" && attributes["account"] == nil)   // data account: not text
            let (back, sequence) = try Mapping.record(from: attributes, data: data ?? Data())
            #expect(back == record && sequence == 7)
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
        let v2 = Mapping.attributes(of: none, namespace: "ns", sequence: 1)
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: v2, data: Data("x".utf8)) }
        let packed = try #require(v2[Mapping.recordKey])
        let bytes = try #require(Data(base64Encoded: String(packed.dropFirst(2))))
        for bad in ["3:" + packed.dropFirst(2), "2:" + bytes.dropLast().base64EncodedString(),
                    "2:" + (bytes + Data([0])).base64EncodedString(), "2:***", ""] {
            var attributes = v2
            attributes[Mapping.recordKey] = bad
            #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: attributes, data: Data()) }
        }
    }
}

/// Mapping v1 items in a real keyring, written raw by `secret-tool` (as an earlier version left them).
@Suite("Secret Service mapping v1 items in the keyring", .serialized, .timeLimit(.minutes(2)))
struct MappingKeyringTests {
    func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test("v1 items are read, keep their order before new items, are upgraded to v2 on write, and secret-tool still finds them")
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
        #expect(after.components(separatedBy: "attribute.securestore.record = 2:").count == 4)
        #expect(try all().map { $0.attributes[.account] } == ["alice", "bob", "carol"], "the order survives the upgrade")
        let lookup = try SecretServiceStoreTests.run(["secret-tool", "lookup", "service", service, "account", "alice"])
        #expect(lookup.status == 0 && lookup.stdout == "v1-secret", "secret-tool prints the user's secret")
        #expect(try all()[1].data == nil, "an item without a secret keeps having none")
    }
}
