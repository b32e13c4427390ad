import Testing
import Foundation
import SecureStore
@testable import SecretServiceStore

/// "No secret" on the Secret Service: an empty D-Bus secret plus `securestore.nodata` = `1`; items written
/// before that attribute existed (no attribute, empty secret) keep their meaning: an empty secret.
@Suite("Secret Service mapping: no secret")
struct MappingNoDataTests {
    func roundTrip(_ data: Data?) throws -> ItemRecord {
        let record = ItemRecord(persistentRef: .random(), itemClass: .internetPassword,
                                attributes: [.server: "h", .protocol: .number(0x6874_7073), .authenticationType: "dflt"], data: data)
        let attributes = Mapping.attributes(of: record, namespace: "ns", sequence: 7)
        #expect((attributes[Mapping.noDataKey] == "1") == (data == nil))
        return try Mapping.record(from: attributes, data: data ?? Data()).0
    }

    @Test("nil, empty and non-empty secrets come back as they were; numbers stay numbers")
    func kinds() throws {
        for data in [nil, Data(), Data("x".utf8)] as [Data?] {
            let back = try roundTrip(data)
            #expect(back.data == data)
            #expect(back.attributes[.protocol] == .number(0x6874_7073))
            #expect(back.attributes[.authenticationType] == .string("dflt"))
        }
    }

    @Test("an item written before the attribute existed, with an empty secret, has an empty secret")
    func oldItem() throws {
        let record = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: [.service: "s"], data: Data())
        var attributes = Mapping.attributes(of: record, namespace: "ns", sequence: 1)
        attributes[Mapping.noDataKey] = nil
        #expect(try Mapping.record(from: attributes, data: Data()).0.data == Data())
    }

    @Test("a malformed marker, or a marker on a non-empty secret, is refused")
    func malformed() throws {
        let record = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: [.service: "s"], data: nil)
        var attributes = Mapping.attributes(of: record, namespace: "ns", sequence: 1)
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: attributes, data: Data("x".utf8)) }
        attributes[Mapping.noDataKey] = "yes"
        #expect(throws: Mapping.DecodeFailure.self) { try Mapping.record(from: attributes, data: Data()) }
    }
}
