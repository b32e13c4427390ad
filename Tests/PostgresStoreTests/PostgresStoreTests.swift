import Testing
import Foundation
import Synchronization
import TestSupport
import SecureStoreCore
import SecureStorePostgres
import SecureStoreSQLite
import SecureStoreCrypto

@Suite("PostgreSQL store", .requires(.postgres))
struct PostgresStoreTests {
    @Test("items survive a new connection; the same key in another namespace sees nothing")
    func reopen() throws {
        let ns = Server.freshNamespace(), key = randomKey()
        do {
            let store = try Server.store(namespace: ns, key: key)
            try store.add(NewItem(.genericPassword, generic("svc", "alice", [.label: .string("L"), .comment: .string("c")]),
                                  data: Data([0, 1, 2, 255])), returning: [])
            try store.add(NewItem(.internetPassword, [.server: .string("example.com"), .port: .number(8443),
                                                      .account: .string("bob")], data: Data("pw".utf8)), returning: [])
            #expect(store.storeDescription.contains("namespace \(ns)"))
        }
        let again = try Server.store(namespace: ns, key: key)
        let found = try again.items(matching: ItemQuery(.genericPassword, generic("svc", "alice"), returning: [.data, .attributes]))
        #expect(found.first?.data == Data([0, 1, 2, 255]))
        #expect(found.first?.attributes?[.label] == .string("L"))
        let internet = try again.items(matching: ItemQuery(.internetPassword, [.server: .string("example.com")], returning: .attributes))
        #expect(internet.first?.attributes?[.port] == .number(8443))
        let other = try Server.store(namespace: Server.freshNamespace(), key: key)
        #expect(try other.items(matching: ItemQuery(.genericPassword)).isEmpty)
    }

