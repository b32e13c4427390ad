import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite

/// A copy query's find runs without `BEGIN`/`COMMIT` when it is one statement (``SQLiteBackend/findRecords(_:)``):
/// it must answer what the same find in a reading transaction answers, and leave no snapshot open.
@Suite("SQLite find path")
struct SQLiteFindPathTests {
    @Test("findRecords equals read { find } on generated filters, including one of more than 500 keys (several statements)")
    func sameAnswers() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        let backend = store.backend
        var rng = Seeded(state: 7)
        let services = ["s0", "s1", "s2", ""]
        for i in 0..<120 {
            let itemClass: ItemClass = Bool.random(using: &rng) ? .genericPassword : .internetPassword
            let attributes: [AttributeName: AttributeValue] = [
                .account: .string("a\(i)"),
                (itemClass == .genericPassword ? .service : .server): .string(services.randomElement(using: &rng) ?? ""),
            ]
            try store.add(NewItem(itemClass, attributes, data: i % 5 == 0 ? nil : Data("secret \(i)".utf8)))
        }
        let all = try backend.read { (txn: inout SQLiteBackend.Transaction) throws(SecureStoreError) in
            try txn.find(RecordFilter())
        }
        #expect(all.count == 120)
        var filters: [RecordFilter] = []
        for _ in 0..<80 {
            var filter = RecordFilter()
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: filter.persistentRef = all.randomElement(using: &rng)?.persistentRef
            case 1: filter.persistentRef = .random()   // none: an empty answer checks the key epoch
            case 2:
                filter.itemClass = all.randomElement(using: &rng)?.itemClass
                filter.uniqueKeys = (0..<Int.random(in: 1..<4, using: &rng)).compactMap { _ in all.randomElement(using: &rng)?.uniqueKey }
            case 3:
                filter.itemClass = .genericPassword
                filter.equalities[.service] = .string(services.randomElement(using: &rng) ?? "")
            case 4: filter.itemClass = Bool.random(using: &rng) ? .genericPassword : .internetPassword
            default: break
            }
            filters.append(filter)
        }
        // More keys than one statement takes: every stored key and 600 that match nothing.
        let missing = (0..<600).map { i in
            ItemRecord(persistentRef: .random(), itemClass: .genericPassword,
                       attributes: [.account: .string("missing \(i)")], data: nil).uniqueKey
        }
        filters.append(RecordFilter(uniqueKeys: all.map(\.uniqueKey) + missing))
        var seen = 0
        for filter in filters {
            let fast = try backend.findRecords(filter)
            let general = try backend.read { (txn: inout SQLiteBackend.Transaction) throws(SecureStoreError) in
                try txn.find(filter)
            }
            #expect(fast == general, "\(filter)")
            seen += fast.count
        }
        #expect(seen > 120)
        #expect(try backend.findRecords(filters[filters.count - 1]).count == 120)
    }

    @Test("a lookup outside a transaction leaves none open: the next one sees another connection's writes")
    func noSnapshotKept() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        let reader = try SQLiteStore(path: s.db, key: .raw(key))
        let writer = try SQLiteStore(path: s.db, key: .raw(key))
        for i in 0..<20 {
            #expect(try secret(reader, "svc", "a\(i)") == nil)
            try writer.add(NewItem(.genericPassword, generic("svc", "a\(i)"), data: Data("v\(i)".utf8)))
            #expect(try secret(reader, "svc", "a\(i)") == Data("v\(i)".utf8))
            #expect(try reader.items(matching: ItemQuery(.genericPassword, [.service: .string("svc")])).count == i + 1)
            try writer.update(ItemQuery(.genericPassword, generic("svc", "a\(i)")), with: ItemChanges(data: Data("w\(i)".utf8)))
            #expect(try secret(reader, "svc", "a\(i)") == Data("w\(i)".utf8))
        }
        // The reader's own writes still run in transactions after its autocommit reads.
        try reader.delete(ItemQuery(.genericPassword, [.service: .string("svc")]))
        #expect(try writer.items(matching: ItemQuery(.genericPassword, [.service: .string("svc")])).isEmpty)
    }
}

/// A seeded generator (SplitMix64), so a failing filter replays.
private struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
