import Testing
import Foundation
import Synchronization
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite
import SecureStoreCrypto
import CSQLite
import SecureStorePaths

@Suite("SQLite store")
struct SQLiteStoreTests {
    @Test("items survive closing and reopening, with the exact value cases")
    func reopen() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789_012_345)
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(key))
            let extra: [AttributeName: AttributeValue] = [.generic: .data(Data([0, 1, 2])), .label: .string("L"),
                                                         .creator: .number(-7), .isInvisible: .bool(true)]
            try store.add(NewItem(.genericPassword, generic("svc", "acct", extra), data: Data("pw".utf8)))
            _ = date
        }
        let store = try SQLiteStore(path: s.db, key: .raw(key))
        let item = try store.items(matching: ItemQuery(.genericPassword, generic("svc", "acct"), returning: [.data, .attributes]))
            .first
        #expect(item?.data == Data("pw".utf8))
        #expect(item?.attributes?[.generic] == .data(Data([0, 1, 2])))
        #expect(item?.attributes?[.label] == .string("L"))
        #expect(item?.attributes?[.creator] == .number(-7))
        #expect(item?.attributes?[.isInvisible] == .bool(true))
    }

    @Test("references are drawn: a file other processes share gets no numbered reference")
    func referencesAreDrawn() throws {
        // SQLite keeps StorageBackend's default (PersistentRef.random(), fork-safe: PersistentRefForkTests); the
        // in-memory store's numbering (a prefix per object, then a serial) would repeat across a fork.
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        var halves = Set<Data>()
        for i in 0..<100 {
            let item = try store.add(NewItem(.genericPassword, generic("svc", "a\(i)"), data: Data([1])), returning: .persistentRef)
            let ref = try #require(item.persistentRef).data
            #expect(ref.count == 16)
            #expect(halves.insert(ref.prefix(8)).inserted, "two references share their first 8 bytes")
            #expect(halves.insert(ref.suffix(8)).inserted, "two references share their last 8 bytes")
        }
    }

    @Test("the codec keeps every value case and dates to the bit")
    func codec() throws {
        let date = Date(timeIntervalSinceReferenceDate: 0.1 + 0.2)
        let attributes: [AttributeName: AttributeValue] = [
            .service: .string("s"), .generic: .data(Data([9])), .creator: .number(Int64.min),
            .isNegative: .bool(false), .creationDate: .date(date), .account: .data(Data("a".utf8)),
        ]
        let record = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: attributes,
                                data: Data([1, 2, 3]))
        let back = RecordCodec.decode(RecordCodec.encodeFormat3(record), secret: [1, 2, 3])
        #expect(back == record)
        #expect(RecordCodec.decode(Array(RecordCodec.encodeFormat3(record).dropLast()), secret: [1, 2, 3]) == nil)
        // Format 3 holds no secret: "has one" without it, or one given for a record without, is no record.
        #expect(RecordCodec.decode(RecordCodec.encodeFormat3(record)) == nil)
        let none = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: attributes, data: nil)
        #expect(RecordCodec.decode(RecordCodec.encodeFormat3(none)) == none)
        #expect(RecordCodec.decode(RecordCodec.encodeFormat3(none), secret: []) == nil)
        // Format 4 holds no secret (its own part says whether there is one), and a format 4 record is never
        // read as an older one (or the other way round).
        let modified = Date(timeIntervalSinceReferenceDate: 12_345.678)
        var dated = attributes
        dated[.modificationDate] = .date(modified)
        let full = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: dated, data: Data([4]))
        let v4 = RecordCodec.encode(full)
        #expect(v4.first == 4 && v4.count == RecordCodec.encodeFormat3(full).count - 1, "format 3 without its flag")
        #expect(RecordCodec.decode(format4: v4, modified: nil, data: Data([4])) == full)
        #expect(RecordCodec.decode(v4) == nil && RecordCodec.decode(v4, secret: [4]) == nil)
        #expect(RecordCodec.decode(format4: RecordCodec.encodeFormat3(full), modified: nil, data: Data([4])) == nil)
        #expect(RecordCodec.decode(format4: Array(v4.dropLast()), modified: nil, data: nil) == nil)
        // A later modification date sealed apart (a change of secret alone) replaces the one inside; an earlier
        // one, or one for a record without a date inside, is no record.
        let later = modified.addingTimeInterval(60)
        #expect(RecordCodec.decode(format4: v4, modified: later, data: Data([4]))?.attributes[.modificationDate] == .date(later))
        #expect(RecordCodec.decode(format4: v4, modified: modified, data: Data([4])) == full)
        #expect(RecordCodec.decode(format4: v4, modified: modified.addingTimeInterval(-1), data: nil) == nil)
        #expect(RecordCodec.decode(format4: RecordCodec.encode(record), modified: later, data: nil) == nil)
        var odd = attributes
        odd[.modificationDate] = .string("yesterday")
        let oddRecord = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: odd, data: nil)
        #expect(RecordCodec.modificationDate(of: oddRecord) == nil)
        #expect(RecordCodec.decode(format4: RecordCodec.encode(oddRecord), modified: nil, data: nil) == oddRecord)
        #expect(RecordCodec.decode(format4: RecordCodec.encode(oddRecord), modified: later, data: nil) == nil)
        // The date part: 8 bytes, not a NaN.
        func decodedDate(_ bytes: [UInt8]) -> Date? { bytes.withUnsafeBytes { RecordCodec.decodeDate($0) } }
        #expect(decodedDate(RecordCodec.encodeDate(modified)) == modified)
        #expect(decodedDate([]) == nil && decodedDate([1, 2, 3]) == nil)
        #expect(decodedDate(RecordCodec.encodeDate(Date(timeIntervalSinceReferenceDate: .nan))) == nil)
        // Format 2 holds its secret: one given apart as well is no record.
        #expect(RecordCodec.decode(RecordCodec.encodeWithSecret(record)) == record)
        #expect(RecordCodec.decode(RecordCodec.encodeWithSecret(record), secret: [1, 2, 3]) == nil)
    }

    @Test("record format 2 keeps \"no secret\" apart from an empty one; a format 1 record keeps its meaning")
    func codecNoData() throws {
        func chunk(_ b: [UInt8]) -> [UInt8] { withUnsafeBytes(of: UInt32(b.count).bigEndian, Array.init) + b }
        let ref = PersistentRef.random()
        // Format 1, as written before "no secret" existed: class, ref, secret (0 bytes), one attribute.
        let v1 = [UInt8(1)] + chunk(Array("genp".utf8)) + chunk(Array(ref.data)) + chunk([])
            + withUnsafeBytes(of: UInt32(1).bigEndian, Array.init) + chunk(Array("svce".utf8)) + [1] + chunk(Array("s".utf8))
        let old = RecordCodec.decode(v1)
        #expect(old?.data == Data(), "a format 1 record with 0 bytes of secret has an empty secret")
        #expect(old?.attributes[.service] == .string("s"))
        #expect(old?.persistentRef == ref)
        let v1Secret = [UInt8(1)] + chunk(Array("genp".utf8)) + chunk(Array(ref.data)) + chunk([7, 8])
            + withUnsafeBytes(of: UInt32(0).bigEndian, Array.init)
        #expect(RecordCodec.decode(v1Secret)?.data == Data([7, 8]))
        // Re-encoded, it is format 4 (the secret apart) and means the same.
        if let old {
            let again = RecordCodec.encode(old)
            #expect(again.first == 4)
            #expect(RecordCodec.decode(format4: again, modified: nil, data: old.data) == old)
        }
        for data in [nil, Data(), Data([0])] as [Data?] {
            let record = ItemRecord(persistentRef: ref, itemClass: .internetPassword,
                                    attributes: [.protocol: .number(0x6874_7073), .authenticationType: .string("dflt")], data: data)
            let encoded = RecordCodec.encodeWithSecret(record)
            #expect(RecordCodec.decode(encoded) == record, "\(String(describing: data))")
            #expect(RecordCodec.decode(encoded)?.data == data)
            #expect(RecordCodec.decode(RecordCodec.encodeFormat3(record), secret: data.map(Array.init)) == record)
        }
        // The flag of formats 2 and 3 is 0 or 1; anything else, or a missing secret after 1, is not a record.
        var bad = RecordCodec.encodeWithSecret(ItemRecord(persistentRef: ref, itemClass: .genericPassword, attributes: [:], data: nil))
        let flagAt = 1 + 4 + 4 + 4 + 16
        #expect(bad[flagAt] == 0)
        bad[flagAt] = 2
        #expect(RecordCodec.decode(bad) == nil)
        bad[flagAt] = 1
        #expect(RecordCodec.decode(bad) == nil)
        #expect(RecordCodec.decode([4] + v1.dropFirst()) == nil)
    }

    @Test("committed schema 1 and 2 stores are read as they are (also for reading only) and upgraded to the current schema by the first write, in one transaction",
          arguments: [1, 2])
    func schemaUpgrade(from version: Int) throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        // The fixtures are copied: a test never writes into the repository.
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let db = s.path("old.db"), key = s.path("old.key")
        for (from, to) in [("v\(version).db", db), ("v\(version).key", key)] {
            try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent(from).path, toPath: to)
            chmod(to, 0o600)
        }
        func columns() -> String { RawDB(db).text("SELECT group_concat(name, ',') FROM pragma_table_info('items')") }
        func indexes() -> String {
            RawDB(db).text("SELECT group_concat(name || ':' || \"unique\", ',') FROM (SELECT * FROM pragma_index_list('items') ORDER BY name)")
        }
        func expectContents(_ store: SQLiteStore, _ stage: String) throws {
            #expect(try secret(store, "fixture.service", "alice") == Data("secret-alice".utf8), "\(stage)")
            #expect(try secret(store, "fixture.service", "empty") == Data(), "\(stage): an empty secret stays empty")
            if version == 2 {
                #expect(try secret(store, "fixture.none", "bob") == nil, "\(stage): no secret stays none")
            }
            let carol = try store.item(matching: ItemQuery(.internetPassword, [.server: "example.com", .account: "carol"],
                                                         returning: [.data, .attributes]))
            #expect(carol?.data == Data("pw-carol".utf8) && carol?.attributes?[.port] == .number(8443), "\(stage)")
            let key = try store.item(matching: ItemQuery(.key, [.applicationTag: .data(Data("fixture-tag".utf8))],
                                                       returning: .data))
            #expect(key?.data == Data(repeating: 0xA5, count: 32), "\(stage)")
            let labels = try store.exportRecords().map { $0.attributes[.account]?.text ?? $0.attributes[.label]?.text ?? "?" }
            let expected = version == 2 ? ["alice", "empty", "bob", "carol", "k"] : ["alice", "empty", "carol", "k"]
            #expect(Array(labels.prefix(expected.count)) == expected, "\(stage): insertion order")
        }
        let oldColumns = columns(), oldIndexes = indexes()
        #expect(!oldColumns.contains("secret"))
        do {
            let reader = try SQLiteStore(path: db, key: .keyFile(key), readOnly: true)
            try expectContents(reader, "read-only")
            #expect(failure { () throws(SecureStoreError) in
                try reader.add(NewItem(.genericPassword, generic("new", "x"), data: Data()))
            }?.code == .readOnly)
        }
        let store = try SQLiteStore(path: db, key: .keyFile(key))
        try expectContents(store, "opened for writing")
        #expect(userVersion(db) == Int64(version), "opening writes nothing")
        // A write the core refuses rolls the upgrade back with it.
        #expect(failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("fixture.service", "alice"), data: Data()))
        }?.code == .duplicateItem)
        #expect(userVersion(db) == Int64(version) && columns() == oldColumns && indexes() == oldIndexes)
        try store.update(ItemQuery(.genericPassword, generic("fixture.service", "alice")),
                         with: ItemChanges([.comment: "upgraded"]))
        #expect(userVersion(db) == SQLiteBackend.schemaVersion)
        #expect(columns() == "id,cls,ref,ukey,svc,acct,blob,secret,mdat")
        #expect(indexes() == "items_ref:1,items_svc_acct:0,items_ukey:1")
        // Every row re-sealed in format 4: a secret part each (with or without a secret), no date apart.
        #expect(RawDB(db).integer("SELECT count(secret) FROM items") == (version == 2 ? 5 : 4))
        #expect(RawDB(db).integer("SELECT count(*) FROM items WHERE \(sealedDate)") == 0)
        try expectContents(store, "after the upgrade")
        try store.add(NewItem(.genericPassword, generic("fixture.service", "dave"), data: Data("d".utf8)))
        let again = try SQLiteStore(path: db, key: .keyFile(key))
        try expectContents(again, "reopened")
        #expect(try secret(again, "fixture.service", "dave") == Data("d".utf8))
        try expectTamperEvident(db, key: Data(1...32), "schema \(version) upgraded")
    }

    @Test("the UNIQUE indexes back the core up: a row with a taken key is a duplicate, the same error the core gives")
    func uniqueIndexes() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("1".utf8)))
        try store.add(NewItem(.genericPassword, generic("svc", "b"), data: Data("2".utf8)))
        let raw = RawDB(s.db)
        // Another row with the first row's key index: refused by the index itself.
        #expect(raw.exec("UPDATE items SET ukey = (SELECT ukey FROM items WHERE id = 1) WHERE id = 2") != SQLITE_OK)
        #expect(raw.exec("INSERT INTO items(cls, ref, ukey, blob) SELECT cls, ref, x'00', blob FROM items WHERE id = 1") != SQLITE_OK)
        #expect(try secret(store, "svc", "b") == Data("2".utf8))
    }

    /// A new store at `s.db` holding svc/a ("one"), svc/b ("two") and svc/c (no secret), rows 1 to 3.
    private func threeItems(_ s: Scratch) throws -> (SQLiteStore, RawDB) {
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("one".utf8)))
        try store.add(NewItem(.genericPassword, generic("svc", "b"), data: Data("two".utf8)))
        try store.add(NewItem(.genericPassword, generic("svc", "c")))
        return (store, RawDB(s.db))
    }

    @Test("a read that returns no data leaves every secret sealed: a damaged secret breaks only reads of that secret")
    func readsWithoutDataOpenNoSecret() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let (store, raw) = try threeItems(s)
        // A flipped byte in a's sealed secret: only a read of that secret can notice.
        #expect(raw.flip("secret", id: 1, fromEnd: 3))
        let listed = try store.items(matching: ItemQuery(.genericPassword, [.service: "svc"], limit: .all,
                                                         returning: [.attributes]))
        #expect(listed.map { $0.attributes?[.account] } == ["a", "b", "c"])
        #expect(listed.allSatisfy { $0.data == nil })
        let one = try store.item(matching: ItemQuery(.genericPassword, generic("svc", "a"), returning: [.attributes]))
        #expect(one?.attributes?[.account] == "a" && one?.data == nil)
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "a") }?.code == .decode)
        #expect(try secret(store, "svc", "b") == Data("two".utf8))
        // An update that sets a new secret does not read the old one: the damaged item takes a new secret.
        #expect(try store.update(ItemQuery(.genericPassword, generic("svc", "a")), with: ItemChanges(data: Data("new".utf8))) == 1)
        #expect(try secret(store, "svc", "a") == Data("new".utf8))
        let a = try store.item(matching: ItemQuery(.genericPassword, generic("svc", "a"), returning: [.attributes, .data]))
        #expect(a?.attributes?[.account] == "a" && a?.data == Data("new".utf8))
        // A damaged item can still be found and deleted without its secret being read.
        #expect(raw.flip("secret", id: 1, fromEnd: 3))
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "a") }?.code == .decode)
        #expect(try store.delete(ItemQuery(.genericPassword, generic("svc", "a"))) == 1)
        // Every format 4 row holds a secret part (for an item without a secret too): one taken away is damage on
        // every read, data or not; garbage in its place is noticed by the reads that open it.
        raw.exec("UPDATE items SET secret = NULL WHERE id = 2")
        let taken = failure { () throws(SecureStoreError) in
            _ = try store.items(matching: ItemQuery(.genericPassword, generic("svc", "b"), returning: [.attributes]))
        }
        #expect(taken?.code == .decode)
        raw.exec("UPDATE items SET secret = x'00' WHERE id = 3")
        #expect(try store.items(matching: ItemQuery(.genericPassword, generic("svc", "c"), returning: [.attributes])).count == 1)
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "c") }?.code == .decode)
        #expect(failure { () throws(SecureStoreError) in
            _ = try store.item(matching: ItemQuery(.genericPassword, generic("svc", "c"), returning: [.attributes, .data]))
        }?.code == .decode)
    }

    @Test("a delete or an existence check the key decides opens only the record part, bound to the row's class, reference and key index: damaged date and secret parts do not stop it; a missing secret part, swapped index columns and a damaged record do")
    func keyDecidedDeletesOpenOnlyTheRecord() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let (store, raw) = try threeItems(s)
        func exists(_ account: String) throws(SecureStoreError) -> Bool {
            try store.item(matching: ItemQuery(.genericPassword, generic("svc", account))) != nil
        }
        // a: a change of secret alone writes a date part; damage it. Every read of a's attributes notices, the
        // data lookup does not (the secret part answers it), and neither do an existence check and a delete.
        #expect(try store.update(ItemQuery(.genericPassword, generic("svc", "a")), with: ItemChanges(data: Data("new".utf8))) == 1)
        #expect(raw.flip("mdat", id: 1, fromEnd: 3))
        #expect(failure { () throws(SecureStoreError) in
            _ = try store.item(matching: ItemQuery(.genericPassword, generic("svc", "a"), returning: .attributes))
        }?.code == .decode)
        #expect(try secret(store, "svc", "a") == Data("new".utf8))
        #expect(try exists("a"))
        #expect(try store.delete(ItemQuery(.genericPassword, generic("svc", "a"))) == 1)
        #expect(try !exists("a"))
        // b and c with their unique-key index columns swapped: the index of b now finds c's row, whose record
        // is bound to c's index, so neither an existence check nor a delete takes it for b; nothing is deleted.
        let keys = raw.rows("SELECT ukey FROM items WHERE id IN (2, 3) ORDER BY id").map { $0[0] }
        func hex(_ d: Data) -> String { d.map { String(format: "%02x", $0) }.joined() }
        func setKeys(_ b: Data, _ c: Data) {
            #expect(raw.exec("UPDATE items SET ukey = x'\(hex(Data(repeating: 0, count: b.count)))' WHERE id = 2") == SQLITE_OK)
            #expect(raw.exec("UPDATE items SET ukey = x'\(hex(c))' WHERE id = 3") == SQLITE_OK)
            #expect(raw.exec("UPDATE items SET ukey = x'\(hex(b))' WHERE id = 2") == SQLITE_OK)
        }
        setKeys(keys[1], keys[0])
        #expect(failure { () throws(SecureStoreError) in _ = try exists("b") }?.code == .decode)
        #expect(failure { () throws(SecureStoreError) in
            _ = try store.delete(ItemQuery(.genericPassword, generic("svc", "b")))
        }?.code == .decode)
        setKeys(keys[0], keys[1])
        #expect(raw.rows("SELECT id FROM items").count == 2, "nothing was deleted")
        // A damaged record stops them (the record part is what they open); put back, the delete goes through.
        #expect(raw.flip("blob", id: 2, fromEnd: 20, mask: 0x04))
        #expect(failure { () throws(SecureStoreError) in
            _ = try store.delete(ItemQuery(.genericPassword, generic("svc", "b")))
        }?.code == .decode)
        #expect(raw.flip("blob", id: 2, fromEnd: 20, mask: 0x04))
        #expect(try store.delete(ItemQuery(.genericPassword, generic("svc", "b"))) == 1)
        // Every format 4 row holds a secret part: one taken away is damage on every read, these too.
        let sealed = raw.rows("SELECT secret FROM items WHERE id = 3")[0][0]
        #expect(raw.exec("UPDATE items SET secret = NULL WHERE id = 3") == SQLITE_OK)
        #expect(failure { () throws(SecureStoreError) in _ = try exists("c") }?.code == .decode)
        raw.set("secret", id: 3, sealed)
        // A delete that names an attribute outside the key reads the records whole and matches by it.
        try store.add(NewItem(.genericPassword, [.service: "svc", .account: "d", .label: "L"]))
        #expect(failure { () throws(SecureStoreError) in
            _ = try store.delete(ItemQuery(.genericPassword, [.service: "svc", .label: "M"]))
        }?.code == .itemNotFound)
        #expect(try store.delete(ItemQuery(.genericPassword, [.service: "svc", .label: "L"])) == 1)
        #expect(try exists("c") && !exists("d"))
    }

    @Test("a change of secret alone the key decides reads its row's reference and date only, writes the secret and date parts only, and dates still move forward; damage stops it and writes nothing")
    func secretAloneUpdatesReadReferenceAndDate() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let now = Mutex(Date(timeIntervalSinceReferenceDate: 2_000))
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()),
                                    configuration: StoreConfiguration(clock: { now.withLock { $0 } }))
        let query = ItemQuery(.genericPassword, generic("svc", "a"))
        try store.add(NewItem(.genericPassword, generic("svc", "a").merging([.label: "L", .comment: "C"]) { $1 },
                              data: Data("one".utf8)))
        try store.add(NewItem(.genericPassword, generic("svc", "b"), data: Data("two".utf8)))
        let raw = RawDB(s.db)
        func column(_ name: String, _ id: Int) -> Data { raw.rows("SELECT \(name) FROM items WHERE id = \(id)")[0][0] }
        func attributes() throws -> [AttributeName: AttributeValue] {
            try store.item(matching: ItemQuery(.genericPassword, generic("svc", "a"), returning: .attributes))?.attributes ?? [:]
        }
        let added = try attributes()
        let blob = column("blob", 1)
        #expect(column("mdat", 1) == Data(count: 48), "a new row has no date apart")
        // The clock went back: the new date is still later than the stored one (the record's own, here).
        now.withLock { $0 = Date(timeIntervalSinceReferenceDate: 1_000) }
        #expect(try store.update(query, with: ItemChanges(data: Data("new".utf8))) == 1)
        var expected = added
        expected[.modificationDate] = .date(Date(timeIntervalSinceReferenceDate: 2_000.001))
        #expect(try attributes() == expected, "every other attribute as it was")
        #expect(try secret(store, "svc", "a") == Data("new".utf8))
        #expect(column("blob", 1) == blob, "the sealed record as stored")
        #expect(column("mdat", 1).count == 48 && column("mdat", 1) != Data(count: 48), "the new date sealed apart")
        // Again: the stored date is now the date part's, which the find opens.
        #expect(try store.update(query, with: ItemChanges(data: Data("newer".utf8))) == 1)
        expected[.modificationDate] = .date(Date(timeIntervalSinceReferenceDate: 2_000.002))
        #expect(try attributes() == expected)
        // Damage to what it opens (the date part, the record part) stops it before anything is written.
        let (sealedSecret, sealedDate) = (column("secret", 1), column("mdat", 1))
        for part in ["mdat", "blob"] {
            #expect(raw.flip(part, id: 1, fromEnd: 20, mask: 0x04))
            #expect(failure { () throws(SecureStoreError) in
                try store.update(query, with: ItemChanges(data: Data("lost".utf8)))
            }?.code == .decode, "\(part)")
            #expect(column("secret", 1) == sealedSecret && raw.flip(part, id: 1, fromEnd: 20, mask: 0x04))
            #expect(column("mdat", 1) == sealedDate)
        }
        // Rows a and b with their unique-key index columns swapped: a's index finds b's row, whose record part is
        // bound to b's index, so the change is refused and neither row is written.
        let keys = raw.rows("SELECT ukey FROM items ORDER BY id").map { $0[0] }
        func setKeys(_ a: Data, _ b: Data) {
            raw.set("ukey", id: 1, Data(repeating: 0, count: a.count))
            raw.set("ukey", id: 2, b)
            raw.set("ukey", id: 1, a)
        }
        setKeys(keys[1], keys[0])
        #expect(failure { () throws(SecureStoreError) in
            try store.update(query, with: ItemChanges(data: Data("lost".utf8)))
        }?.code == .decode)
        setKeys(keys[0], keys[1])
        #expect(try secret(store, "svc", "a") == Data("newer".utf8) && secret(store, "svc", "b") == Data("two".utf8))
        // A change of the secret and an attribute reads the row whole and seals the record again (no date apart).
        #expect(try store.update(query, with: ItemChanges([.label: "M"], data: Data("last".utf8))) == 1)
        #expect(column("blob", 1) != blob && column("mdat", 1) == Data(count: 48))
        #expect(try attributes()[.label] == "M" && secret(store, "svc", "a") == Data("last".utf8))
    }

    @Test("a record read without its attributes is never stored whole: an insert, or a replace of a row the transaction did not find that way, is refused and writes nothing")
    func recordsWithoutAttributesAreNeverStoredWhole() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let (store, raw) = try threeItems(s)
        let before = raw.rows("SELECT id, blob, secret, mdat FROM items ORDER BY id")
        let stored = try store.backend.read { (txn: inout SQLiteBackend.Transaction) throws(SecureStoreError) in
            try txn.find(RecordFilter(itemClass: .genericPassword))
        }
        let key = try #require(stored.first { $0[.account] == "a" }).uniqueKey
        let partial = ItemRecord(persistentRef: PersistentRef.random(), itemClass: .genericPassword, foundByKey: key,
                                 data: Data("x".utf8), modified: Date())
        #expect(failure { () throws(SecureStoreError) in
            try store.backend.write { (txn: inout SQLiteBackend.Transaction) throws(SecureStoreError) in try txn.insert(partial) }
        }?.code == .internalError)
        // A whole read of the row (not by key without attributes) does not let a partial record replace it.
        #expect(failure { () throws(SecureStoreError) in
            try store.backend.write { (txn: inout SQLiteBackend.Transaction) throws(SecureStoreError) in
                let rows = try txn.find(RecordFilter(itemClass: .genericPassword, uniqueKeys: [key]))
                guard let row = rows.first else { return }
                try txn.replace(ItemRecord(persistentRef: row.persistentRef, itemClass: .genericPassword, foundByKey: key,
                                           data: Data("x".utf8), modified: Date()))
            }
        }?.code == .internalError)
        #expect(raw.rows("SELECT id, blob, secret, mdat FROM items ORDER BY id") == before, "nothing written")
    }

    @Test("a data lookup the key decides opens only the secret part, bound to the row's class, reference and key index: swapped index columns, secrets or records are caught")
    func keyDecidedLookupsOpenOnlyTheSecret() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let (store, raw) = try threeItems(s)
        // A damaged record (blob) does not stop the data lookup (the secret part alone answers it, and is
        // authentic), but any read of the attributes notices it.
        #expect(raw.flip("blob", id: 1, fromEnd: 20, mask: 0x04))
        #expect(try secret(store, "svc", "a") == Data("one".utf8))
        #expect(failure { () throws(SecureStoreError) in
            _ = try store.item(matching: ItemQuery(.genericPassword, generic("svc", "a"), returning: [.attributes]))
        }?.code == .decode)
        // Rows b and c with their unique-key index columns swapped: the index now finds the other row, whose
        // secret part is bound to its own index, so the lookup refuses it instead of answering with the other
        // item's secret.
        let keys = raw.rows("SELECT ukey FROM items ORDER BY id").map { $0[0] }
        func hex(_ d: Data) -> String { d.map { String(format: "%02x", $0) }.joined() }
        #expect(raw.exec("UPDATE items SET ukey = x'\(hex(Data(repeating: 0, count: keys[1].count)))' WHERE id = 2") == SQLITE_OK)
        #expect(raw.exec("UPDATE items SET ukey = x'\(hex(keys[1]))' WHERE id = 3") == SQLITE_OK)
        #expect(raw.exec("UPDATE items SET ukey = x'\(hex(keys[2]))' WHERE id = 2") == SQLITE_OK)
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "b") }?.code == .decode)
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "c") }?.code == .decode)
        #expect(raw.exec("UPDATE items SET ukey = x'\(hex(Data(repeating: 0, count: keys[1].count)))' WHERE id = 2") == SQLITE_OK)
        #expect(raw.exec("UPDATE items SET ukey = x'\(hex(keys[2]))' WHERE id = 3") == SQLITE_OK)
        #expect(raw.exec("UPDATE items SET ukey = x'\(hex(keys[1]))' WHERE id = 2") == SQLITE_OK)
        #expect(try secret(store, "svc", "b") == Data("two".utf8), "put back, it reads again")
        // A row's class number changed: its secret part is bound to the class too.
        #expect(raw.exec("UPDATE items SET cls = 2 WHERE id = 2") == SQLITE_OK)
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "b") }?.code == .decode)
        #expect(try secret(store, "svc", "a") == Data("one".utf8))
    }

    @Test("a secret is bound to its row: a secret moved to another row does not open")
    func secretBoundToRow() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let (store, raw) = try threeItems(s)
        raw.exec("UPDATE items SET secret = (SELECT secret FROM items WHERE id = 1) WHERE id = 2")
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "b") }?.code == .decode)
        // A secret given to an item that has none, or taken from one that has one, is damage too.
        raw.exec("UPDATE items SET secret = (SELECT secret FROM items WHERE id = 1) WHERE id = 3")
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "c") }?.code == .decode)
        raw.exec("UPDATE items SET secret = NULL WHERE id = 1")
        #expect(failure { () throws(SecureStoreError) in _ = try secret(store, "svc", "a") }?.code == .decode)
    }

    private func userVersion(_ path: String) -> Int64? {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(stmt) }
        guard sqlite3_step(stmt) == SQLITE_ROW else { return nil }
        return sqlite3_column_int64(stmt, 0)
    }

    @Test("no secret or attribute value appears in the database, WAL or shm files")
    func noPlaintext() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let words = ["SECRETzebra42", "SERVICEquokka", "ACCOUNTnarwhal", "LABELpangolin", "COMMENTaxolotl"]
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        for i in 0..<5 {
            let extra: [AttributeName: AttributeValue] = [.label: .string(words[3] + "\(i)"), .comment: .string(words[4])]
            try store.add(NewItem(.genericPassword, generic(words[1] + "\(i)", words[2], extra), data: Data((words[0] + "\(i)").utf8)))
        }
        try store.update(ItemQuery(.genericPassword, generic(words[1] + "0", words[2])),
                         with: ItemChanges(data: Data((words[0] + "X").utf8)))
        try store.delete(ItemQuery(.genericPassword, generic(words[1] + "1", words[2])))
        // While open (WAL and shm present) and after closing.
        withExtendedLifetime(store) {
            #expect(FileManager.default.fileExists(atPath: s.db + "-wal"))
            #expect(FileManager.default.fileExists(atPath: s.db + "-shm"))
            for file in [s.db, s.db + "-wal", s.db + "-shm"] {
                let mode = (try? FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) ?? 0
                #expect(mode & 0o077 == 0, "\(file) mode \(String(mode, radix: 8))")
                guard let bytes = FileManager.default.contents(atPath: file) else { continue }
                for word in words {
                    #expect(bytes.range(of: Data(word.utf8)) == nil, "\(word) in \(file)")
                }
            }
        }
        for file in [s.db, s.db + "-wal", s.db + "-shm"] {
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            for word in words {
                #expect(bytes.range(of: Data(word.utf8)) == nil, "\(word) in \(file)")
            }
        }
    }

    @Test("a wrong key or passphrase fails with authFailed and leaves the file byte-for-byte unchanged")
    func wrongKey() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(key))
            try store.add(NewItem(.genericPassword, generic("s", "a"), data: Data("x".utf8)))
        }
        let before = FileManager.default.contents(atPath: s.db)
        let error = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(randomKey())) }
        #expect(error?.code == .authFailed)
        #expect(FileManager.default.contents(atPath: s.db) == before)
        let bad = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .passphrase("nope"), passphraseCost: .minimum) }
        #expect(bad?.code == .authFailed)
        #expect(FileManager.default.contents(atPath: s.db) == before)
        let short = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(Data([1, 2]))) }
        #expect(short?.code == .param)
        #expect(try secret(SQLiteStore(path: s.db, key: .raw(key)), "s", "a") == Data("x".utf8))

        // Passphrase stores.
        let p = s.path("p.db")
        do {
            let store = try SQLiteStore(path: p, key: .passphrase("correct horse"), passphraseCost: .minimum)
            try store.add(NewItem(.genericPassword, generic("s", "a"), data: Data("y".utf8)))
        }
        let pBefore = FileManager.default.contents(atPath: p)
        let wrong = failure { () throws(SecureStoreError) in
            _ = try SQLiteStore(path: p, key: .passphrase("battery staple"), passphraseCost: .minimum)
        }
        #expect(wrong?.code == .authFailed)
        #expect(FileManager.default.contents(atPath: p) == pBefore)
        let reopened = try SQLiteStore(path: p, key: .passphrase("correct horse"))
        #expect(try secret(reopened, "s", "a") == Data("y".utf8))
    }

    @Test("a tampered ciphertext breaks only its own item, with a clear decode error; swapped rows are detected")
    func tamper() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(key))
            for i in 0..<4 { try store.add(NewItem(.genericPassword, generic("s\(i)", "a"), data: Data("v\(i)".utf8))) }
        }
        do {
            let raw = RawDB(s.db)
            let rows = raw.rows("SELECT blob FROM items ORDER BY id")
            var blob = rows[1][0]
            blob[blob.count / 2] ^= 0x01
            raw.setBlob(id: 2, blob)
            raw.setBlob(id: 3, rows[3][0])   // row 4's ciphertext under row 3's identity
        }
        let store = try SQLiteStore(path: s.db, key: .raw(key))
        #expect(try secret(store, "s0", "a") == Data("v0".utf8))
        #expect(try secret(store, "s3", "a") == Data("v3".utf8))
        for (i, name) in ["s1", "s2"].enumerated() {
            // A lookup of the secret alone opens only the secret part (intact, and bound to its row)...
            #expect(try secret(store, name, "a") == Data("v\(i + 1)".utf8))
            // ...every read of the attributes opens the damaged or moved record.
            let error = failure { () throws(SecureStoreError) in
                _ = try store.item(matching: ItemQuery(.genericPassword, generic(name, "a"), returning: [.attributes, .data]))
            }
            #expect(error?.code == .decode)
            #expect(error?.message.contains("cannot be decrypted: the data was altered or corrupted") == true)
        }
    }

    @Test("garbage, truncated and newer-schema files give clear errors, never a crash")
    func badFiles() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let garbage = s.path("garbage.db")
        _ = FileManager.default.createFile(atPath: garbage, contents: Data((0..<8192).map { _ in UInt8.random(in: 0...255) }),
                                       attributes: [.posixPermissions: 0o600])
        let e1 = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: garbage, key: .raw(randomKey())) }
        #expect(e1?.code == .decode)

        let foreign = s.path("foreign.db")
        RawDB(foreign).exec("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('hello');")
        chmod(foreign, 0o600)   // private, so what is tested is the content
        let foreignBefore = FileManager.default.contents(atPath: foreign)
        let e0 = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: foreign, key: .raw(randomKey())) }
        #expect(e0?.code == .decode)
        #expect(FileManager.default.contents(atPath: foreign) == foreignBefore)

        let key = randomKey()
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(key))
            for i in 0..<200 {
                try store.add(NewItem(.genericPassword, generic("s\(i)", String(repeating: "a", count: 200)), data: Data(count: 300)))
            }
        }
        let full = FileManager.default.contents(atPath: s.db) ?? Data()
        #expect(full.count > 8192)
        let truncated = s.path("truncated.db")
        _ = FileManager.default.createFile(atPath: truncated, contents: full.prefix(full.count / 2), attributes: [.posixPermissions: 0o600])
        let e2 = failure { () throws(SecureStoreError) in
            let store = try SQLiteStore(path: truncated, key: .raw(key))
            _ = try store.items(matching: ItemQuery(.genericPassword, limit: .all))
        }
        #expect(e2 != nil)
        #expect(e2?.code == .decode || e2?.code == .io || e2?.code == .internalError, "\(String(describing: e2))")

        RawDB(s.db).exec("PRAGMA user_version = 99")
        let e3 = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(key)) }
        #expect(e3?.code == .notAvailable)
        #expect(e3?.message.contains("newer") == true)
    }

    @Test("a writer locked out past the busy timeout gets a clear io error, and no lock leaks")
    func busy() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        let store = try Keychain(backend: SQLiteBackend(path: s.db, key: .raw(key), busyTimeout: .milliseconds(200)))
        try store.add(NewItem(.genericPassword, generic("s", "a"), data: Data("x".utf8)))
        let raw = RawDB(s.db)
        #expect(raw.exec("BEGIN IMMEDIATE") == SQLITE_OK)
        let error = failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("t", "a"), data: Data("y".utf8)))
        }
        #expect(error?.code == .io)
        #expect(error?.message.contains("busy") == true)
        #expect(try secret(store, "s", "a") == Data("x".utf8))   // readers are not blocked by a writer
        raw.exec("ROLLBACK")
        try store.add(NewItem(.genericPassword, generic("t", "a"), data: Data("y".utf8)))
        #expect(try secret(store, "t", "a") == Data("y".utf8))
    }

    @Test("every find the core makes uses an index (reference, unique key, service with account), but a generic password's by account alone and by class alone, which read the table; every index is used: EXPLAIN QUERY PLAN")
    func queryPlans() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        for i in 0..<200 {   // enough rows that a scan and an index search differ in cost
            try store.add(NewItem(.genericPassword, generic("svc-\(i % 7)", "acct-\(i)"), data: Data("\(i)".utf8)))
            try store.add(NewItem(.internetPassword, [.server: "host-\(i % 5).example", .account: "user-\(i)"],
                                  data: Data("p\(i)".utf8)))
        }
        let alice = ItemRecord(persistentRef: .random(), itemClass: .genericPassword,
                               attributes: [.service: "svc-1", .account: "alice", .accessGroup: "default",
                                            .synchronizable: .bool(false)], data: nil)
        func plans(_ filter: RecordFilter) throws -> [String] { try store.backend.queryPlans(filter) }
        var used = Set<String>()
        func onlyIndex(_ filter: RecordFilter, _ index: String, _ what: String) throws {
            let found = try plans(filter)
            #expect(found.count == 1 && found[0].contains("USING INDEX \(index)") && !found[0].contains("SCAN items"),
                    "\(what): \(found)")
            used.insert(index)
        }
        try onlyIndex(RecordFilter(persistentRef: .random()), "items_ref", "by reference")
        try onlyIndex(RecordFilter(itemClass: .genericPassword, uniqueKeys: [alice.uniqueKey]), "items_ukey", "by key")
        var dataByKey = RecordFilter(itemClass: .genericPassword, uniqueKeys: [alice.uniqueKey])
        dataByKey.needsAttributes = false   // a key-decided data lookup: the statement reading only the secret part
        try onlyIndex(dataByKey, "items_ukey", "a data lookup by key")
        try onlyIndex(RecordFilter(itemClass: .genericPassword, equalities: [.service: "svc-3", .account: "acct-3"]),
                      "items_svc_acct", "by service and account, not by key")
        try onlyIndex(RecordFilter(itemClass: .genericPassword, equalities: [.service: "svc-3"]), "items_svc_acct", "by service")
        try onlyIndex(RecordFilter(itemClass: .internetPassword, equalities: [.account: "user-3"]), "items_svc_acct",
                      "an internet password by account (no service: the default's service index)")
        try onlyIndex(RecordFilter(itemClass: .internetPassword, equalities: [.server: "host-3.example", .account: "user-3"]),
                      "items_svc_acct", "an internet password by server and account")
        // Finds that read the table: a generic password by account alone, by class alone.
        for filter in [RecordFilter(itemClass: .genericPassword, equalities: [.account: "acct-3"]),
                       RecordFilter(itemClass: .internetPassword)] {
            let found = try plans(filter)
            #expect(found.count == 1 && found[0].contains("SCAN items"), "\(found)")
        }
        // Every index of the table is one a plan uses.
        let indexes = RawDB(s.db).rows("SELECT name FROM pragma_index_list('items')").map { String(decoding: $0[0], as: UTF8.self) }
        #expect(Set(indexes) == used, "\(indexes)")
        // And the answers are right.
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: "svc-3"])).count == 29)
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.account: "acct-3"], returning: .data)).first?.data
                == Data("3".utf8))
        #expect(try store.items(matching: ItemQuery(.internetPassword, [.account: "user-3"], returning: .data)).first?.data
                == Data("p3".utf8))
        #expect(try store.items(matching: ItemQuery(.internetPassword, [.server: "host-3.example", .account: "user-3"],
                                                    returning: .data)).first?.data == Data("p3".utf8))
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: "svc-3", .account: "acct-3"],
                                                    synchronizableAny: true)).count == 1)
    }

    @Test("rekey re-encrypts everything; the old key then fails with authFailed")
    func rekey() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let old = randomKey(), new = randomKey()
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(old))
            for i in 0..<5 { try store.add(NewItem(.genericPassword, generic("s\(i)", "a"), data: Data("v\(i)".utf8))) }
            try store.rekey(to: .raw(new))
            #expect(try secret(store, "s3", "a") == Data("v3".utf8))
            try store.add(NewItem(.genericPassword, generic("s9", "a"), data: Data("v9".utf8)))
        }
        let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(old)) }
        #expect(e?.code == .authFailed)
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(new))
            for i in [0, 4, 9] { #expect(try secret(store, "s\(i)", "a") == Data("v\(i)".utf8)) }
            #expect(throws: SecureStoreError.self) {
                try store.add(NewItem(.genericPassword, generic("s2", "a")))
            }
            try store.rekey(to: .passphrase("phrase"), passphraseCost: .minimum)
        }
        let e2 = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(new)) }
        #expect(e2?.code == .authFailed)
        let store = try SQLiteStore(path: s.db, key: .passphrase("phrase"))
        #expect(try secret(store, "s1", "a") == Data("v1".utf8))
    }

    @Test("a rotation that fails half-way leaves nothing of it: the old key still opens every item")
    func interruptedRekey() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let old = randomKey()
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(old))
            for i in 0..<6 { try store.add(NewItem(.genericPassword, generic("s\(i)", "a"), data: Data("v\(i)".utf8))) }
        }
        do {   // damage the last row, so the rotation fails after re-sealing the first five
            let raw = RawDB(s.db)
            var blob = raw.rows("SELECT blob FROM items WHERE id = 6")[0][0]
            blob[30] ^= 0xFF
            raw.setBlob(id: 6, blob)
        }
        let store = try SQLiteStore(path: s.db, key: .raw(old))
        let error = failure { () throws(SecureStoreError) in try store.rekey(to: .raw(randomKey())) }
        #expect(error?.code == .decode)
        for i in 0..<5 { #expect(try secret(store, "s\(i)", "a") == Data("v\(i)".utf8)) }
        let reopened = try SQLiteStore(path: s.db, key: .raw(old))
        for i in 0..<5 { #expect(try secret(reopened, "s\(i)", "a") == Data("v\(i)".utf8)) }
    }

    @Test("key files: created 0600 when absent, reused, refused when others can read them")
    func keyFiles() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let keyPath = s.path("store.key")
        do {
            let store = try SQLiteStore(path: s.db, key: .keyFile(keyPath))
            try store.add(NewItem(.genericPassword, generic("s", "a"), data: Data("x".utf8)))
        }
        let attrs = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
        #expect((attrs[.size] as? Int) == 32)
        #expect(((try FileManager.default.attributesOfItem(atPath: s.db))[.posixPermissions] as? Int) == 0o600)
        #expect(try secret(SQLiteStore(path: s.db, key: .keyFile(keyPath)), "s", "a") == Data("x".utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyPath)
        let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .keyFile(keyPath)) }
        #expect(e?.code == .authFailed)
        #expect(e?.message.contains("chmod 600") == true)
    }

    @Test("default paths follow XDG variables")
    func defaultPaths() {
        let paths = SQLiteBackend.defaultPaths()
        #expect(paths.database.hasSuffix("/securestore/store.db"))
        #expect(paths.keyFile.hasSuffix("/securestore/store.key"))
    }
}

