import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite
import CSQLite

@Suite("SQLite committed schema 3 and 4 stores")
struct FixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Copies the committed `NAME.db` and `NAME.key` into the scratch folder (a test never writes into the
    /// repository), private as a store's files must be; their paths there.
    static func copyFixture(_ name: String, into s: Scratch) throws -> (db: String, key: String) {
        let db = s.path("\(name).db"), key = s.path("\(name).key")
        for (from, to) in [("\(name).db", db), ("\(name).key", key)] {
            try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent(from).path, toPath: to)
            chmod(to, 0o600)
        }
        return (db, key)
    }

    @Test("the committed schema 3 store (every class, one item without a secret) reads as written, is upgraded to the current schema by its first write, and stays tamper-evident")
    func schema3Fixture() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let (db, key) = try Self.copyFixture("v3", into: s)
        func expectContents(_ store: SQLiteStore, _ stage: String) throws {
            try Self.expectContents(store, stage, alice: Data("secret-alice".utf8))
        }
        try expectContents(try SQLiteStore(path: db, key: .keyFile(key), readOnly: true), "read-only")
        // Data lookups by key on format 3 rows (whose secrets are bound to their reference only) read whole.
        #expect(try secret(try SQLiteStore(path: db, key: .keyFile(key), readOnly: true), "fixture.service", "alice")
                == Data("secret-alice".utf8))
        #expect(RawDB(db).integer("PRAGMA user_version") == 3, "reading writes nothing")
        do {
            let store = try SQLiteStore(path: db, key: .keyFile(key))
            try expectContents(store, "opened for writing")
            #expect(RawDB(db).integer("PRAGMA user_version") == 3, "opening writes nothing")
            // A write the core refuses rolls the upgrade back with it.
            #expect(failure { () throws(SecureStoreError) in
                try store.add(NewItem(.genericPassword, generic("fixture.service", "alice"), data: Data()))
            }?.code == .duplicateItem)
            #expect(RawDB(db).integer("PRAGMA user_version") == 3)
            #expect(!RawDB(db).text("SELECT group_concat(name, ',') FROM pragma_table_info('items')").contains("mdat"))
            try store.update(ItemQuery(.genericPassword, generic("fixture.service", "alice")),
                             with: ItemChanges([.comment: "written"]))
            try store.add(NewItem(.genericPassword, generic("fixture.service", "dave"), data: Data("d".utf8)))
            try expectContents(store, "after writes")
        }
        #expect(RawDB(db).integer("PRAGMA user_version") == SQLiteBackend.schemaVersion)
        #expect(RawDB(db).text("SELECT group_concat(name, ',') FROM pragma_table_info('items')")
                == "id,cls,ref,ukey,svc,acct,blob,secret,mdat")
        #expect(Self.indexes(db) == "items_ref:1,items_svc_acct:0,items_ukey:1")
        // Every row re-sealed in format 4: a secret part each (also for bob, who has no secret), no date apart.
        // (the room of a date in each: no date apart.)
        #expect(RawDB(db).integer("SELECT count(secret) FROM items") == 8 && RawDB(db).integer("SELECT count(mdat) FROM items") == 8)
        #expect(RawDB(db).integer("SELECT count(*) FROM items WHERE \(sealedDate)") == 0)
        try expectContents(try SQLiteStore(path: db, key: .keyFile(key), readOnly: true), "reopened")
        try expectTamperEvident(db, key: Data(1...32), "schema 3 fixture")
    }

    /// The indexes of the items table, `name:unique`, by name.
    static func indexes(_ db: String) -> String {
        RawDB(db).text("SELECT group_concat(name || ':' || \"unique\", ',') FROM (SELECT * FROM pragma_index_list('items') ORDER BY name)")
    }

    /// The items of the committed fixtures (FIXTURES README), in insertion order, alice's secret being `alice`.
    static func expectContents(_ store: SQLiteStore, _ stage: String, alice: Data) throws {
        let records = try store.exportRecords()
        let expected: [(ItemClass, String, Data?)] = [
            (.genericPassword, "alice", alice), (.genericPassword, "empty", Data()),
            (.genericPassword, "bob", nil), (.internetPassword, "carol", Data("pw-carol".utf8)),
            (.certificate, "cert", Data([0x30, 0x82, 0x01, 0x0A])), (.key, "k", Data(repeating: 0xA5, count: 32)),
            (.identity, "identity", Data("identity-secret".utf8)),
        ]
        #expect(records.count >= expected.count, "\(stage)")
        for ((cls, name, data), record) in zip(expected, records) {
            #expect(record.itemClass == cls, "\(stage): \(name)")
            #expect((record.attributes[.account] ?? record.attributes[.label])?.text == name, "\(stage): order")
            #expect(record.data == data, "\(stage): the secret of \(name)")
        }
        let found = try store.item(matching: ItemQuery(.genericPassword, generic("fixture.service", "alice"),
                                                      returning: [.data, .attributes]))
        #expect(found?.attributes?[.label] == "Alice's" && found?.data == alice, "\(stage)")
        #expect(try secret(store, "fixture.service", "alice") == alice, "\(stage): the data lookup by key")
        #expect(try secret(store, "fixture.none", "bob") == nil, "\(stage): no secret stays none")
        #expect(try secret(store, "fixture.service", "empty") == Data(), "\(stage): an empty secret stays empty")
        let carol = try store.item(matching: ItemQuery(.internetPassword, [.server: "example.com", .account: "carol"],
                                                      returning: [.data, .attributes]))
        #expect(carol?.attributes?[.port] == .number(8443), "\(stage)")
    }

    @Test("the committed schema 4 store (every class, one item without a secret, one changed secret whose date is sealed apart) reads as written (also with its four indexes), is upgraded to schema 5 by its first write (one index on service and account; the rows as they are), and stays tamper-evident")
    func schema4Fixture() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let (db, key) = try Self.copyFixture("v4", into: s)
        // One date apart (8 bytes, sealed), alice's, after her change of secret.
        let raw = RawDB(db)
        #expect(raw.integer("PRAGMA user_version") == 4)
        Self.expectSecretParts(raw)
        #expect(raw.text("SELECT group_concat(coalesce(length(mdat), 0), ',') FROM (SELECT mdat FROM items ORDER BY id)")
                == "48,0,0,0,0,0,0")
        #expect(Self.indexes(db) == "items_acct:0,items_ref:1,items_svc:0,items_ukey:1")
        let rowsBefore = raw.rows("SELECT id, cls, ref, ukey, svc, acct, blob, secret, mdat FROM items ORDER BY id")
        let alice = Data("secret-alice-2".utf8)
        let reader = try SQLiteStore(path: db, key: .keyFile(key), readOnly: true)
        try Self.expectContents(reader, "read-only", alice: alice)
        // The date sealed apart is alice's modification date, later than her creation.
        let item = try reader.item(matching: ItemQuery(.genericPassword, generic("fixture.service", "alice"),
                                                       returning: .attributes))
        func date(_ value: AttributeValue?) -> Date? { if case .date(let d)? = value { d } else { nil } }
        #expect((date(item?.attributes?[.modificationDate]) ?? .distantPast) > (date(item?.attributes?[.creationDate]) ?? .distantFuture))
        do {
            let store = try SQLiteStore(path: db, key: .keyFile(key))
            // A write the core refuses rolls the upgrade back with it.
            #expect(failure { () throws(SecureStoreError) in
                try store.add(NewItem(.genericPassword, generic("fixture.service", "alice"), data: Data()))
            }?.code == .duplicateItem)
            #expect(RawDB(db).integer("PRAGMA user_version") == 4)
            #expect(Self.indexes(db) == "items_acct:0,items_ref:1,items_svc:0,items_ukey:1")
            // The first write upgrades; the rows are those of schema 4, byte for byte.
            try store.add(NewItem(.genericPassword, generic("fixture.service", "dave"), data: Data("d".utf8)))
            #expect(RawDB(db).integer("PRAGMA user_version") == 5)
            #expect(Self.indexes(db) == "items_ref:1,items_svc_acct:0,items_ukey:1")
            #expect(Array(RawDB(db).rows("SELECT id, cls, ref, ukey, svc, acct, blob, secret, mdat FROM items ORDER BY id")
                .prefix(rowsBefore.count)) == rowsBefore)
            try Self.expectContents(store, "upgraded", alice: alice)
            try store.update(ItemQuery(.genericPassword, generic("fixture.service", "alice")),
                             with: ItemChanges([.comment: "written"]))
            try Self.expectContents(store, "after writes", alice: alice)
        }
        #expect(RawDB(db).integer("PRAGMA user_version") == 5)
        #expect(RawDB(db).integer("SELECT count(*) FROM items WHERE \(sealedDate)") == 0,
                "the attribute change sealed alice's record again")
        #expect(RawDB(db).text("SELECT group_concat(coalesce(length(mdat), 0), ',') FROM (SELECT mdat FROM items ORDER BY id)")
                == "48,0,0,0,0,0,0,48", "alice's row and dave's keep the room of a date; the rows of schema 4 as they were")
        try expectTamperEvident(db, key: Data(1...32), "schema 4 fixture")
    }
}