    @Test("a wrong key or passphrase fails with authFailed; the right passphrase opens the namespace")
    func wrongKey() throws {
        let ns = Server.freshNamespace(), key = randomKey()
        _ = try Server.store(namespace: ns, key: key)
        #expect(failure { () throws(SecureStoreError) in _ = try Server.store(namespace: ns, key: randomKey()) }?.code == .authFailed)
        let pns = Server.freshNamespace("pass")
        let first = try PostgresStore(url: Server.url(), key: .passphrase("correct horse"), namespace: pns,
                                      passwordEnv: Server.passwordEnv, passphraseCost: .minimum)
        try first.add(NewItem(.genericPassword, generic("p", "q"), data: Data("x".utf8)), returning: [])
        let second = try PostgresStore(url: Server.url(), key: .passphrase("correct horse"), namespace: pns,
                                       passwordEnv: Server.passwordEnv)
        #expect(try second.items(matching: ItemQuery(.genericPassword, generic("p", "q"), returning: .data)).first?.data
                == Data("x".utf8))
        #expect(failure { () throws(SecureStoreError) in
            _ = try PostgresStore(url: Server.url(), key: .passphrase("wrong"), namespace: pns, passwordEnv: Server.passwordEnv)
        }?.code == .authFailed)
        #expect(failure { () throws(SecureStoreError) in _ = try Server.store(namespace: pns, key: key) }?.code == .authFailed)
    }

    @Test("a namespace that exists is never given a new key file: a missing one is an error and none is written")
    func missingKeyFile() throws {
        let folder = try Server.privateFolder("ss-pg-key")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ns = Server.freshNamespace("keyfile"), keyFile = folder + "/store.key"
        do {
            let store = try PostgresStore(url: Server.url(), key: .keyFile(keyFile), namespace: ns,
                                          passwordEnv: Server.passwordEnv)
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)), returning: [])
        }
        #expect(FileManager.default.fileExists(atPath: keyFile))
        #expect(unlink(keyFile) == 0)
        let e = failure { () throws(SecureStoreError) in
            _ = try PostgresStore(url: Server.url(), key: .keyFile(keyFile), namespace: ns, passwordEnv: Server.passwordEnv)
        }
        #expect(e?.code == .notAvailable, "\(String(describing: e))")
        #expect(!FileManager.default.fileExists(atPath: keyFile), "a new key file was written for an existing namespace")
        // A new namespace still gets its key file.
        _ = try PostgresStore(url: Server.url(), key: .keyFile(keyFile), namespace: Server.freshNamespace("keyfile"),
                              passwordEnv: Server.passwordEnv)
        #expect(FileManager.default.fileExists(atPath: keyFile))
    }

    @Test("opened without creating, a namespace that has no store yet is itemNotFound and gets no key check or key file; created later, it opens")
    func openWithoutCreating() throws {
        let folder = try Server.privateFolder("ss-pg-nocreate")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ns = Server.freshNamespace("nocreate"), keyFile = folder + "/store.key"
        func openExisting() throws(SecureStoreError) -> PostgresStore {
            try PostgresStore(url: Server.url(), key: .keyFile(keyFile), namespace: ns, passwordEnv: Server.passwordEnv,
                              creatingStore: false)
        }
        let e = failure { () throws(SecureStoreError) in _ = try openExisting() }
        #expect(e?.code == .itemNotFound && e?.message.contains("nothing has been stored") == true, "\(String(describing: e))")
        #expect(!FileManager.default.fileExists(atPath: keyFile), "a key file was written by a read")
        // Nothing was written for the namespace: creating it now makes a new key check (and key file).
        let created = try PostgresStore(url: Server.url(), key: .keyFile(keyFile), namespace: ns, passwordEnv: Server.passwordEnv)
        try created.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)), returning: [])
        #expect(FileManager.default.fileExists(atPath: keyFile))
        #expect(try openExisting().items(matching: ItemQuery(.genericPassword, generic("svc", "a"), returning: .data)).first?.data
                == Data("v".utf8))
    }

    @Test("the database owner reading every table finds none of the stored plaintext")
    func noPlaintext() throws {
        let ns = Server.freshNamespace("plain")
        let store = try Server.store(namespace: ns, key: randomKey())
        let markers = ["zq-service-7731", "zq-account-4410", "zq-label-9902", "zq-comment-3318", "zq-secret-5527",
                       "zq-server-1184.example", "zq-generic-6605"]
        try store.add(NewItem(.genericPassword, generic(markers[0], markers[1], [.label: .string(markers[2]),
                                                                                 .comment: .string(markers[3]),
                                                                                 .generic: .data(Data(markers[6].utf8))]),
                              data: Data(markers[4].utf8)), returning: [])
        try store.add(NewItem(.internetPassword, [.server: .string(markers[5]), .account: .string(markers[1])],
                              data: Data(markers[4].utf8)), returning: [])
        try store.update(ItemQuery(.genericPassword, generic(markers[0], markers[1])),
                         with: ItemChanges([.description: .string(markers[2])]))
        var dump = Data()
        for table in ["securestore_items", "securestore_meta", "securestore_schema", "securestore_namespaces"] {
            dump += try Server.psql(["-c", "COPY (SELECT * FROM \(table)) TO STDOUT WITH (FORMAT binary)"])
            dump += try Server.psql(["-At", "-c", "SELECT * FROM \(table)"])
        }
        #expect(dump.range(of: Data(ns.utf8)) != nil, "the dump holds the namespace's rows")
        for marker in markers {
            #expect(dump.range(of: Data(marker.utf8)) == nil, "\(marker) is readable by the server")
            #expect(dump.range(of: Data(hex(Data(marker.utf8)).utf8)) == nil, "\(marker) is there as hex")
        }
        let columns = String(decoding: try Server.psql(["-At", "-c",
            "SELECT string_agg(column_name || ':' || data_type, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'securestore_items' AND table_schema = current_schema()"]),
            as: UTF8.self)
        #expect(columns.trimmingCharacters(in: .whitespacesAndNewlines)
                == "id:bigint,ns:integer,cls:bigint,ref:bytea,ukey:bytea,svc:bytea,acct:bytea,blob:bytea,secret:bytea,mdat:bytea")
    }

    @Test("the database enforces uniqueness: a second row with the same key is refused as duplicateItem")
    func uniqueIndex() throws {
        let ns = Server.freshNamespace()
        let store = try Server.store(namespace: ns, key: randomKey())
        try store.add(NewItem(.genericPassword, generic("u", "v"), data: Data()), returning: [])
        let dup = try Server.psql(["-At", "-c",
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'securestore_items' AND schemaname = current_schema() AND indexdef LIKE 'CREATE UNIQUE INDEX%(ns, ukey)'"])
        #expect(String(decoding: dup, as: UTF8.self).hasPrefix("1"))
        // The row copied under a new id and ref: the unique index refuses it.
        let copy = try run("/usr/bin/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", try Server.url(), "-c",
            "INSERT INTO securestore_items(ns, cls, ref, ukey, svc, acct, blob) SELECT ns, cls, ref || '\\x00'::bytea, ukey, svc, acct, blob FROM securestore_items WHERE \(Server.scope(ns))"],
            environment: ["PGPASSWORD": ProcessInfo.processInfo.environment[Server.passwordEnv] ?? ""])
        #expect(copy.status != 0)
        #expect(failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("u", "v"), data: Data()), returning: [])
        }?.code == .duplicateItem)
    }

    @Test("an add in one round trip: a taken key gets the core's own duplicate error and writes nothing; update and delete by the full key still work")
    func oneRoundTripAdd() throws {
        let ns = Server.freshNamespace("onetrip"), key = randomKey()
        let first = try Server.store(namespace: ns, key: key), second = try Server.store(namespace: ns, key: key)
        try first.add(NewItem(.genericPassword, generic("o", "a"), data: Data("1".utf8)), returning: [])
        let dup = failure { () throws(SecureStoreError) in
            try second.add(NewItem(.genericPassword, generic("o", "a", [.label: .string("other")]), data: Data("2".utf8)),
                           returning: [])
        }
        #expect(dup?.code == .duplicateItem)
        #expect(dup?.message.contains("with the same uniqueness key already exists") == true, "the core's message: \(String(describing: dup))")
        let rows = try Server.psql(["-At", "-c", "SELECT count(*) FROM securestore_items WHERE \(Server.scope(ns))"])
        #expect(String(decoding: rows, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        // A find by the full key inside an update or delete is asked, not assumed empty.
        #expect(try second.update(ItemQuery(.genericPassword, generic("o", "a")), with: ItemChanges(data: Data("3".utf8))) == 1)
        #expect(try first.items(matching: ItemQuery(.genericPassword, generic("o", "a"), returning: .data)).first?.data
                == Data("3".utf8))
        #expect(failure { () throws(SecureStoreError) in
            try first.update(ItemQuery(.genericPassword, generic("o", "missing")), with: ItemChanges(data: Data("4".utf8)))
        }?.code == .itemNotFound)
        #expect(try first.delete(ItemQuery(.genericPassword, generic("o", "a"))) == 1)
        try second.add(NewItem(.genericPassword, generic("o", "a"), data: Data("5".utf8)), returning: [])
        #expect(try first.items(matching: ItemQuery(.genericPassword, generic("o", "a"), returning: .data)).first?.data
                == Data("5".utf8))
    }

    @Test("round trips per call: an add and a lookup one each, a delete and an update two (the writer's BEGIN, lock and epoch read travel with its first statement, its writes with COMMIT)")
    func roundTripsPerCall() throws {
        let ns = Server.freshNamespace("trips"), key = randomKey()
        let store = try Server.store(namespace: ns, key: key)
        func trips(_ body: () throws -> Void) rethrows -> Int {
            let before = store.backend.roundTripsForTesting
            try body()
            return store.backend.roundTripsForTesting - before
        }
        let q = { (a: String) in ItemQuery(.genericPassword, generic("t", a)) }
        // Twice each first, so every statement is prepared on the connection a caller one at a time reuses.
        for round in 0..<3 {
            let add = try trips { try store.add(NewItem(.genericPassword, generic("t", "a\(round)"), data: Data([1])), returning: []) }
            let lookup = try trips { _ = try store.item(matching: ItemQuery(.genericPassword, generic("t", "a\(round)"), returning: .data)) }
            let update = try trips { _ = try store.update(q("a\(round)"), with: ItemChanges(data: Data([2]))) }
            let rekeyed = try trips { _ = try store.update(q("a\(round)"), with: ItemChanges([.account: "b\(round)"])) }
            _ = try store.update(q("b\(round)"), with: ItemChanges([.account: "a\(round)"]))
            let taken = trips {
                #expect(throws: SecureStoreError.self) {
                    try store.add(NewItem(.genericPassword, generic("t", "a\(round)"), data: Data([3])), returning: [])
                }
            }
            let delete = try trips { _ = try store.delete(q("a\(round)")) }
            guard round == 2 else { continue }
            #expect(add == 1)
            #expect(lookup == 1)
            // The opening with the find; the UPDATE (which fails by itself when its row is gone) with COMMIT.
            #expect(update == 2)
            // The opening with the find; the DELETE with COMMIT.
            #expect(delete == 2)
            // The add's one round trip finds the key taken, then a transaction reads the row (and rolls back).
            #expect(taken == 3)
            // An update that changes the key looks for a collision with the new key first: one more.
            #expect(rekeyed == 3)
        }
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: "t"], limit: .all)).isEmpty)
    }

    @Test("a connection the server drops between calls is replaced by the next call, transparently")
    func droppedConnection() throws {
        let app = "ss-drop-\(UInt64.random(in: 0...UInt64.max))"
        let ns = Server.freshNamespace(), key = randomKey()
        let store = try Server.store(namespace: ns, key: key, url: try Server.url() + "?application_name=\(app)")
        try store.add(NewItem(.genericPassword, generic("d", "1"), data: Data("1".utf8)), returning: [])
        let killed = try Server.psql(["-At", "-c",
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(app)'"])
        #expect(String(decoding: killed, as: UTF8.self).hasPrefix("1"))
        #expect(try store.items(matching: ItemQuery(.genericPassword, generic("d", "1"), returning: .data)).first?.data
                == Data("1".utf8))
        _ = try Server.psql(["-At", "-c",
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(app)'"])
        try store.add(NewItem(.genericPassword, generic("d", "2"), data: Data("2".utf8)), returning: [])
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: .string("d")], limit: .all,
                                                 returning: .attributes)).count == 2)
    }

    @Test("a multi-host URL with target_session_attrs=read-write skips a dead host")
    func multiHost() throws {
        let url = try Server.url()
        let failover = url.replacingOccurrences(of: "@127.0.0.1:", with: "@127.0.0.1:1,127.0.0.1:")
            + "?target_session_attrs=read-write"
        #expect(failover != url + "?target_session_attrs=read-write")
        let ns = Server.freshNamespace(), key = randomKey()
        let store = try Server.store(namespace: ns, key: key, url: failover)
        try store.add(NewItem(.genericPassword, generic("m", "h"), data: Data("x".utf8)), returning: [])
        #expect(try Server.store(namespace: ns, key: key).items(matching: 
            ItemQuery(.genericPassword, generic("m", "h"), returning: .data)).first?.data == Data("x".utf8))
    }

    @Test("the schema lives in the URL's search_path and is versioned: a newer version is refused")
    func schemaVersion() throws {
        let schema = "v\(UInt64.random(in: 0...UInt64.max))"
        _ = try Server.psql(["-c", "CREATE SCHEMA \(schema)"])
        let url = try Server.url() + "?options=-csearch_path%3D\(schema)"
        let key = randomKey()
        let store = try Server.store(namespace: "ns", key: key, url: url)
        try store.add(NewItem(.genericPassword, generic("s", "v"), data: Data()), returning: [])
        let version = try Server.psql(["-At", "-c", "SELECT version FROM \(schema).securestore_schema"])
        #expect(String(decoding: version, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "\(PostgresBackend.schemaVersion)")
        _ = try Server.psql(["-c", "UPDATE \(schema).securestore_schema SET version = 99"])
        let newer = failure { () throws(SecureStoreError) in _ = try Server.store(namespace: "ns", key: key, url: url) }
        #expect(newer?.code == .notAvailable && newer?.message.contains("newer") == true, "\(String(describing: newer))")
    }

    /// A store in a fresh namespace holding t/a ("one") and t/b ("two"), whose rows' `column` values were then
    /// swapped on the server (each intact, but bound to the other row).
    private func twoItemsSwapping(_ column: String, namespace: String, rotatingSecrets: Bool = false) throws -> PostgresStore {
        let ns = Server.freshNamespace(namespace)
        let store = try Server.store(namespace: ns, key: randomKey())
        try store.add(NewItem(.genericPassword, generic("t", "a"), data: Data("one".utf8)), returning: [])
        try store.add(NewItem(.genericPassword, generic("t", "b"), data: Data("two".utf8)), returning: [])
        if rotatingSecrets {
            for (account, secret) in [("a", "one"), ("b", "two")] {
                try store.update(ItemQuery(.genericPassword, generic("t", account)), with: ItemChanges(data: Data(secret.utf8)))
            }
            #expect(String(decoding: try Server.psql(["-At", "-c", "SELECT count(mdat) FROM securestore_items WHERE \(Server.scope(ns))"]),
                           as: UTF8.self).hasPrefix("2"), "a change of secret seals its date apart")
        }
        _ = try Server.psql(["-c", """
            UPDATE securestore_items i SET \(column) = o.\(column) FROM securestore_items o
            WHERE i.\(Server.scope(ns)) AND o.\(Server.scope(ns)) AND i.id <> o.id
            """])
        return store
    }

    @Test("a row altered on the server is detected: decode error, no wrong data")
    func tamper() throws {
        // Swap the two sealed records: each is intact but bound to the other row. A data lookup the key decides
        // opens only the row's secret part (intact, and its own), so it still answers right; every read of
        // the attributes notices.
        let store = try twoItemsSwapping("blob", namespace: "tamper")
        #expect(try store.items(matching: ItemQuery(.genericPassword, generic("t", "a"), returning: .data)).first?.data
                == Data("one".utf8))
        let swapped = failure { () throws(SecureStoreError) in
            _ = try store.items(matching: ItemQuery(.genericPassword, generic("t", "a"), returning: [.attributes, .data]))
        }
        #expect(swapped?.code == .decode, "\(String(describing: swapped))")
        // Swapped unique-key indexes: the lookup finds the other row, whose secret part is bound to its own.
        let keyNS = Server.freshNamespace("tamper-key")
        let moved = try Server.store(namespace: keyNS, key: randomKey())
        try moved.add(NewItem(.genericPassword, generic("t", "a"), data: Data("one".utf8)), returning: [])
        try moved.add(NewItem(.genericPassword, generic("t", "b"), data: Data("two".utf8)), returning: [])
        // In three steps: the unique index is checked row by row.
        _ = try Server.psql(["-v", "ON_ERROR_STOP=1", "-c", """
            CREATE TEMP TABLE k AS SELECT id, ukey FROM securestore_items WHERE \(Server.scope(keyNS)) ORDER BY id;
            UPDATE securestore_items SET ukey = '\\xff' WHERE id = (SELECT min(id) FROM k);
            UPDATE securestore_items SET ukey = (SELECT ukey FROM k ORDER BY id LIMIT 1) WHERE id = (SELECT max(id) FROM k);
            UPDATE securestore_items SET ukey = (SELECT ukey FROM k ORDER BY id DESC LIMIT 1) WHERE id = (SELECT min(id) FROM k);
            """])
        let wrongRow = failure { () throws(SecureStoreError) in
            _ = try moved.items(matching: ItemQuery(.genericPassword, generic("t", "a"), returning: .data))
        }
        #expect(wrongRow?.code == .decode, "\(String(describing: wrongRow))")
        // Swapped dates (each written apart by a change of secret): each bound to its own row's reference.
        let dated = try twoItemsSwapping("mdat", namespace: "tamper-date", rotatingSecrets: true)
        let wrongDate = failure { () throws(SecureStoreError) in
            _ = try dated.items(matching: ItemQuery(.genericPassword, generic("t", "a"), returning: .attributes))
        }
        #expect(wrongDate?.code == .decode, "\(String(describing: wrongDate))")
    }

    @Test("a read that returns no data leaves secrets sealed: a damaged secret breaks only reads of that secret")
    func readsWithoutDataOpenNoSecret() throws {
        // Swap the two sealed secrets: each is intact but bound to the other row.
        let store = try twoItemsSwapping("secret", namespace: "sealed")
        let listed = try store.items(matching: ItemQuery(.genericPassword, [.service: "t"], limit: .all,
                                                         returning: [.attributes]))
        #expect(listed.map { $0.attributes?[.account] } == ["a", "b"] && listed.allSatisfy { $0.data == nil })
        let swapped = failure { () throws(SecureStoreError) in
            _ = try store.items(matching: ItemQuery(.genericPassword, generic("t", "a"), returning: .data))
        }
        #expect(swapped?.code == .decode, "\(String(describing: swapped))")
        // An update that sets a new secret does not read the old one: the damaged item takes a new secret.
        #expect(try store.update(ItemQuery(.genericPassword, generic("t", "a")), with: ItemChanges(data: Data("new".utf8))) == 1)
        #expect(try store.items(matching: ItemQuery(.genericPassword, generic("t", "a"), returning: .data)).first?.data
                == Data("new".utf8))
        // b's secret part is still a's old one: an existence check and a delete by key open only b's record part.
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("t", "b"))) != nil)
        #expect(try store.delete(ItemQuery(.genericPassword, generic("t", "b"))) == 1)
        #expect(try store.delete(ItemQuery(.genericPassword, [.service: "t"])) == 1)
    }

    @Test("a change of secret alone the key decides writes the secret and date parts only: the sealed record stays byte for byte, dates move forward, a damaged or swapped date part stops it")
    func secretAloneUpdates() throws {
        let ns = Server.freshNamespace("secret-alone")
        let now = Mutex(Date(timeIntervalSinceReferenceDate: 2_000))
        let store = try PostgresStore(url: Server.url(), key: .raw(randomKey()), namespace: ns, passwordEnv: Server.passwordEnv,
                                      configuration: StoreConfiguration(clock: { now.withLock { $0 } }))
        try store.add(NewItem(.genericPassword, generic("t", "a").merging([.label: "L"]) { $1 }, data: Data("one".utf8)),
                      returning: [])
        try store.add(NewItem(.genericPassword, generic("t", "b"), data: Data("two".utf8)), returning: [])
        func columns() throws -> String {
            String(decoding: try Server.psql(["-At", "-c", """
                SELECT md5(blob), md5(secret), md5(mdat) FROM securestore_items WHERE \(Server.scope(ns)) ORDER BY id
                """]), as: UTF8.self)
        }
        func attributes() throws -> [AttributeName: AttributeValue] {
            try store.item(matching: ItemQuery(.genericPassword, generic("t", "a"), returning: .attributes))?.attributes ?? [:]
        }
        let added = try attributes()
        let blobs = try columns().split(separator: "\n").map { $0.split(separator: "|")[0] }
        // The clock went back: the dates still move forward, past the record's own, then past the date part's.
        now.withLock { $0 = Date(timeIntervalSinceReferenceDate: 1_000) }
        var expected = added
        for (round, secret) in ["new", "newer"].enumerated() {
            #expect(try store.update(ItemQuery(.genericPassword, generic("t", "a")), with: ItemChanges(data: Data(secret.utf8))) == 1)
            expected[.modificationDate] = .date(Date(timeIntervalSinceReferenceDate: 2_000 + 0.001 * Double(round + 1)))
            #expect(try attributes() == expected)
            #expect(try store.item(matching: ItemQuery(.genericPassword, generic("t", "a"), returning: .data))?.data
                    == Data(secret.utf8))
        }
        #expect(try columns().split(separator: "\n").map { $0.split(separator: "|")[0] } == blobs, "the sealed records as stored")
        // b's date part moved into a's row: a change of a's secret opens it (the date it must follow) and is refused.
        #expect(try store.update(ItemQuery(.genericPassword, generic("t", "b")), with: ItemChanges(data: Data("2".utf8))) == 1)
        _ = try Server.psql(["-v", "ON_ERROR_STOP=1", "-c", """
            UPDATE securestore_items i SET mdat = o.mdat FROM securestore_items o
            WHERE i.\(Server.scope(ns)) AND o.\(Server.scope(ns)) AND i.id < o.id
            """])
        let before = try columns()
        let refused = failure { () throws(SecureStoreError) in
            try store.update(ItemQuery(.genericPassword, generic("t", "a")), with: ItemChanges(data: Data("lost".utf8)))
        }
        #expect(refused?.code == .decode, "\(String(describing: refused))")
        #expect(try columns() == before, "nothing written")
        // A delete by key opens neither date part.
        for account in ["a", "b"] { #expect(try store.delete(ItemQuery(.genericPassword, generic("t", account))) == 1) }
    }

    @Test("a replace whose row another session deleted under the transaction (no lock of ours taken) fails by itself: nothing of the transaction is committed")
    func replacedRowVanishes() throws {
        let ns = Server.freshNamespace("vanish")
        let store = try Server.store(namespace: ns, key: randomKey())
        try store.add(NewItem(.genericPassword, generic("t", "a"), data: Data("one".utf8)), returning: [])
        let error = failure { () throws(SecureStoreError) in
            try store.backend.write { (txn: inout PostgresBackend.Transaction) throws(SecureStoreError) in
                // A find by class: a transaction from its first statement.
                guard let found = try txn.find(RecordFilter(itemClass: .genericPassword)).first else { return }
                do {
                    _ = try Server.psql(["-v", "ON_ERROR_STOP=1", "-c", "DELETE FROM securestore_items WHERE \(Server.scope(ns))"])
                } catch {
                    throw SecureStoreError(.io, "psql: \(error)")
                }
                try txn.insert(ItemRecord(persistentRef: .random(), itemClass: .genericPassword,
                                          attributes: found.attributes.merging([.account: "b"]) { $1 }, data: Data("two".utf8)))
                try txn.replace(found.updated([:], modified: Date(), data: Data("new".utf8)))
            }
        }
        #expect(error?.code == .internalError && error?.message.contains("vanished") == true, "\(String(describing: error))")
        #expect(String(decoding: try Server.psql(["-At", "-c", "SELECT count(*) FROM securestore_items WHERE \(Server.scope(ns))"]),
                       as: UTF8.self).hasPrefix("0"), "the insert was rolled back with it")
        // The store goes on: its connection is clean.
        try store.add(NewItem(.genericPassword, generic("t", "c"), data: Data("3".utf8)), returning: [])
        #expect(try store.delete(ItemQuery(.genericPassword, generic("t", "c"))) == 1)
    }

    @Test("a password in the URL is refused without echoing it; a missing password variable is named")
    func passwords() throws {
        let url = try Server.url()
        let withPassword = url.replacingOccurrences(of: "securestore@", with: "securestore:hunter2-zq@")
        let e1 = failure { () throws(SecureStoreError) in _ = try PostgresStore(url: withPassword, key: .raw(randomKey())) }
        #expect(e1?.code == .param && e1?.parameter == "url")
        #expect(e1?.message.contains("hunter2") == false)
        let e2 = failure { () throws(SecureStoreError) in
            _ = try PostgresStore(url: url, key: .raw(randomKey()), passwordEnv: "SECURESTORE_TEST_NO_SUCH_VARIABLE")
        }
        #expect(e2?.code == .notAvailable && e2?.message.contains("SECURESTORE_TEST_NO_SUCH_VARIABLE") == true)
        setenv("SECURESTORE_TEST_WRONG_PG_PASSWORD", "wrong-zq-password", 1)
        let e3 = failure { () throws(SecureStoreError) in
            _ = try PostgresStore(url: url, key: .raw(randomKey()), passwordEnv: "SECURESTORE_TEST_WRONG_PG_PASSWORD")
        }
        #expect(e3?.code == .notAvailable, "\(String(describing: e3))")
        #expect(e3?.message.contains("wrong-zq-password") == false)
        #expect(e3?.message.contains("127.0.0.1") == true, "\(String(describing: e3))")
    }

    @Test("no server or an unreachable host: notAvailable within the connect timeout, naming host and cause")
    func unreachable() throws {
        // A port nobody listens on: refused at once.
        let start = ContinuousClock.now
        let refused = failure { () throws(SecureStoreError) in
            _ = try PostgresStore(url: "postgresql://nobody@127.0.0.1:1/db", key: .raw(randomKey()), connectTimeout: .seconds(2))
        }
        #expect(refused?.code == .notAvailable)
        #expect(refused?.message.contains("127.0.0.1") == true && refused?.message.contains("refused") == true,
                "\(String(describing: refused))")
        // A black-holed address: bounded by connect_timeout (or refused at once by the network).
        let hole = failure { () throws(SecureStoreError) in
            _ = try PostgresStore(url: "postgresql://nobody@10.255.255.1:5432/db", key: .raw(randomKey()),
                                  connectTimeout: .seconds(2))
        }
        #expect(hole?.code == .notAvailable)
        #expect(hole?.message.contains("10.255.255.1") == true, "\(String(describing: hole))")
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test("a read-only server (as a standby is): reads work, writes fail with readOnly and change nothing")
    func readOnly() throws {
        let ns = Server.freshNamespace(), key = randomKey()
        let writable = try Server.store(namespace: ns, key: key)
        try writable.add(NewItem(.genericPassword, generic("ro", "a"), data: Data("a".utf8)), returning: [])
        let url = try Server.url() + "?options=-c%20default_transaction_read_only%3Don"
        let store = try PostgresStore(url: url, key: .raw(key), namespace: ns, passwordEnv: Server.passwordEnv)
        #expect(try store.items(matching: ItemQuery(.genericPassword, generic("ro", "a"), returning: .data)).first?.data
                == Data("a".utf8))
        let add = failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("ro", "b"), data: Data()), returning: [])
        }
        #expect(add?.code == .readOnly, "\(String(describing: add))")
        #expect(add?.message.contains("target_session_attrs=read-write") == true)
        #expect(failure { () throws(SecureStoreError) in _ = try store.delete(ItemQuery(.genericPassword)) }?.code == .readOnly)
        #expect(failure { () throws(SecureStoreError) in _ = try store.clear([.genericPassword]) }?.code == .readOnly)
        #expect(try writable.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes)).count == 1)
        // A new namespace needs a write: refused the same way.
        #expect(failure { () throws(SecureStoreError) in
            _ = try PostgresStore(url: url, key: .raw(key), namespace: Server.freshNamespace(), passwordEnv: Server.passwordEnv)
        }?.code == .readOnly)
    }
}

