import Testing
import Foundation
import SecureStoreCore
import SecureStoreInMemory

/// The typed API takes attribute values as Swift values: variables, interpolations and literals, mixed in one
/// dictionary, on ItemQuery, NewItem and ItemChanges, and they mean what the explicit cases mean.
@Suite("Attribute literals and variables")
struct AttributeLiteralTests {
    @Test("String variables and literals mix in one dictionary and give text values")
    func variables() {
        let service = "com.example.app"
        let username = "alice"
        let query = ItemQuery(.genericPassword, [.service: service, .account: username])
        #expect(query.attributes == [.service: .string("com.example.app"), .account: .string("alice")])
        let item = NewItem(.genericPassword, [.service: "com.example.app", .account: username], data: Data("s".utf8))
        #expect(item.attributes == [.service: .string("com.example.app"), .account: .string("alice")])
        #expect(item.data == Data("s".utf8))
        let changes = ItemChanges([.label: username], data: Data("t".utf8))
        #expect(changes.attributes == [.label: .string("alice")])
        #expect(changes.data == Data("t".utf8))
    }

    @Test("interpolations give text values, alone or beside the explicit cases")
    func interpolations() {
        let id = 42
        #expect(ItemQuery(.genericPassword, [.account: "user-\(id)"]).attributes == [.account: .string("user-42")])
        #expect(NewItem(.internetPassword, [.server: "host\(id).example", .port: 443]).attributes
                == [.server: .string("host42.example"), .port: .number(443)])
        #expect(ItemChanges([.comment: "rotated by \(id)"]).attributes == [.comment: .string("rotated by 42")])
        // Beside an explicit case the dictionary holds AttributeValue, and the interpolation is one too.
        let htps: Int64 = 0x6874_7073
        #expect(ItemQuery(.internetPassword, [.protocol: .number(htps), .account: "user-\(id)"]).attributes
                == [.protocol: .number(htps), .account: .string("user-42")])
    }

    @Test("every convertible type in one dictionary: String, Data, Date, Bool, Int, Int32, Int64, AttributeValue")
    func mixed() {
        let account = "bob", blob = Data([1, 2, 3]), when = Date(timeIntervalSinceReferenceDate: 1_000)
        let synced = true, port = 8443, creator: Int32 = 7, type: Int64 = 9
        let label: AttributeValue = .string("explicit")
        let item = NewItem(.internetPassword, [.account: account, .generic: blob, .creationDate: when, .synchronizable: synced,
                                               .port: port, .creator: creator, .type: type, .label: label, .server: "literal"])
        #expect(item.attributes == [.account: .string("bob"), .generic: .data(blob), .creationDate: .date(when),
                                    .synchronizable: .bool(true), .port: .number(8443), .creator: .number(7),
                                    .type: .number(9), .label: .string("explicit"), .server: .string("literal")])
        let query = ItemQuery(.internetPassword, [.account: account, .synchronizable: synced], limit: .count(1),
                              returning: .attributes)
        #expect(query.attributes == [.account: .string("bob"), .synchronizable: .bool(true)])
        #expect(query.limit == .count(1) && query.returning == .attributes)
        #expect(ItemChanges([.isInvisible: synced, .port: port, .account: account]).attributes
                == [.isInvisible: .bool(true), .port: .number(8443), .account: .string("bob")])
    }

    @Test("an existing [AttributeName: AttributeValue] dictionary and the empty literal still work as before")
    func existingForms() {
        let attributes: [AttributeName: AttributeValue] = [.service: "s", .account: .string("a")]
        #expect(ItemQuery(.genericPassword, attributes).attributes == attributes)
        #expect(NewItem(.genericPassword, attributes).attributes == attributes)
        #expect(ItemChanges(attributes).attributes == attributes)
        #expect(ItemQuery(.genericPassword, [:]).attributes.isEmpty)
        #expect(ItemQuery(.genericPassword).attributes.isEmpty)
        #expect(ItemChanges(data: Data()).attributes.isEmpty)
    }

    @Test("a store round trip with variables: add, find by interpolation, update, read back")
    func roundTrip() throws {
        let store = try InMemoryStore()
        let service = "com.example.mail"
        for id in 1...3 {
            try store.add(NewItem(.genericPassword, [.service: service, .account: "user-\(id)"], data: Data("p\(id)".utf8)))
        }
        let id = 2
        let found = try store.item(matching: ItemQuery(.genericPassword, [.service: service, .account: "user-\(id)"],
                                                       returning: [.data, .attributes]))
        #expect(found?.data == Data("p2".utf8))
        #expect(found?.attributes?[.account] == .string("user-2"))
        let note = "rotated"
        #expect(try store.update(ItemQuery(.genericPassword, [.service: service, .account: "user-\(id)"]),
                                 with: ItemChanges([.comment: note], data: Data("new".utf8))) == 1)
        let after = try store.item(matching: ItemQuery(.genericPassword, [.comment: note], returning: [.data, .attributes]))
        #expect(after?.data == Data("new".utf8))
        #expect(after?.attributes?[.account] == .string("user-2"))
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: service])).count == 3)
    }

    @Test("a variable of the wrong kind is still refused, naming the attribute")
    func kindChecked() throws {
        let store = try InMemoryStore()
        let notANumber = "eighty"
        do {
            try store.add(NewItem(.internetPassword, [.server: "h", .port: notANumber]))
            Issue.record("a port that is not a number was stored")
        } catch {
            #expect(error.code == .param)
            #expect(error.parameter == "port")
        }
        #expect(try store.items(matching: ItemQuery(.internetPassword, [.server: "h"])).isEmpty)
    }
}
