import Testing
import Foundation
import SecureStoreCore
import SecureStoreInMemory

/// The typed API: nothing found is empty or nil, errors name Swift parameters, one rule for a missing account.
@Suite("Typed API")
struct TypedAPITests {
    @Test("items(matching:) is empty and item(matching:) nil when nothing matches; neither throws itemNotFound")
    func emptyAndNil() throws {
        let store = try InMemoryStore()
        let query = ItemQuery(.genericPassword, [.service: "none"], returning: .data)
        #expect(try store.items(matching: query).isEmpty)
        #expect(try store.item(matching: query) == nil)
        #expect(try store.items(matching: .item(PersistentRef.random())).isEmpty)
        #expect(try store.password(service: "none") == nil)
    }

    @Test("no limit gives every match in insertion order; item(matching:) gives the first whatever the limit")
    func limits() throws {
        let store = try InMemoryStore()
        for account in ["c", "a", "b"] {
            try store.add(NewItem(.genericPassword, [.service: "s", .account: .string(account)], data: Data(account.utf8)))
        }
        var query = ItemQuery(.genericPassword, [.service: "s"], returning: [.data, .attributes])
        #expect(try store.items(matching: query).compactMap(\.data) == ["c", "a", "b"].map { Data($0.utf8) })
        query.limit = .count(2)
        #expect(try store.items(matching: query).count == 2)
        query.limit = .all
        #expect(try store.item(matching: query)?.data == Data("c".utf8))
        #expect(try store.item(matching: query)?.attributes?[.account] == .string("c"))
    }

    @Test("add returns the new item holding what was asked for, and only that")
    func addReturns() throws {
        let store = try InMemoryStore()
        let plain = try store.add(NewItem(.genericPassword, [.service: "s"], data: Data("x".utf8)), returning: [])
        #expect(plain == Item(itemClass: .genericPassword))
        let full = try store.add(NewItem(.genericPassword, [.service: "t"], data: Data("y".utf8)),
                                 returning: [.data, .attributes, .persistentRef])
        #expect(full.data == Data("y".utf8))
        #expect(full.attributes?[.service] == .string("t"))
        let ref = try #require(full.persistentRef)
        #expect(try store.item(matching: .item(ref, returning: .data))?.data == Data("y".utf8))
    }

    @Test("errors through the typed API name its parameters, not Apple's dictionary keys")
    func swiftNamesInErrors() throws {
        let store = try InMemoryStore()
        try store.add(NewItem(.genericPassword, [.service: "s"]))
        func parameter(_ body: () throws(SecureStoreError) -> Void) -> String? {
            do throws(SecureStoreError) {
                try body()
                return "no error"
            } catch {
                return error.parameter
            }
        }
        #expect(parameter { () throws(SecureStoreError) in _ = try store.items(matching: ItemQuery(.genericPassword, limit: .count(0))) } == "limit")
        #expect(parameter { () throws(SecureStoreError) in _ = try store.delete(ItemQuery(.genericPassword, limit: .all)) } == "limit")
        #expect(parameter { () throws(SecureStoreError) in _ = try store.delete(ItemQuery(.genericPassword, caseInsensitive: true)) } == "caseInsensitive")
        #expect(parameter { () throws(SecureStoreError) in _ = try store.update(ItemQuery(.genericPassword, returning: .data), with: ItemChanges()) } == "returning")
        #expect(parameter { () throws(SecureStoreError) in _ = try store.items(matching: ItemQuery(nil, [.service: "s"])) } == "itemClass")
        var mixed = ItemQuery.item(.random())
        mixed.attributes[.service] = "s"
        #expect(parameter { () throws(SecureStoreError) in _ = try store.items(matching: mixed) } == "persistentRef")
        #expect(parameter { () throws(SecureStoreError) in
            _ = try store.items(matching: ItemQuery(.genericPassword, [.synchronizable: true], synchronizableAny: true))
        } == "synchronizableAny")
        let big = Data(count: StoreLimits.maxSecretBytes + 1)
        #expect(parameter { () throws(SecureStoreError) in try store.add(NewItem(.genericPassword, [.service: "big"], data: big)) } == "data")
        // Attributes are named by their code, as AttributeName identifies them.
        #expect(parameter { () throws(SecureStoreError) in _ = try store.items(matching: ItemQuery(.genericPassword, [.server: "h"])) } == "srvr")
    }

    @Test("a missing account is the empty account for password and setPassword alike")
    func missingAccount() throws {
        let store = try InMemoryStore()
        try store.setPassword(Data("other".utf8), service: "svc", account: "alice")
        #expect(try store.password(service: "svc") == nil, "an item with an account is not the one without")
        try store.setPassword(Data("none".utf8), service: "svc")
        #expect(try store.password(service: "svc") == Data("none".utf8))
        #expect(try store.password(service: "svc", account: "") == Data("none".utf8))
        #expect(try store.password(service: "svc", account: "alice") == Data("other".utf8))
        try store.setPassword(Data("again".utf8), service: "svc")
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: "svc"])).count == 2, "replaced, not added")
        #expect(try store.password(service: "svc") == Data("again".utf8))
    }

    @Test("read and write verbs run the backend's transactions; a failed write leaves nothing")
    func verbs() throws {
        let backend = InMemoryBackend()
        let store = try Keychain(backend: backend)
        try store.add(NewItem(.genericPassword, [.service: "kept"]))
        let count = try backend.read { (txn: inout InMemoryBackend.State) throws(SecureStoreError) in
            try txn.find(RecordFilter(itemClass: .genericPassword)).count
        }
        #expect(count == 1)
        #expect(throws: SecureStoreError.self) {
            try backend.write { (txn: inout InMemoryBackend.State) throws(SecureStoreError) in
                _ = try txn.removeAll(of: Set(ItemClass.allCases))
                throw SecureStoreError(.io, "simulated failure")
            }
        }
        #expect(try store.items(matching: ItemQuery(.genericPassword)).count == 1)
    }
}