@Suite("PostgreSQL store, timeouts", .requires(.postgres))
struct PostgresTimeoutTests {
    @Test("a writer blocked by another writer's lock fails with io after the lock timeout, naming the holder, and works after",
          arguments: [(statement: 10, lock: 1), (statement: 1, lock: 5)])
    func blockedWriter(timeouts: (statement: Int, lock: Int)) throws {
        let ns = Server.freshNamespace("lock"), key = randomKey()
        let store = try PostgresStore(url: Server.url(), key: .raw(key), namespace: ns, passwordEnv: Server.passwordEnv,
                                      statementTimeout: .seconds(timeouts.statement), lockTimeout: .seconds(timeouts.lock))
        // Another client holds the namespace's writer lock for 4 s.
        guard let (holder, held) = try Server.holdWriterLock(ns, then: "SELECT pg_sleep(4);") else {
            Issue.record("cannot start psql")
            return
        }
        defer { _ = reap(holder, timeout: .seconds(30)) }
        #expect(held)
        let start = ContinuousClock.now
        let blocked = failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("l", "a"), data: Data()), returning: [])
        }
        let waited = ContinuousClock.now - start
        #expect(blocked?.code == .io, "\(String(describing: blocked))")
        #expect(blocked?.message.contains("Another writer of namespace \(ns) holds its lock") == true, "\(String(describing: blocked))")
        #expect(blocked?.message.contains("application psql") == true, "names the holder: \(String(describing: blocked))")
        #expect(waited < .seconds(3), "bounded by the 1 s timeout: \(waited)")
        _ = reap(holder, timeout: .seconds(30))
        try store.add(NewItem(.genericPassword, generic("l", "a"), data: Data("x".utf8)), returning: [])
        #expect(try store.items(matching: ItemQuery(.genericPassword, generic("l", "a"), returning: .data)).first?.data
                == Data("x".utf8))
    }
}