extension FixtureTests {
    /// The bytes FORMAT.md gives for the v4 and v5 fixtures' items: a secret part of secret ‖ ref (16) ‖ u32
    /// length ‖ flag, sealed (+40), for every item.
    static func expectSecretParts(_ raw: RawDB) {
        #expect(raw.text("SELECT group_concat(length(secret), ',') FROM (SELECT secret FROM items ORDER BY id)")
                == "75,61,61,69,65,93,76")
    }

    @Test("the committed schema 5 store (the items of the schema 4 one) reads as written, has the three indexes FORMAT.md gives, takes writes as schema 5, and stays tamper-evident")
    func schema5Fixture() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let (db, key) = try Self.copyFixture("v5", into: s)
        let raw = RawDB(db)
        #expect(raw.integer("PRAGMA user_version") == SQLiteBackend.schemaVersion)
        #expect(Self.indexes(db) == "items_ref:1,items_svc_acct:0,items_ukey:1")
        Self.expectSecretParts(raw)
        // Every row keeps the room of a sealed date: alice's holds her date, the others none (all zero).
        #expect(raw.text("SELECT group_concat(length(mdat), ',') FROM (SELECT mdat FROM items ORDER BY id)")
                == "48,48,48,48,48,48,48")
        #expect(raw.text("SELECT group_concat(\(sealedDate), ',') FROM (SELECT mdat FROM items ORDER BY id)") == "1,0,0,0,0,0,0")
        let alice = Data("secret-alice-2".utf8)
        try Self.expectContents(try SQLiteStore(path: db, key: .keyFile(key), readOnly: true), "read-only", alice: alice)
        do {
            let store = try SQLiteStore(path: db, key: .keyFile(key))
            try store.update(ItemQuery(.genericPassword, generic("fixture.service", "alice")),
                             with: ItemChanges([.comment: "written"]))
            try store.add(NewItem(.genericPassword, generic("fixture.service", "dave"), data: Data("d".utf8)))
            try Self.expectContents(store, "after writes", alice: alice)
        }
        #expect(RawDB(db).integer("PRAGMA user_version") == SQLiteBackend.schemaVersion)
        #expect(Self.indexes(db) == "items_ref:1,items_svc_acct:0,items_ukey:1")
        try expectTamperEvident(db, key: Data(1...32), "schema 5 fixture")
    }
}

