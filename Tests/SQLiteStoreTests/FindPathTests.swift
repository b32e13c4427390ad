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

    @Test("an insert or a key-changing replace after a find of one key gets its own key's index: the searched key's index is reused only for that key (an add; an update to a new key), never for the record of another key written after it")
    func insertAfterFindOfAnotherKey() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        // Records as the core makes them (dates, the store's access group), taken out again.
        for account in ["a", "b", "c"] {
            try store.add(NewItem(.genericPassword, generic("svc", account), data: Data(account.utf8)))
        }
        let made = try store.exportRecords()
        try store.delete(ItemQuery(.genericPassword, [.service: "svc"]))
        func record(_ account: String) throws -> ItemRecord { try #require(made.first { $0[.account] == .string(account) }) }
        func probe(_ record: ItemRecord) -> RecordFilter {   // the core's uniqueness probe: class and key
            var filter = RecordFilter(uniqueKeys: [record.uniqueKey])
            filter.itemClass = record.itemClass
            return filter
        }
        let (a, b, c) = (try record("a"), try record("b"), try record("c"))
        try store.backend.withTransaction(writing: true) { (txn) throws(SecureStoreError) in
            #expect(try txn.find(probe(a)).isEmpty)
            try txn.insert(b)   // searched a, inserts b
            #expect(try txn.find(probe(c)).isEmpty)
            try txn.insert(c)   // searched c, inserts c: the add's order
            #expect(try txn.find(probe(b)).map(\.persistentRef) == [b.persistentRef])
        }
        #expect(try secret(store, "svc", "a") == nil)
        #expect(try secret(store, "svc", "b") == Data("b".utf8))
        #expect(try secret(store, "svc", "c") == Data("c".utf8))
        let duplicate = failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("svc", "b"), data: Data("again".utf8)))
        }
        #expect(duplicate?.code == .duplicateItem, "the unique index holds b's key, not a's")
        try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("a".utf8)))
        #expect(try store.exportRecords().count == 3)

        // A replace that changes an item's key, after a search of another new key and after a search of its own.
        let later = Date(timeIntervalSinceNow: 60)
        let stored = try store.exportRecords()
        func current(_ account: String) throws -> ItemRecord { try #require(stored.first { $0[.account] == .string(account) }) }
        let aMoved = try current("a").updated([.account: "a2"], modified: later, data: Data("a".utf8))
        let bMoved = try current("b").updated([.account: "b2"], modified: later, data: Data("b".utf8))
        try store.backend.withTransaction(writing: true) { (txn) throws(SecureStoreError) in
            #expect(try txn.find(probe(bMoved)).isEmpty)
            try txn.replace(aMoved)   // searched b2, writes a2
            #expect(try txn.find(probe(bMoved)).isEmpty)
            try txn.replace(bMoved)   // searched b2, writes b2: an update's order
        }
        #expect(try secret(store, "svc", "a2") == Data("a".utf8))
        #expect(try secret(store, "svc", "b2") == Data("b".utf8))
        #expect(try secret(store, "svc", "a") == nil)
        #expect(try secret(store, "svc", "b") == nil)
        let taken = failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("svc", "a2"), data: Data("again".utf8)))
        }
        #expect(taken?.code == .duplicateItem, "the unique index holds a2's key, not b2's")
    }

    @Test("statement parameters: an empty blob binds as an empty blob (not NULL), blobs of several sizes (over 1 KiB together) and numbers in one statement read back byte for byte, and a statement run again with other values sees only those")
    func parametersBindInPlace() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        FileManager.default.createFile(atPath: s.db, contents: nil, attributes: [.posixPermissions: 0o600])
        let db = try SQLiteConnection(path: s.db, busyTimeoutMilliseconds: 1000)
        defer { db.close() }
        let empty = try db.query("SELECT ?1, typeof(?1), length(?1)", [.blob([])])
        #expect(empty == [[.blob([]), .text("blob"), .integer(0)]])
        for round in 0..<3 {
            let big = (0..<(3000 + round)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) }
            let small = [UInt8](repeating: UInt8(round), count: 16 + round)
            let rows = try db.query("SELECT ?1, ?2, ?3, ?4, ?5", [.blob(big), .integer(Int64(round)), .null, .blob(small), .text("t\(round)")])
            #expect(rows == [[.blob(big), .integer(Int64(round)), .null, .blob(small), .text("t\(round)")]])
        }
        try db.exec("CREATE TABLE t(v BLOB)")
        try db.query("INSERT INTO t(v) VALUES (?1)", [.blob([1, 2, 3])])
        try db.query("INSERT INTO t(v) VALUES (?1)", [.blob([])])
        #expect(try db.query("SELECT v, typeof(v) FROM t ORDER BY rowid") == [[.blob([1, 2, 3]), .text("blob")], [.blob([]), .text("blob")]])
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