extension PostgresTimeoutTests {
    @Test("an add whose session the server ends while it waits for the lock: notAvailable (its COMMIT never ran), nothing written")
    func sessionEndedDuringAdd() throws {
        let app = "ss-end-\(UInt64.random(in: 0...UInt64.max))"
        let ns = Server.freshNamespace("ended"), key = randomKey()
        let store = try PostgresStore(url: Server.url() + "?application_name=\(app)", key: .raw(key), namespace: ns,
                                      passwordEnv: Server.passwordEnv, statementTimeout: .seconds(10),
                                      lockTimeout: .seconds(10))
        try store.add(NewItem(.genericPassword, generic("e", "first"), data: Data("1".utf8)), returning: [])
        guard let (holder, held) = try Server.holdWriterLock(ns, then: "SELECT pg_sleep(3);") else {
            Issue.record("cannot start psql")
            return
        }
        defer { _ = reap(holder, timeout: .seconds(30)) }
        #expect(held)
        // Once the add's one round trip waits for the lock, the server ends its session.
        let terminator = Thread {
            for _ in 0..<100 {
                usleep(50_000)
                let out = (try? Server.psql(["-At", "-c", "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    + "WHERE application_name = '\(app)' AND wait_event_type = 'Lock'"])) ?? Data()
                if !String(decoding: out, as: UTF8.self).hasPrefix("0") { return }
            }
        }
        terminator.start()
        let ended = failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("e", "second"), data: Data("2".utf8)), returning: [])
        }
        #expect(ended?.code == .notAvailable, "the server said it ended the session before COMMIT: \(String(describing: ended))")
        _ = reap(holder, timeout: .seconds(30))
        #expect(try store.items(matching: ItemQuery(.genericPassword, generic("e", "second"))).isEmpty)
        try store.add(NewItem(.genericPassword, generic("e", "second"), data: Data("3".utf8)), returning: [])
        #expect(try store.items(matching: ItemQuery(.genericPassword, generic("e", "second"), returning: .data)).first?.data
                == Data("3".utf8))
    }
}

