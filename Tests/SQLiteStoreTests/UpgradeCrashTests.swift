import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite
import SecureStoreCrypto
import CSQLite

@Suite("SQLite schema upgrade under kill -9")
struct UpgradeCrashTests {
    /// The committed fixtures' key (the bytes 0x01…0x20, as their key files hold).
    static let fixtureKey = Data(1...32)

    @Test("a writer killed at random moments while it upgrades a schema 2, 3 or 4 store leaves a readable store of that schema or a complete schema 5 one",
          arguments: [2, 3, 4] as [Int64])
    func killedUpgrade(from schema: Int64) throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let template = s.path("template.db")
        try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent("v\(schema).db").path, toPath: template)
        chmod(template, 0o600)
        // The fixture's items plus enough rows of its schema that the upgrade takes a while to kill it in.
        let bulk = 2_000
        let current = SQLiteBackend.schemaVersion
        let fixture = try SQLiteStore(path: template, key: .raw(Self.fixtureKey), readOnly: true).exportRecords()
        let alice = try #require(fixture.first { $0.attributes[.account]?.text == "alice" })
        let sealer = try RecordSealer.make(.raw(Self.fixtureKey), storedKDF: nil, cost: .interactive, creatingKeyFile: false)
        var sql = "BEGIN;"
        for i in 0..<bulk {
            var attributes = alice.attributes
            attributes[.account] = .string("bulk-\(i)")
            let record = ItemRecord(persistentRef: .random(), itemClass: .genericPassword, attributes: attributes,
                                    data: Data("secret-\(i)".utf8))
            let row = schema == 4 ? sealer.seal(record) : sealer.sealForTesting(record, format: UInt8(schema))
            func x(_ b: [UInt8]) -> String { "X'" + hex(Data(b)) + "'" }
            sql += "INSERT INTO items(cls, ref, ukey, svc, acct, blob\(schema >= 3 ? ", secret" : "")) VALUES (\(row.cls), "
                + "\(x(row.ref)), \(x(row.ukey)), \(x(row.svc)), \(x(row.acct)), \(x(row.blob ?? []))"
                + (schema >= 3 ? ", \(x(row.secret ?? []))" : "") + ");"
        }
        do {
            let raw = RawDB(template)
            #expect(raw.exec(sql + "COMMIT; PRAGMA wal_checkpoint(TRUNCATE);") == SQLITE_OK)
        }
        #expect(userVersion(template) == schema)
        let fixtureNames = schema == 2 ? ["alice", "empty", "bob", "carol", "k"]
            : ["alice", "empty", "bob", "carol", "cert", "k", "identity"]

        /// Every item of the file, with the right secret, in insertion order; the schema version.
        func expectIntact(_ path: String, _ stage: String) throws {
            let records = try SQLiteStore(path: path, key: .raw(Self.fixtureKey), readOnly: true).exportRecords()
            let names = records.map { $0.attributes[.account]?.text ?? $0.attributes[.label]?.text ?? "?" }
            #expect(Array(names.prefix(fixture.count + bulk))
                    == fixtureNames + (0..<bulk).map { "bulk-\($0)" }, "\(stage): items in order")
            for (i, record) in records.filter({ $0.attributes[.account]?.text?.hasPrefix("bulk-") == true }).enumerated() {
                #expect(record.attributes[.account]?.text == "bulk-\(i)", "\(stage): order")
                #expect(record.data == Data("secret-\(i)".utf8), "\(stage): secret of bulk-\(i)")
            }
            #expect(try secret(SQLiteStore(path: path, key: .raw(Self.fixtureKey), readOnly: true), "fixture.none", "bob")
                    == nil, "\(stage): no secret stays none")
        }

        // How long one undisturbed upgrade takes here (from the store being open to the add's answer).
        let calibration = s.path("calibration.db")
        try FileManager.default.copyItem(atPath: template, toPath: calibration)
        let calibrating = try Worker(["write", calibration, hex(Self.fixtureKey), "calibrated"])
        var lines = Self.waitUntilOpened(calibrating)
        let started = Date()
        lines += calibrating.finish()
        let window = Date().timeIntervalSince(started)
        #expect(lines.last == "ok calibrated", "\(lines)")
        #expect(window < 30, "the undisturbed upgrade took \(window) s")
        #expect(userVersion(calibration) == current)
        try expectIntact(calibration, "undisturbed")

        var outcomes: [Int64: Int] = [:]
        for round in 0..<10 {
            let path = s.path("round\(round).db")
            try FileManager.default.copyItem(atPath: template, toPath: path)
            let worker = try Worker(["write", path, hex(Self.fixtureKey), "r\(round)"])
            var said = Self.waitUntilOpened(worker)
            // Anywhere in the upgrade, and in a fifth of the rounds after its commit (the worker may have answered
            // and exited: its acknowledged write must then be there).
            usleep(UInt32(Double.random(in: 0...(window * 1.25)) * 1_000_000))
            kill(worker.process.processIdentifier, SIGKILL)
            said += worker.finish()
            #expect(!said.contains { $0.hasPrefix("err") }, "\(said)")
            #expect(RawDB(path).text("PRAGMA integrity_check") == "ok", "round \(round)")
            let version = userVersion(path) ?? 0
            outcomes[version, default: 0] += 1
            let columns = RawDB(path).text("SELECT group_concat(name, ',') FROM pragma_table_info('items')")
            switch version {
            case schema:
                #expect(columns.contains("mdat") == (schema == 4) && columns.contains("secret") == (schema >= 3)
                        && Self.indexes(path) == Self.indexes(template), "round \(round): a schema \(schema) file without schema 5 parts")
            case current:
                #expect(columns.hasSuffix(",secret,mdat") && Self.indexes(path) == "items_ref,items_svc_acct,items_ukey", "round \(round)")
            default: Issue.record("round \(round): schema \(version) after the kill")
            }
            // An acknowledged write is there (and then the file is of the current schema).
            if said.contains("ok r\(round)") {
                #expect(version == current)
                #expect(try secret(SQLiteStore(path: path, key: .raw(Self.fixtureKey), readOnly: true), "worker", "r\(round)")
                        == Data("r\(round)".utf8))
            }
            try expectIntact(path, "round \(round), schema \(version)")
            // Whatever state it was left in, the next write completes the upgrade.
            try SQLiteStore(path: path, key: .raw(Self.fixtureKey))
                .add(NewItem(.genericPassword, generic("after", "r\(round)"), data: Data("a".utf8)))
            #expect(userVersion(path) == current)
            try expectIntact(path, "round \(round), written again")
        }
        // Not asserted (a kill's moment is random), but printed: how many rounds ended in each schema.
        print("killed upgrades from schema \(schema) ended as schema \(schema): \(outcomes[schema] ?? 0), "
            + "schema \(current): \(outcomes[current] ?? 0)")
    }

    /// The names of the items table's indexes.
    private static func indexes(_ path: String) -> String {
        RawDB(path).text("SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_list('items') ORDER BY name)")
    }

    /// The worker's lines up to and including "opened" (all of them if it ends first).
    private static func waitUntilOpened(_ worker: Worker) -> [String] {
        var text = ""
        while !text.contains("opened\n") {
            let chunk = worker.pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text.split(separator: "\n").map(String.init)
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
}