/// The SQL condition of a row whose `mdat` is a date sealed apart (not NULL, not the room of one kept by schema 5).
let sealedDate = "mdat IS NOT NULL AND mdat != zeroblob(48)"

/// Tampering with copies of the (closed) store at `path`: a flipped byte in one item's sealed secret, record
/// or modification date, or one of them moved to another row, each break only that item (`decode` on a read
/// of the whole item); every other item still reads with its secret.
func expectTamperEvident(_ path: String, key: Data, _ stage: String) throws {
    let originals = try SQLiteStore(path: path, key: .raw(key), readOnly: true).exportRecords()
    let ids = RawDB(path).rows("SELECT id FROM items WHERE secret IS NOT NULL ORDER BY id").count
    try #require(ids >= 2 && originals.count >= 2, "\(stage): needs two items with a secret")
    let hasDates = RawDB(path).text("SELECT group_concat(name, ',') FROM pragma_table_info('items')").hasSuffix(",mdat")
        && RawDB(path).integer("SELECT count(*) FROM items WHERE \(sealedDate)") >= 2
    for kind in ["flip a secret byte", "move a secret", "flip a record byte", "move a record"]
        + (hasDates ? ["flip a date byte", "move a date"] : []) {
        let copy = path + ".tampered"
        for suffix in ["", "-wal", "-shm"] { unlink(copy + suffix) }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        if FileManager.default.fileExists(atPath: path + "-wal") {   // a store still open: its log too
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        }
        defer { for suffix in ["", "-wal", "-shm"] { unlink(copy + suffix) } }
        let raw = RawDB(copy)
        // The victim is the first item with the part, the donor the second.
        let column = kind.contains("secret") ? "secret" : kind.contains("date") ? "mdat" : "blob"
        let has = column == "mdat" ? sealedDate : "\(column) IS NOT NULL"
        let victim = raw.integer("SELECT id FROM items WHERE \(has) ORDER BY id LIMIT 1")
        let donor = raw.integer("SELECT id FROM items WHERE \(has) ORDER BY id LIMIT 1 OFFSET 1")
        var value = try #require(raw.rows("SELECT \(column) FROM items WHERE id = \(kind.hasPrefix("move") ? donor : victim)").first?.first)
        if kind.hasPrefix("flip") { value[value.count - 5] ^= 0x40 }
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(raw.db, "UPDATE items SET \(column) = ? WHERE id = ?", -1, &stmt, nil)
        _ = value.withUnsafeBytes { sqlite3_bind_blob(stmt, 1, $0.baseAddress, Int32($0.count), csqlite_transient()) }
        sqlite3_bind_int64(stmt, 2, victim)
        #expect(sqlite3_step(stmt) == SQLITE_DONE)
        sqlite3_finalize(stmt)
        let store = try SQLiteStore(path: copy, key: .raw(key))
        // The rows in id order are the records in insertion order: the victim is the record at its position.
        let position = Int(raw.integer("SELECT count(*) FROM items WHERE id < \(victim)"))
        for (index, record) in originals.enumerated() {
            let outcome = Result { () throws(SecureStoreError) in
                try store.item(matching: .item(record.persistentRef, returning: .data))
            }
            if index == position {
                if case .failure(let error) = outcome {
                    #expect(error.code == .decode, "\(stage), \(kind): \(error)")
                } else {
                    Issue.record("\(stage), \(kind): the tampered item still opened")
                }
            } else {
                #expect((try? outcome.get())??.data == record.data, "\(stage), \(kind): item \(index) intact")
            }
        }
    }
}