extension PostgresTimeoutTests {
    @Test("an add waiting for another writer's lock sees what that writer committed: a key check replaced meanwhile refuses it, nothing written")
    func addSeesWhatTheLockHolderCommitted() throws {
        let ns = Server.freshNamespace("implicit"), key = randomKey()
        let store = try PostgresStore(url: Server.url(), key: .raw(key), namespace: ns, passwordEnv: Server.passwordEnv,
                                      statementTimeout: .seconds(10), lockTimeout: .seconds(10))
        try store.add(NewItem(.genericPassword, generic("i", "first"), data: Data("1".utf8)), returning: [])
        // Another writer (as a rekey elsewhere does) takes the lock, then replaces the key check and commits
        // while the add below waits for the lock.
        guard let (holder, held) = try Server.holdWriterLock(ns, then: "SELECT pg_sleep(1.5); "
            + "UPDATE securestore_meta SET v = '\\x00'::bytea || v WHERE \(Server.scope(ns)) AND k = 'check';") else {
            Issue.record("cannot start psql")
            return
        }
        defer { _ = reap(holder, timeout: .seconds(30)) }
        #expect(held)
        let start = ContinuousClock.now
        let refused = failure { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, generic("i", "second"), data: Data("2".utf8)), returning: [])
        }
        #expect(ContinuousClock.now - start > .milliseconds(500), "the add waited for the lock")
        #expect(refused?.code == .authFailed, "\(String(describing: refused))")
        #expect(refused?.message.contains("re-keyed") == true, "\(String(describing: refused))")
        _ = reap(holder, timeout: .seconds(30))
        let rows = try Server.psql(["-At", "-c", "SELECT count(*) FROM securestore_items WHERE \(Server.scope(ns))"])
        #expect(String(decoding: rows, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "1",
                "only the first item's row")
    }
}