@Suite("SQLite store, several processes", .serialized)
struct SQLiteProcessTests {
    @Test("4 processes: distinct adds all land; racing adds of one item succeed exactly once")
    func processes() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        _ = try SQLiteStore(path: s.db, key: .raw(key))
        let distinct = try (0..<4).map { w in try Worker(["add", s.db, hex(key), "w\(w)", "0", "25"]) }
        let distinctLines = distinct.flatMap { $0.finish() }
        #expect(distinctLines.filter { $0.hasPrefix("ok ") }.count == 100, "\(distinctLines.filter { !$0.hasPrefix("ok") })")
        let racing = try (0..<4).map { _ in try Worker(["add", s.db, hex(key), "same", "0", "20"]) }
        let racingLines = racing.flatMap { $0.finish() }
        #expect(racingLines.filter { $0.hasPrefix("ok ") }.count == 20)
        #expect(racingLines.filter { $0.hasPrefix("dup ") }.count == 60)
        #expect(!racingLines.contains { $0.hasPrefix("err") || $0.hasPrefix("fatal") || $0.contains("locked") },
                "\(racingLines.filter { !$0.hasPrefix("ok") && !$0.hasPrefix("dup") })")
        let store = try SQLiteStore(path: s.db, key: .raw(key))
        let all = try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes)).count
        #expect(all == 120)
    }

    @Test("the default store lives under XDG_DATA_HOME, its key under XDG_CONFIG_HOME, in private folders")
    func defaultLocation() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        var env = ProcessInfo.processInfo.environment
        env["XDG_DATA_HOME"] = s.path("data")
        env["XDG_CONFIG_HOME"] = s.path("config")
        for _ in 0..<2 {   // the second run reuses the key file and finds the first item (duplicate is fine)
            let lines = try Worker(["default"], environment: env).finish()
            #expect(lines == ["ok \(s.path("data"))/securestore/store.db \(s.path("config"))/securestore/store.key"]
                    || lines.first?.contains("duplicateItem") == true, "\(lines)")
        }
        let fm = FileManager.default
        func mode(_ path: String) -> Int { ((try? fm.attributesOfItem(atPath: path))?[.posixPermissions] as? Int) ?? -1 }
        #expect(mode(s.path("data/securestore")) == 0o700)
        #expect(mode(s.path("config/securestore")) == 0o700)
        #expect(mode(s.path("data/securestore/store.db")) == 0o600)
        #expect(mode(s.path("config/securestore/store.key")) == 0o600)
        let key = fm.contents(atPath: s.path("config/securestore/store.key")) ?? Data()
        let store = try SQLiteStore(path: s.path("data/securestore/store.db"), key: .raw(key))
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: .string("default")], returning: .data)).first?.data
                == Data("d".utf8))
    }

    @Test("a writer killed at random moments loses no reported add and never corrupts the file")
    func crashes() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        _ = try SQLiteStore(path: s.db, key: .raw(key))
        var reported: [String] = []
        for round in 0..<12 {
            let worker = try Worker(["loop", s.db, hex(key), "r\(round)"])
            usleep(UInt32.random(in: 60_000...250_000))
            kill(worker.process.processIdentifier, SIGKILL)
            let lines = worker.finish()
            #expect(!lines.contains { $0.hasPrefix("err") || $0.hasPrefix("fatal") }, "\(lines.suffix(3))")
            reported += lines.filter { $0.hasPrefix("ok ") }.map { String($0.dropFirst(3)) }
            #expect(RawDB(s.db).text("PRAGMA integrity_check") == "ok")
            let store = try SQLiteStore(path: s.db, key: .raw(key))
            // A slow machine (or a sanitizer) may kill the worker before its first add: no items is fine.
            let all = try store.items(matching: ItemQuery(.genericPassword, returning: .attributes))
            let names = Set(all.compactMap { $0.attributes?[.account]?.text })
            let missing = reported.filter { !names.contains($0) }
            #expect(missing.isEmpty, "round \(round): lost \(missing.prefix(5))")
        }
        #expect(reported.count > 12)
    }
}