@Suite("SQLite secret column")
struct SecretColumnTests {
    @Test("a change of secret alone keeps the row's size (every row keeps the room of a sealed date), so SQLite rewrites it in place: a 4 KiB secret's change writes two pages to the log, its row's page and overflow page")
    func secretChangeInPlace() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        for i in 0..<20 {
            try store.add(NewItem(.genericPassword, generic("svc", "a\(i)"), data: Data(repeating: UInt8(i), count: 4096)))
        }
        func size(_ id: Int) -> Int64 {
            RawDB(s.db).integer("SELECT length(blob) + length(secret) + length(mdat) FROM items WHERE id = \(id)")
        }
        let before = size(5)
        #expect(RawDB(s.db).integer("SELECT count(*) FROM items WHERE mdat = zeroblob(48)") == 20, "no date apart, its room kept")
        for round in 0..<3 {
            #expect(RawDB(s.db).integer("PRAGMA wal_checkpoint(TRUNCATE)") == 0, "round \(round): the log emptied")
            let wal = s.db + "-wal"
            let empty = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
            #expect(empty == 0)
            try store.update(ItemQuery(.genericPassword, generic("svc", "a4")),
                             with: ItemChanges(data: Data(repeating: UInt8(100 + round), count: 4096)))
            let written = (try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
            let frames = (written - 32) / (24 + 4096)   // WAL header, then a header and a page per frame
            #expect(frames == 2, "round \(round): \(frames) pages written")
            #expect(size(5) == before, "round \(round): the row kept its size")
        }
        #expect(try secret(store, "svc", "a4") == Data(repeating: 102, count: 4096))
        #expect(RawDB(s.db).integer("SELECT count(*) FROM items WHERE \(sealedDate)") == 1, "the changed item's date apart")
    }