@Suite("PostgreSQL store, several processes", .serialized, .requires(.postgres))
struct PostgresProcessTests {
    func okCount(_ lines: [String]) -> Int { lines.filter { $0.hasPrefix("ok ") }.count }
    func problems(_ lines: [String]) -> [String] { lines.filter { !$0.hasPrefix("ok ") && !$0.hasPrefix("dup ") } }

    @Test("4 processes: distinct adds all land; racing adds of one item succeed exactly once")
    func processes() throws {
        _ = try Server.url()
        let ns = Server.freshNamespace("procs"), key = randomKey()
        _ = try Server.store(namespace: ns, key: key)
        let distinct = try (0..<4).map { w in try Worker(["add", "pg:\(ns)", hex(key), "w\(w)", "0", "25"]) }
        let distinctLines = distinct.flatMap { $0.finish() }
        #expect(okCount(distinctLines) == 100, "\(problems(distinctLines))")
        let racing = try (0..<4).map { _ in try Worker(["add", "pg:\(ns)", hex(key), "same", "0", "20"]) }
        let racingLines = racing.flatMap { $0.finish() }
        #expect(okCount(racingLines) == 20)
        #expect(racingLines.filter { $0.hasPrefix("dup ") }.count == 60)
        #expect(problems(racingLines).isEmpty, "\(problems(racingLines))")
        let store = try Server.store(namespace: ns, key: key)
        #expect(try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes)).count == 120)
    }

