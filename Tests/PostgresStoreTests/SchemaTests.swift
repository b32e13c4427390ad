import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStorePostgres
@testable import SecureStoreCrypto

/// Schema 5 (numeric namespace ids, only the indexes a plan uses, the `mdat` column of record format 4) and the
/// upgrade to it from earlier versions.
@Suite("PostgreSQL schema", .requires(.postgres))
struct PostgresSchemaTests {
    /// A schema of its own (the tables of the test live there only) and the URL that uses it.
    static func freshSchema(_ prefix: String) throws -> (name: String, url: String) {
        let schema = "\(prefix)\(UInt64.random(in: 0...UInt64.max))"
        _ = try Server.psql(["-c", "CREATE SCHEMA \(schema)"])
        return (schema, try Server.url() + "?options=-csearch_path%3D\(schema)")
    }

    static func text(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The DDL of schema version 3 as SecureStore before schema 4 created it (PostgresBackend.ensureSchema at
    /// d7082d2), without the `secret` column for version 2 (and 1: the same tables).
    static func oldDDL(version: Int) -> String {
        """
        CREATE TABLE securestore_schema(version bigint NOT NULL);
        CREATE TABLE securestore_meta(
            namespace text NOT NULL, k text NOT NULL, v bytea NOT NULL, PRIMARY KEY (namespace, k));
        CREATE TABLE securestore_items(
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            namespace text NOT NULL, cls bigint NOT NULL,
            ref bytea NOT NULL, ukey bytea NOT NULL, svc bytea NOT NULL, acct bytea NOT NULL,
            blob bytea NOT NULL\(version >= 3 ? ", secret bytea" : ""),
            CONSTRAINT securestore_items_ukey UNIQUE (namespace, ukey),
            CONSTRAINT securestore_items_ref UNIQUE (namespace, ref));
        CREATE INDEX securestore_items_cls ON securestore_items(namespace, cls, id);
        CREATE INDEX securestore_items_svc ON securestore_items(namespace, svc, cls, id);
        CREATE INDEX securestore_items_acct ON securestore_items(namespace, acct, cls, id);
        INSERT INTO securestore_schema(version) VALUES (\(version));
        """
    }

    /// Makes `target` a database of schema `version` holding the rows of `source` (a database written by this
    /// code) as that schema held them: the namespace text in every row instead of its id, rows in the same
    /// order, every record re-sealed in record format 3 with its namespace's key from `keys` (what SecureStore
    /// wrote before record format 4), no `mdat` column. Version 2 takes the meta rows only.
    static func downgrade(_ source: String, sourceURL: String, into target: String, version: Int,
                          keys: [String: Data] = [:]) throws {
        var sql = "SET search_path = \(target); " + oldDDL(version: version)
        sql += """
            INSERT INTO securestore_meta(namespace, k, v)
                SELECT n.name, m.k, m.v FROM \(source).securestore_meta m JOIN \(source).securestore_namespaces n ON n.id = m.ns;
            """
        if version >= 3 {
            sql += """
                INSERT INTO securestore_items(namespace, cls, ref, ukey, svc, acct, blob, secret)
                    SELECT n.name, i.cls, i.ref, i.ukey, i.svc, i.acct, i.blob, i.secret
                    FROM \(source).securestore_items i JOIN \(source).securestore_namespaces n ON n.id = i.ns ORDER BY i.id;
                """
            sql += try format3Rows(sourceURL: sourceURL, keys: keys, namespaceColumn: "namespace", quote: { "'\($0)'" })
        }
        _ = try Server.psql(["-c", sql])
    }

    /// The statements that re-seal every row of the namespaces in `keys` (read through `sourceURL`) in record
    /// format 3, by reference index, in a table whose rows name their namespace in `namespaceColumn`.
    static func format3Rows(sourceURL: String, keys: [String: Data], namespaceColumn: String,
                            quote: (String) throws -> String) throws -> String {
        var sql = ""
        func x(_ bytes: [UInt8]) -> String { "'\\x" + hex(Data(bytes)) + "'::bytea" }
        for (ns, key) in keys.sorted(by: { $0.key < $1.key }) {
            let sealer = try RecordSealer.make(.raw(key), storedKDF: nil, cost: .minimum, creatingKeyFile: false)
            for record in try Server.store(namespace: ns, key: key, url: sourceURL).exportRecords() {
                let row = sealer.sealForTesting(record, format: 3)
                sql += "UPDATE securestore_items SET blob = \(x(row.blob ?? [])), secret = \(row.secret.map(x) ?? "NULL") "
                    + "WHERE \(namespaceColumn) = \(try quote(ns)) AND ref = \(x(row.ref));\n"
            }
        }
        return sql
    }

    /// What a store holds, in its order: class, service or server, account, label, secret.
    static func contents(_ store: PostgresStore) throws -> [String] {
        var out: [String] = []
        for cls in [ItemClass.genericPassword, .internetPassword] {
            for item in try store.items(matching: ItemQuery(cls, limit: .all, returning: [.attributes, .data])) {
                let a = item.attributes ?? [:]
                out.append("\(cls) \(a[.service] ?? a[.server] ?? .string("-")) \(a[.account] ?? .string("-")) "
                           + "\(a[.label] ?? .string("-")) \(hex(item.data ?? Data()))")
            }
        }
        return out
    }

    @Test("a version 3 database with items in two namespaces is upgraded to 5 once by four stores opening it at once; every item reads back, in order")
    func upgradeFrom3() throws {
        let (source, sourceURL) = try Self.freshSchema("src")
        let (target, targetURL) = try Self.freshSchema("old")
        let k1 = randomKey(), k2 = randomKey()
        var expected: [String: [String]] = [:]
        for (ns, key, count) in [("one", k1, 40), ("two", k2, 7)] {
            let store = try Server.store(namespace: ns, key: key, url: sourceURL)
            for i in 0..<count {
                try store.add(NewItem(.genericPassword, generic("svc\(i % 4)", "acct\(i)", [.label: .string("L\(i)")]),
                                      data: Data("secret \(ns) \(i)".utf8)), returning: [])
                if i % 5 == 0 {
                    try store.add(NewItem(.internetPassword, [.server: .string("host\(i).example"), .account: .string("u\(i)")],
                                          data: Data([UInt8(i), 0, 255])), returning: [])
                }
            }
            try store.delete(ItemQuery(.genericPassword, generic("svc1", "acct1")))
            expected[ns] = try Self.contents(store)
        }
        try Self.downgrade(source, sourceURL: sourceURL, into: target, version: 3, keys: ["one": k1, "two": k2])
        #expect(Self.text(try Server.psql(["-At", "-c", "SELECT count(*) FROM \(target).securestore_items"])) == "\(expected.values.map(\.count).reduce(0, +))")

        // Four stores open the version 3 database at once: one upgrades, the others wait for the schema lock.
        final class Outcomes: @unchecked Sendable {
            let lock = NSLock()
            var errors: [String] = []
            var stores: [PostgresStore] = []
        }
        let outcomes = Outcomes()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do throws(SecureStoreError) {
                let store = try Server.store(namespace: "one", key: k1, url: targetURL)
                outcomes.lock.withLock { outcomes.stores.append(store) }
            } catch {
                outcomes.lock.withLock { outcomes.errors.append("\(error)") }
            }
        }
        #expect(outcomes.errors.isEmpty, "\(outcomes.errors)")
        #expect(Self.text(try Server.psql(["-At", "-c", "SELECT string_agg(version::text, ',' ORDER BY version) FROM \(target).securestore_schema"])) == "3,5",
                "one upgrade")
        for store in outcomes.stores { #expect(try Self.contents(store) == expected["one"]) }
        let two = try Server.store(namespace: "two", key: k2, url: targetURL)
        #expect(try Self.contents(two) == expected["two"])
        // The id sequence goes on after the upgrade: a new item comes last.
        try two.add(NewItem(.genericPassword, generic("svc9", "last"), data: Data("new".utf8)), returning: [])
        let all = try two.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes))
        #expect(all.last?.attributes?[.account] == .string("last"))
        // The tables are schema 5's: the namespace's id in each row, and the indexes of a new database.
        let columns = Self.text(try Server.psql(["-At", "-c",
            "SELECT string_agg(column_name, ',' ORDER BY column_name) FROM information_schema.columns WHERE table_schema = '\(target)' AND table_name = 'securestore_items'"]))
        #expect(columns == "acct,blob,cls,id,mdat,ns,ref,secret,svc,ukey")
        func indexes(_ schema: String) throws -> String {
            Self.text(try Server.psql(["-At", "-c",
                "SELECT string_agg(tablename || ':' || regexp_replace(indexdef, '^.* USING ', ''), ';' ORDER BY tablename, indexname) FROM pg_indexes WHERE schemaname = '\(schema)'"]))
        }
        #expect(try indexes(target) == indexes(source), "the upgraded tables have a new database's indexes")
        #expect(Self.text(try Server.psql(["-At", "-c", "SELECT string_agg(name, ',' ORDER BY id) FROM \(target).securestore_namespaces"])) == "one,two")
    }

    @Test("a version 2 database (no secret column) is upgraded to 5 on first use; an older SecureStore refuses a version 5 database as newer")
    func upgradeFrom2() throws {
        let (source, sourceURL) = try Self.freshSchema("src")
        let (target, targetURL) = try Self.freshSchema("old")
        let key = randomKey()
        _ = try Server.store(namespace: "ns", key: key, url: sourceURL)
        try Self.downgrade(source, sourceURL: sourceURL, into: target, version: 2)
        let store = try Server.store(namespace: "ns", key: key, url: targetURL)
        try store.add(NewItem(.genericPassword, generic("s", "v"), data: Data("x".utf8)))
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("s", "v"), returning: .data))?.data == Data("x".utf8))
        #expect(Self.text(try Server.psql(["-At", "-c", "SELECT max(version) FROM \(target).securestore_schema"])) == "5")
        #expect(Self.text(try Server.psql(["-At", "-c", "SELECT count(secret) FROM \(target).securestore_items"])) == "1")
        // The check a version 3 SecureStore runs on the version it finds.
        let older = failure { () throws(SecureStoreError) in
            try SealedTableLayout.checkSchemaVersion(PostgresBackend.schemaVersion, supported: 4, place: "database")
        }
        #expect(older?.code == .notAvailable && older?.message.contains("newer") == true)
    }

    @Test("a version 4 database (format 3 rows, no mdat column) is upgraded to 5 on first use; its rows read as they are and each becomes format 4 when written")
    func upgradeFrom4() throws {
        let (source, sourceURL) = try Self.freshSchema("src")
        let (target, targetURL) = try Self.freshSchema("old")
        let key = randomKey()
        let writer = try Server.store(namespace: "ns", key: key, url: sourceURL)
        for i in 0..<6 {
            try writer.add(NewItem(.genericPassword, generic("s", "a\(i)"), data: i == 5 ? nil : Data("x\(i)".utf8)),
                           returning: [])
        }
        let expected = try Self.contents(writer)
        // Schema 4's tables (this schema's without `mdat`), the rows copied and sealed in record format 3.
        let ddl4 = PostgresBackend.schemaDDL.replacingOccurrences(of: "secret bytea, mdat bytea,", with: "secret bytea,")
        #expect(ddl4 != PostgresBackend.schemaDDL)
        _ = try Server.psql(["-c", "SET search_path = \(target); " + ddl4 + """
            INSERT INTO securestore_schema(version) VALUES (4);
            INSERT INTO securestore_namespaces(name) SELECT name FROM \(source).securestore_namespaces ORDER BY id;
            INSERT INTO securestore_meta(ns, k, v) SELECT ns, k, v FROM \(source).securestore_meta;
            INSERT INTO securestore_items(ns, cls, ref, ukey, svc, acct, blob, secret)
                SELECT ns, cls, ref, ukey, svc, acct, blob, secret FROM \(source).securestore_items ORDER BY id;
            """ + (try Self.format3Rows(sourceURL: sourceURL, keys: ["ns": key], namespaceColumn: "ns",
                                        quote: { "(SELECT id FROM securestore_namespaces WHERE name = '\($0)')" }))])
        let store = try Server.store(namespace: "ns", key: key, url: targetURL)
        #expect(Self.text(try Server.psql(["-At", "-c", "SELECT string_agg(version::text, ',' ORDER BY version) FROM \(target).securestore_schema"])) == "4,5")
        // A format 4 row's secret part holds the reference and a trailer besides the secret: at least 21 more
        // bytes than format 3's sealed secret of these 1- and 2-byte secrets (40 + secret), and one for the item
        // without a secret (NULL in format 3).
        func dated() throws -> String {
            Self.text(try Server.psql(["-At", "-c", "SELECT count(*) FROM \(target).securestore_items WHERE length(secret) >= 61"]))
        }
        #expect(try dated() == "0", "rows stay as they are until written")
        #expect(try Self.contents(store) == expected)
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("s", "a1"), returning: .data))?.data == Data("x1".utf8))
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("s", "a5"), returning: .data)) != nil)
        // Written rows become format 4: an update, a new item.
        try store.update(ItemQuery(.genericPassword, generic("s", "a2")), with: ItemChanges(data: Data("y2".utf8)))
        try store.add(NewItem(.genericPassword, generic("s", "new"), data: Data("n".utf8)), returning: [])
        #expect(try dated() == "2")
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("s", "a2"), returning: .data))?.data == Data("y2".utf8))
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("s", "a3"), returning: .data))?.data == Data("x3".utf8))
        #expect(try Self.contents(store).count == expected.count + 1)
        // A rekey re-seals every row: all format 4.
        try store.rekey(to: .raw(randomKey()))
        #expect(try dated() == "7")
    }

    @Test("EXPLAIN: every lookup, find, update and delete the backend sends uses an index on a filled namespace (custom and generic plans), no sequential scan of the items; every index of the items is used by a plan")
    func plansUseIndexes() throws {
        let (schema, url) = try Self.freshSchema("plan")
        let store = try Server.store(namespace: "filled", key: randomKey(), url: url)
        for i in 0..<400 {
            try store.add(NewItem(.genericPassword, generic("svc\(i % 20)", "acct\(i)"), data: Data("s\(i)".utf8)), returning: [])
            if i % 4 == 0 {
                try store.add(NewItem(.internetPassword, [.server: .string("h\(i)"), .account: .string("a\(i)")],
                                      data: Data("i\(i)".utf8)), returning: [])
            }
        }
        // Other namespaces share the table (a database of many stores): 100 of 300 rows each.
        _ = try Server.psql(["-c", """
            SET search_path = \(schema);
            INSERT INTO securestore_namespaces(name) SELECT 'other-' || g FROM generate_series(1, 100) g;
            INSERT INTO securestore_items(ns, cls, ref, ukey, svc, acct, blob)
                SELECT n.id, 1 + g % 5, sha256(('r' || n.id || '-' || g)::bytea), sha256(('u' || n.id || '-' || g)::bytea),
                       sha256(('s' || n.id || '-' || (g % 20))::bytea), sha256(('a' || n.id || '-' || g)::bytea), '\\x00'::bytea
                FROM securestore_namespaces n, generate_series(1, 300) g WHERE n.name LIKE 'other-%';
            ANALYZE securestore_items; ANALYZE securestore_meta; ANALYZE securestore_namespaces;
            """])
        let backend = store.backend
        let ns = "\(backend.namespaceID)"
        let sample = Self.text(try Server.psql(["-At", "-F", " ", "-c",
            "SELECT encode(ref, 'hex'), encode(ukey, 'hex'), encode(svc, 'hex'), encode(acct, 'hex'), cls, id FROM \(schema).securestore_items WHERE ns = \(ns) AND cls = 1 ORDER BY id OFFSET 200 LIMIT 1"]))
            .split(separator: " ").map(String.init)
        try #require(sample.count == 6)
        let (ref, ukey, svc, acct, cls, id) = ("'\\x\(sample[0])'", "'\\x\(sample[1])'", "'\\x\(sample[2])'", "'\\x\(sample[3])'", sample[4], sample[5])
        let l = backend.layout
        let blob = "'\\x01'"
        // Each statement as the backend prepares it: its SQL, the parameter types libpq sends, a value each, and
        // the index its plan must use ("any": some index of the items, as the planner prefers; "": none asked,
        // the statement reads only the namespace's meta rows, a table of a few rows per namespace).
        let statements: [(name: String, sql: String, types: String, values: String, index: String)] = [
            ("lookup by unique key", l.selectByKeys(1), "bigint, bytea", "\(ns), \(ukey)", "securestore_items_ukey"),
            ("data lookup by unique key (the secret part only)", try #require(l.selectSecretByKey), "bigint, bytea",
             "\(ns), \(ukey)", "securestore_items_ukey"),
            ("find by reference", l.selectByRef, "bigint, bytea", "\(ns), \(ref)", "securestore_items_ref"),
            ("find by class and service", l.selectByClassService, "bigint, bytea, bigint", "\(ns), \(svc), \(cls)", "securestore_items_svc"),
            ("find by class and account", l.selectByClassAccount, "bigint, bytea, bigint", "\(ns), \(acct), \(cls)", "securestore_items_acct"),
            ("find by class, service and account", l.selectByClassServiceAccount, "bigint, bytea, bytea, bigint",
             "\(ns), \(svc), \(acct), \(cls)", "any"),
            ("find by class", l.selectByClass, "bigint, bigint", "\(ns), 2", "any"),
            ("find all", l.selectAll, "bigint", ns, "securestore_items_pkey"),
            ("update", l.updateAll, "bigint, bigint, bytea, bytea, bytea, bytea, bytea, bytea, bytea",
             "\(ns), \(cls), \(ukey), \(svc), \(acct), \(blob), \(blob), \(blob), \(ref)", "securestore_items_ref"),
            ("update of the secret and date (a row found, by id)", l.updateParts[2], "bigint, bytea, bytea, bigint",
             "\(ns), \(blob), \(blob), \(id)", "securestore_items_pkey"),
            ("update of the record (by id)", l.updateParts[1], "bigint, bytea, bytea, bigint",
             "\(ns), \(blob), \(blob), \(id)", "securestore_items_pkey"),
            ("update of record and secret (by id)", l.updateParts[3], "bigint, bytea, bytea, bytea, bigint",
             "\(ns), \(blob), \(blob), \(blob), \(id)", "securestore_items_pkey"),
            ("update of the date (by id)", l.updateParts[0], "bigint, bytea, bigint", "\(ns), \(blob), \(id)", "securestore_items_pkey"),
            ("rekey's update by id", l.updateRow, "bigint, bytea, bytea, bytea, bytea, bytea, bytea, bytea, bigint",
             "\(ns), \(ref), \(ukey), \(svc), \(acct), \(blob), \(blob), \(blob), \(id)", "securestore_items_pkey"),
            ("delete by reference", l.deleteByRef, "bigint, bytea", "\(ns), \(ref)", "securestore_items_ref"),
            ("delete of a row found (by id)", l.deleteById, "bigint, bigint", "\(ns), \(id)", "securestore_items_pkey"),
            ("delete a class", l.deleteByClass, "bigint, bigint", "\(ns), 2", "any"),
            ("delete all", l.deleteEverything, "bigint", ns, "securestore_items_pkey"),
            ("key epoch", l.selectCheck, "bigint", ns, ""),
            ("add (guarded insert)", PostgresExecutor.guardedInsert,
             "bigint, bigint, bytea, bytea, bytea, bytea, bytea, bytea, bytea, bytea",
             "\(ns), 1, '\\x02', '\\x03', \(svc), \(acct), \(blob), \(blob), \(blob), \(blob)", ""),
        ]
        var used = Set<String>()
        for statement in statements {
            for mode in ["force_custom_plan", "force_generic_plan"] {
                let plan = String(decoding: try Server.psql(["-At", "-c", """
                    SET search_path = \(schema); SET plan_cache_mode = \(mode);
                    PREPARE s(\(statement.types)) AS \(statement.sql);
                    EXPLAIN (COSTS OFF) EXECUTE s(\(statement.values));
                    """]), as: UTF8.self)
                if statement.sql == PostgresExecutor.guardedInsert {
                    #expect(plan.contains("Conflict Arbiter Indexes: securestore_items_ukey\n"), "\(mode): \(plan)")
                }
                if statement.index == "any" {
                    #expect(plan.contains("Index Scan on securestore_items_") || plan.contains("Index Scan using securestore_items_"),
                            "\(statement.name), \(mode): \(plan)")
                } else if !statement.index.isEmpty {
                    #expect(plan.contains(statement.index), "\(statement.name), \(mode): \(plan)")
                }
                #expect(!plan.contains("Seq Scan on securestore_items"), "\(statement.name), \(mode): \(plan)")
                for name in ["securestore_items_pkey", "securestore_items_ukey", "securestore_items_ref",
                             "securestore_items_svc", "securestore_items_acct"] where plan.contains(name) {
                    used.insert(name)
                }
            }
        }
        let indexes = Self.text(try Server.psql(["-At", "-c",
            "SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = '\(schema)' AND tablename = 'securestore_items'"]))
        #expect(indexes == used.sorted().joined(separator: ","), "every index of the items is one a plan uses")
    }

    @Test("stored rows are read in place in libpq's result as strictly as through row values: the same columns, the same errors for a row of another shape")
    func recordRowsInPlace() throws {
        let store = try Server.store(namespace: Server.freshNamespace("rows"), key: randomKey())
        let backend = store.backend
        struct Read: Equatable {
            var id: Int64, cls: Int64, ref: [UInt8], ukey: [UInt8], blob: [UInt8], secret: [UInt8]?, mdat: [UInt8]?
        }
        func read(_ columns: String, inPlace: Bool) -> Result<[Read], SecureStoreError> {
            Result { () throws(SecureStoreError) -> [Read] in
                var rows: [Read] = []
                try backend.forEachRecordRowForTesting("SELECT \(columns)", inPlace: inPlace) { row in
                    rows.append(Read(id: row.id, cls: row.cls, ref: Array(row.ref), ukey: Array(row.ukey), blob: Array(row.blob),
                                     secret: row.secret.map { Array($0) }, mdat: row.mdat.map { Array($0) }))
                }
                return rows
            }
        }
        let b = "'\\x0102'::bytea"
        let cases: [(columns: String, expected: Result<[Read], SecureStoreError>?)] = [
            ("7::bigint, 1::bigint, \(b), '\\x03'::bytea, ''::bytea, NULL::bytea, '\\x04'::bytea",
             .success([Read(id: 7, cls: 1, ref: [1, 2], ukey: [3], blob: [], secret: nil, mdat: [4])])),
            ("(-2)::int2, 5::int4, \(b), \(b), \(b), \(b), NULL::bytea",
             .success([Read(id: -2, cls: 5, ref: [1, 2], ukey: [1, 2], blob: [1, 2], secret: [1, 2], mdat: nil)])),
            ("* FROM (SELECT 1::bigint, 1::bigint, \(b), \(b), \(b), NULL::bytea, NULL::bytea) t WHERE false", .success([])),
            // Damage: the row's shape, or a secret or date that is not bytes.
            ("7::bigint, 1::bigint, 'text'::text, \(b), \(b), NULL::bytea, NULL::bytea", nil),
            ("7::bigint, 1::bigint, NULL::bytea, \(b), \(b), NULL::bytea, NULL::bytea", nil),
            ("NULL::bigint, 1::bigint, \(b), \(b), \(b), NULL::bytea, NULL::bytea", nil),
            ("7::bigint, 1::bigint, \(b), \(b), \(b), NULL::bytea", nil),
            ("7::bigint, 1::bigint, \(b), \(b), \(b), 'x'::text, NULL::bytea", nil),
            ("7::bigint, 1::bigint, \(b), \(b), \(b), NULL::bytea, 'x'::text", nil),
        ]
        for (columns, expected) in cases {
            let inPlace = read(columns, inPlace: true), throughValues = read(columns, inPlace: false)
            switch (inPlace, throughValues) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "\(columns)")
                if case .success(let rows)? = expected { #expect(a == rows, "\(columns)") } else { Issue.record("\(columns): read as \(a)") }
            case (.failure(let a), .failure(let b)):
                #expect(expected == nil, "\(columns): \(a)")
                #expect(a.code == .decode && a.code == b.code && a.message == b.message, "\(columns): \(a) / \(b)")
            default:
                Issue.record("\(columns): in place \(inPlace), through values \(throughValues)")
            }
        }
        // The store still works on the same connections afterwards.
        try store.add(NewItem(.genericPassword, generic("rows", "a"), data: Data("one".utf8)), returning: [])
        #expect(try store.item(matching: ItemQuery(.genericPassword, generic("rows", "a"), returning: .data))?.data == Data("one".utf8))
    }
}