    @Test("an update writes only the sealed parts that changed: attributes the record (with its date), a secret the secret part and the date apart")
    func updatesWriteOnlyChangedParts() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        let store = try SQLiteStore(path: s.db, key: .raw(key))
        try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("one".utf8)))
        try store.add(NewItem(.genericPassword, generic("svc", "none")))
        func column(_ name: String, _ id: Int) -> Data? { RawDB(s.db).rows("SELECT \(name) FROM items WHERE id = \(id)").first?.first }
        func parts(_ id: Int) -> (blob: Data?, secret: Data?, mdat: Data?) {
            let dateApart = RawDB(s.db).integer("SELECT \(sealedDate) FROM items WHERE id = \(id)") == 1
            return (column("blob", id), column("secret", id), dateApart ? column("mdat", id) : nil)
        }
        var before = parts(1)
        #expect(before.blob != nil && before.secret != nil && before.mdat == nil, "a new row: record and secret part")
        // An attribute change: the record (with its new date inside); the secret part stays.
        try store.update(ItemQuery(.genericPassword, generic("svc", "a")), with: ItemChanges([.comment: "c"]))
        var now = parts(1)
        #expect(now.secret == before.secret, "the sealed secret is untouched")
        #expect(now.blob != before.blob && now.mdat == nil)
        // A change of key: the secret part is bound to the unique key, so it is sealed again (same secret).
        before = now
        try store.update(ItemQuery(.genericPassword, generic("svc", "a")), with: ItemChanges([.account: "b"]))
        now = parts(1)
        #expect(now.secret != before.secret && now.blob != before.blob && now.mdat == nil)
        #expect(try secret(store, "svc", "b") == Data("one".utf8))
        // A secret given (the same bytes here): an update that sets a secret never reads the old one, so the
        // secret part is sealed again, with the new date apart; the record stays as it is stored.
        before = now
        try store.update(ItemQuery(.genericPassword, generic("svc", "b")), with: ItemChanges(data: Data("one".utf8)))
        now = parts(1)
        #expect(now.secret != before.secret && now.blob == before.blob && now.mdat != nil)
        #expect(try secret(store, "svc", "b") == Data("one".utf8))
        // A new secret: the secret part and the date; the record stays as it is stored.
        before = now
        try store.update(ItemQuery(.genericPassword, generic("svc", "b")), with: ItemChanges(data: Data("two".utf8)))
        now = parts(1)
        #expect(now.secret != before.secret && now.blob == before.blob && now.mdat != nil && now.mdat != before.mdat)
        #expect(try secret(store, "svc", "b") == Data("two".utf8))
        func date(_ value: AttributeValue?) -> Date? { if case .date(let d)? = value { d } else { nil } }
        var item = try store.item(matching: ItemQuery(.genericPassword, generic("svc", "b"), returning: [.attributes, .data]))
        #expect(item?.attributes?[.comment] == "c" && item?.data == Data("two".utf8))
        // Every update moved the modification date forward; the one sealed apart is the item's.
        let rotated = date(item?.attributes?[.modificationDate])
        #expect((rotated ?? .distantPast) > (date(item?.attributes?[.creationDate]) ?? .distantFuture))
        // An attribute change after it: the record again, with the date inside, and no date apart.
        before = now
        try store.update(ItemQuery(.genericPassword, generic("svc", "b")), with: ItemChanges([.label: "L"]))
        now = parts(1)
        #expect(now.secret == before.secret && now.blob != before.blob && now.mdat == nil)
        item = try store.item(matching: ItemQuery(.genericPassword, generic("svc", "b"), returning: [.attributes, .data]))
        #expect(item?.attributes?[.label] == "L" && item?.data == Data("two".utf8))
        #expect((date(item?.attributes?[.modificationDate]) ?? .distantPast) > (rotated ?? .distantFuture))
        // An item without a secret has a secret part that says so, keeps none through an attribute update,
        // and gets one when given.
        #expect(column("secret", 2) != nil)
        try store.update(ItemQuery(.genericPassword, generic("svc", "none")), with: ItemChanges([.comment: "c"]))
        #expect(try secret(store, "svc", "none") == nil)
        try store.update(ItemQuery(.genericPassword, generic("svc", "none")), with: ItemChanges(data: Data()))
        #expect(try secret(store, "svc", "none") == Data())
        try store.update(ItemQuery(.genericPassword, generic("svc", "b")), with: ItemChanges(data: Data("three".utf8)))
        #expect(RawDB(s.db).integer("SELECT count(*) FROM items WHERE \(sealedDate)") == 2, "two dates apart, for the tampering below")
        try expectTamperEvident(s.db, key: key, "after updates")
    }
}

