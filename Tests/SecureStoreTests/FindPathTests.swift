import Testing
import Foundation
import SecureStoreConformance
@testable import SecureStoreCore
import SecureStoreInMemory

/// A backend that runs every find inside `withTransaction`: the general path, with the protocol's default
/// `findRecords` (the memory backend's own finds under its lock without a transaction body).
final class TransactionOnlyBackend: StorageBackend {
    let inner: InMemoryBackend
    init(_ inner: InMemoryBackend = InMemoryBackend()) { self.inner = inner }
    var backendDescription: String { "memory through transactions" }
    static var guarantees: StorageGuarantees { InMemoryBackend.guarantees }
    func withTransaction<T>(writing: Bool, _ body: (inout InMemoryBackend.State) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        try inner.withTransaction(writing: writing, body)
    }
}

/// A memory backend that counts the finds copy queries hand to `findRecords`.
final class CountingBackend: StorageBackend, @unchecked Sendable {   // the counter is only read after the calls
    let inner = InMemoryBackend()
    var findRecordsCalls = 0
    var backendDescription: String { "counting memory" }
    static var guarantees: StorageGuarantees { InMemoryBackend.guarantees }
    func withTransaction<T>(writing: Bool, _ body: (inout InMemoryBackend.State) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        try inner.withTransaction(writing: writing, body)
    }
    func findRecords(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        findRecordsCalls += 1
        return try inner.findRecords(filter)
    }
}

/// Copy queries read through ``StorageBackend/findRecords(_:)``: a backend's own version must answer exactly
/// what a find in a reading transaction answers.
@Suite("Find paths")
struct FindPathTests {
    @Test("differential: the memory store (finds under its lock) against the same backend through transactions")
    func differential() throws {
        for seed: UInt64 in [1, 17, 4242, UInt64.random(in: 1...UInt64.max)] {
            try DifferentialTest(seed: seed, operations: 1500).run([
                (name: "memory", store: try InMemoryStore()),
                (name: "transactions", store: try Keychain(backend: TransactionOnlyBackend())),
            ])
        }
    }

    @Test("memory: findRecords and firstRecord equal read { find } on generated filters over one set of records")
    func memoryFindRecords() throws {
        let backend = InMemoryBackend()
        let store = try Keychain(backend: backend)
        var rng = SplitMix64(seed: 99)
        let services = ["s0", "s1", "s2", ""]
        for i in 0..<300 {
            let itemClass: ItemClass = Bool.random(using: &rng) ? .genericPassword : .internetPassword
            var attributes: [AttributeName: AttributeValue] = [
                .account: .string("a\(i)"),
                (itemClass == .genericPassword ? .service : .server): .string(services.randomElement(using: &rng) ?? ""),
            ]
            if Bool.random(using: &rng) { attributes[.label] = .string("l\(i % 7)") }
            try store.add(NewItem(itemClass, attributes, data: Data("secret \(i)".utf8)))
        }
        let all = try backend.read { (txn: inout InMemoryBackend.State) throws(SecureStoreError) in
            try txn.find(RecordFilter())
        }
        #expect(all.count == 300)
        // Some of the records to delete, so the slots hold gaps.
        try store.delete(ItemQuery(.genericPassword, [.label: .string("l3")]))
        var checked = 0
        for _ in 0..<400 {
            var filter = RecordFilter()
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: filter.persistentRef = all.randomElement(using: &rng)?.persistentRef
            case 1:
                filter.itemClass = all.randomElement(using: &rng)?.itemClass
                filter.uniqueKeys = (0..<Int.random(in: 0..<4, using: &rng)).compactMap { _ in all.randomElement(using: &rng)?.uniqueKey }
            case 2:
                filter.itemClass = .genericPassword
                filter.equalities[.service] = .string(services.randomElement(using: &rng) ?? "")
            case 3: filter.itemClass = Bool.random(using: &rng) ? .genericPassword : .internetPassword
            default: break
            }
            let fast = try backend.findRecords(filter)
            let general = try backend.read { (txn: inout InMemoryBackend.State) throws(SecureStoreError) in try txn.find(filter) }
            #expect(fast == general, "\(filter)")
            // The first accepted record: every record, none, and one that takes odd accounts only.
            let odd = { (r: ItemRecord) -> Bool in (r.attributes[.account]?.text?.last?.wholeNumberValue ?? 0) % 2 == 1 }
            for accepts in [{ (_: ItemRecord) in true }, { (_: ItemRecord) in false }, odd] {
                #expect(try backend.firstRecord(filter, accepting: accepts) == general.first(where: accepts), "\(filter)")
            }
            checked += fast.count
        }
        #expect(checked > 0)
    }

    @Test("copy queries read through findRecords once; update and delete find inside their writing transaction")
    func copiesUseFindRecords() throws {
        let backend = CountingBackend()
        let store = try Keychain(backend: backend)
        try store.add(NewItem(.genericPassword, [.service: .string("s"), .account: .string("a")], data: Data("x".utf8)))
        #expect(backend.findRecordsCalls == 0)
        let one = try store.item(matching: ItemQuery(.genericPassword, [.service: .string("s"), .account: .string("a")],
                                                     returning: .data))
        #expect(one?.data == Data("x".utf8))
        #expect(backend.findRecordsCalls == 1)
        let many = try store.items(matching: ItemQuery(.genericPassword, [.service: .string("s")], returning: .attributes))
        #expect(many.count == 1)
        #expect(backend.findRecordsCalls == 2)
        #expect(try store.item(matching: ItemQuery(.genericPassword, [.service: .string("nope")])) == nil)
        #expect(backend.findRecordsCalls == 3)
        try store.update(ItemQuery(.genericPassword, [.service: .string("s")]), with: ItemChanges(data: Data("y".utf8)))
        try store.delete(ItemQuery(.genericPassword, [.service: .string("s")]))
        #expect(backend.findRecordsCalls == 3)
    }

    @Test("item(matching:) ignores the query's limit, even one items(matching:) refuses")
    func firstIgnoresLimit() throws {
        let store = try InMemoryStore()
        for account in ["a", "b"] {
            try store.add(NewItem(.genericPassword, [.service: .string("s"), .account: .string(account)], data: Data(account.utf8)))
        }
        for limit: MatchLimit? in [nil, .one, .all, .count(2), .count(0), .count(-3)] {
            let query = ItemQuery(.genericPassword, [.service: .string("s")], limit: limit, returning: .data)
            #expect(try store.item(matching: query)?.data == Data("a".utf8), "\(String(describing: limit))")
        }
        #expect(throws: SecureStoreError.self) {
            try store.items(matching: ItemQuery(.genericPassword, [.service: .string("s")], limit: .count(0)))
        }
    }
}