    @Test("4 processes running the same mixed sequence leave PostgreSQL exactly as they leave SQLite")
    func sameAsSQLite() throws {
        _ = try Server.url()
        let key = randomKey()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-pg-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("store.db").path
        let ns = Server.freshNamespace("same")
        let sqlite = try SQLiteStore(path: db, key: .raw(key))
        let postgres = try Server.store(namespace: ns, key: key)

        func runAll(_ store: String) throws -> [String: Int] {
            let lines = try (0..<4).map { w in try Worker(["script", store, hex(key), "p\(w)", "30"]) }.flatMap { $0.finish() }
            #expect(problems(lines).isEmpty, "\(store): \(problems(lines))")
            var tally: [String: Int] = [:]
            for line in lines {
                let parts = line.split(separator: " ")
                let op = parts.count > 2 ? "\(parts[0]) \(parts[1])" : String(parts.first ?? "")
                tally[op, default: 0] += 1
            }
            return tally
        }
        func state(_ store: any SecureStore) throws -> [String] {
            let items = try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: [.attributes, .data]))
            return items.map { item in
                let account = item.attributes?[.account].map { "\($0)" } ?? "-"
                let label = item.attributes?[.label].map { "\($0)" } ?? "-"
                return "\(account)|\(label)|\(String(decoding: item.data ?? Data(), as: UTF8.self))"
            }.sorted()
        }
        let sqliteTally = try runAll("sqlite:\(db)")
        let postgresTally = try runAll("pg:\(ns)")
        #expect(sqliteTally == postgresTally)
        #expect(sqliteTally["ok"] == 4 * 30 + 30, "every own add and each shared item once: \(sqliteTally)")
        #expect(sqliteTally["dup"] == 3 * 30)
        let sqliteState = try state(sqlite)
        #expect(sqliteState.count == 4 * 30 + 30 - 4 * 6)
        #expect(try state(postgres) == sqliteState)
    }

    @Test("server stopped mid-run: notAvailable within the timeout; restarted: the same store works, nothing lost")
    func outage() throws {
        _ = try Server.url()
        // Its own server (another with-postgres.sh), so stopping it disturbs no other test.
        let script = packageRoot.appendingPathComponent("scripts/with-postgres.sh").path
        let worker = try builtExecutable("securestore-postgres-worker")
        let outcome = try run(script, [worker, "outage", "pg:outage", hex(randomKey()), "o", "20"],
                              removing: ["SECURESTORE_IN_POSTGRES", "SECURESTORE_TEST_POSTGRES_URL"])
        let lines = String(decoding: outcome.output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(outcome.status == 0, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("ok o-") }.count == 20, "\(lines)")
        #expect(lines.contains("server stop 0") && lines.contains("server start 0"), "\(lines)")
        for what in ["add", "get", "open"] {
            guard let line = lines.first(where: { $0.hasPrefix("down \(what) ") }) else {
                Issue.record("no outcome for \(what): \(lines)")
                continue
            }
            let parts = line.split(separator: " ", maxSplits: 4).map(String.init)
            #expect(parts[2] == "notAvailable", "\(line)")
            #expect((Int(parts[3]) ?? .max) < 7000, "within the 5 s connect timeout: \(line)")
            #expect(line.contains("127.0.0.1"), "names the host: \(line)")
        }
        #expect(lines.contains("up 20"), "\(lines)")
        #expect(lines.contains("final 21"), "\(lines)")
    }
}