@Suite("SQLite backend boundaries")
struct BackendBoundaryTests {
    @Test("an insert the UNIQUE indexes refuse (the core's check bypassed) is duplicateItem, as the core says it, and writes nothing")
    func uniqueViolationInsideInsert() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("1".utf8)))
        let coreSays = failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("2".utf8)))
        }
        #expect(coreSays?.code == .duplicateItem)
        let existing = try #require(try store.exportRecords().first)
        // The same uniqueness key under a new reference, and the same reference under a new key, straight to
        // the backend (no core check in front of it).
        var keyTwin = existing.attributes
        keyTwin[.label] = "twin"
        var refTwin = existing.attributes
        refTwin[.account] = "other"
        for record in [ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: keyTwin, data: nil),
                       ItemRecord(persistentRef: existing.persistentRef, itemClass: .genericPassword, attributes: refTwin,
                                  data: nil)] {
            let backendSays = failure { () throws(SecureStoreError) in
                try store.backend.withTransaction(writing: true) { (txn) throws(SecureStoreError) in
                    try txn.insert(record)
                }
            }
            #expect(backendSays?.code == .duplicateItem)
        }
        #expect(try store.exportRecords() == [existing])
    }

    @Test("several replaces of one found item in one transaction, then a delete: by its row id with its own indexes while its indexes stay (a new secret, then a label), written whole once its account changes (and again after); every step reads back, the other rows are untouched")
    func replacesInOneTransaction() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        for name in ["a", "b", "c", "d"] { try store.add(NewItem(.genericPassword, generic("svc", name), data: Data(name.utf8))) }
        let others = try store.exportRecords().filter { $0[.account] == "a" || $0[.account] == "c" }
        func one(_ txn: inout SQLiteBackend.Transaction, _ account: String) throws(SecureStoreError) -> ItemRecord? {
            try txn.find(RecordFilter(itemClass: .genericPassword, equalities: [.service: "svc", .account: .string(account)]))
                .first { $0[.account] == .string(account) }
        }
        let later = Date(timeIntervalSinceNow: 60)
        try store.backend.withTransaction(writing: true) { (txn) throws(SecureStoreError) in
            guard let b = try one(&txn, "b") else { throw .notFound() }
            let secret = b.updated([:], modified: later, data: Data("b1".utf8))
            try txn.replace(secret)
            let label = secret.updated([.label: "L"], modified: later.addingTimeInterval(1), data: secret.data)
            try txn.replace(label)
            #expect(try one(&txn, "b") == label, "the row written by id twice reads back as the second record")
            let moved = label.updated([.account: "b2"], modified: later.addingTimeInterval(2), data: label.data)
            try txn.replace(moved)
            let again = moved.updated([:], modified: later.addingTimeInterval(3), data: Data("b3".utf8))
            try txn.replace(again)
            #expect(try one(&txn, "b") == nil)
            #expect(try one(&txn, "b2") == again)
            guard let d = try one(&txn, "d") else { throw .notFound() }
            try txn.remove([d.persistentRef])
            #expect(try one(&txn, "d") == nil)
        }
        #expect(try secret(store, "svc", "b2") == Data("b3".utf8))
        let b2 = try #require(try store.item(matching: ItemQuery(.genericPassword, generic("svc", "b2"), returning: .attributes)))
        #expect(b2.attributes?[.label] == "L")
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("svc", "b"))) == nil)
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("svc", "d"))) == nil)
        #expect(try store.exportRecords().filter { $0[.account] == "a" || $0[.account] == "c" } == others)
    }

    @Test("a row whose columns have the wrong types (text for a blob, a number for the secret) is decode, never a crash or a wrong item; a data lookup by key, which does not read the record, still answers from the intact secret part")
    func wrongColumnTypes() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        for name in ["a", "b", "c"] { try store.add(NewItem(.genericPassword, generic("svc", name), data: Data(name.utf8))) }
        let raw = RawDB(s.db)
        #expect(raw.exec("UPDATE items SET blob = 'text' WHERE id = 1") == SQLITE_OK)
        #expect(raw.exec("UPDATE items SET secret = 42 WHERE id = 2") == SQLITE_OK)
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "b") }?.code == .decode)
        #expect(try secret(store, "svc", "a") == Data("a".utf8))   // its secret part is intact and bound to its row
        for name in ["a", "b"] {
            #expect(failure { () throws(SecureStoreError) in
                _ = try store.item(matching: ItemQuery(.genericPassword, generic("svc", name), returning: [.attributes, .data]))
            }?.code == .decode, "\(name)")
        }
        #expect(try secret(store, "svc", "c") == Data("c".utf8))
    }
}
