import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite
import SecureStoreCrypto

/// The key epoch: a store re-keyed by another process or store object makes a stale writer fail before it
/// writes a row, so nothing acknowledged is ever unreadable under the new key.
@Suite("SQLite key epoch")
struct KeyEpochTests {
    @Test("a store object opened before another object's rekey: writes fail with authFailed (re-keyed) and write nothing; reads fail clearly or work; reopening with the new key works")
    func staleObject() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let old = randomKey(), new = randomKey()
        let stale = try SQLiteStore(path: s.db, key: .raw(old))
        try stale.add(NewItem(.genericPassword, generic("svc", "before"), data: Data("b".utf8)))
        let rotator = try SQLiteStore(path: s.db, key: .raw(old))
        try rotator.rekey(to: .raw(new))

        let writes: [(String, () throws(SecureStoreError) -> Void)] = [
            ("add", { () throws(SecureStoreError) in
                try stale.add(NewItem(.genericPassword, generic("svc", "after"), data: Data("a".utf8))) }),
            ("update", { () throws(SecureStoreError) in
                try stale.update(ItemQuery(.genericPassword, generic("svc", "before")), with: ItemChanges(data: Data("x".utf8))) }),
            ("delete", { () throws(SecureStoreError) in try stale.delete(ItemQuery(.genericPassword, generic("svc", "before"))) }),
            ("clear", { () throws(SecureStoreError) in try stale.clear([.genericPassword]) }),
            ("rekey", { () throws(SecureStoreError) in try stale.rekey(to: .raw(randomKey())) }),
        ]
        for (name, write) in writes {
            let e = failure(write)
            #expect(e?.code == .authFailed, "\(name): \(String(describing: e))")
            #expect(e?.status == -25293)
            #expect(e?.message.contains("re-keyed") == true, "\(name): \(String(describing: e))")
            #expect(e?.message.contains("Open the store again") == true, "\(name): \(String(describing: e))")
        }
        // A read either fails the same clear way or returns the right secret: never garbage, never "not found".
        let read = Result { () throws(SecureStoreError) in try secret(stale, "svc", "before") }
        switch read {
        case .success(let data): #expect(data == Data("b".utf8))
        case .failure(let e):
            #expect(e.code == .authFailed, "\(e)")
            #expect(e.message.contains("re-keyed"), "\(e)")
        }
        let list = Result { () throws(SecureStoreError) in try stale.items(matching: ItemQuery(.genericPassword, limit: .all)) }
        if case .failure(let e) = list { #expect(e.code == .authFailed, "\(e)") }

        // The object that re-keyed keeps working (its epoch moved with it).
        try rotator.add(NewItem(.genericPassword, generic("svc", "rotator"), data: Data("r".utf8)))
        let reopened = try SQLiteStore(path: s.db, key: .raw(new))
        let accounts = try reopened.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes))
            .compactMap { $0.attributes?[.account]?.text }.sorted()
        #expect(accounts == ["before", "rotator"], "nothing of the stale writes landed")
        #expect(try secret(reopened, "svc", "before") == Data("b".utf8))
        let oldKey = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(old)) }
        #expect(oldKey?.code == .authFailed)
    }

    @Test("a writer reads the stored key epoch again only after another connection committed: its own writes and reads don't make it; another object's write does (and lands); a failed write does; another object's rekey does, and the write fails authFailed")
    func epochReadOnlyAfterOthersCommit() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        let store = try SQLiteStore(path: s.db, key: .raw(key))
        func item(_ account: String) -> NewItem { NewItem(.genericPassword, generic("svc", account), data: Data(account.utf8)) }
        for i in 0..<5 { try store.add(item("own\(i)")) }
        try store.update(ItemQuery(.genericPassword, generic("svc", "own0")), with: ItemChanges(data: Data("u".utf8)))
        try store.delete(ItemQuery(.genericPassword, generic("svc", "own1")))
        #expect(try secret(store, "svc", "own2") == Data("own2".utf8))
        #expect(store.backend.epochReadsForTesting == 1, "seven writes of its own: the first reads the epoch")

        let other = try SQLiteStore(path: s.db, key: .raw(key))
        try other.add(item("other"))
        try store.add(item("after-other"))
        try store.add(item("after-other-2"))
        #expect(store.backend.epochReadsForTesting == 2, "another object's commit: the next write reads it, once")

        #expect(failure { () throws(SecureStoreError) in try store.add(item("own3")) }?.code == .duplicateItem)
        try store.add(item("after-failure"))
        #expect(store.backend.epochReadsForTesting == 3, "a rolled-back write: the next one reads it again")

        try other.rekey(to: .raw(randomKey()))
        let stale = failure { () throws(SecureStoreError) in try store.add(item("after-rekey")) }
        #expect(stale?.code == .authFailed, "\(String(describing: stale))")
        #expect(store.backend.epochReadsForTesting == 4)
        let accounts = try other.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes))
            .compactMap { $0.attributes?[.account]?.text }
        #expect(!accounts.contains("after-rekey"))
        #expect(accounts.count == 8)
    }

    @Test("six processes adding while the store is re-keyed by this process: every acknowledged add is readable with the new key")
    func rekeyUnderLoadLibrary() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let old = randomKey(), new = randomKey()
        _ = try SQLiteStore(path: s.db, key: .raw(old))
        let workers = try Self.startWorkers(s, key: old)
        Self.waitForRows(s.db, atLeast: 60)
        let store = try SQLiteStore(path: s.db, key: .raw(old))
        try store.rekey(to: .raw(new))
        try Self.checkAcknowledged(s, workers, key: new)
    }

    @Test("six processes adding while `securestore rekey --new-key-file` runs: every acknowledged add is readable with the new key; find and export exit 0")
    func rekeyUnderLoadCLI() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let cli = try builtExecutable("securestore")
        let old = randomKey()
        let oldKeyFile = s.path("old.key"), newKeyFile = s.path("new.key")
        #expect(FileManager.default.createFile(atPath: oldKeyFile, contents: old, attributes: [.posixPermissions: 0o600]))
        func config(_ name: String, keyFile: String) throws -> [String: String] {
            let file = s.path(name)
            try Data(#"{"backend": "sqlite", "sqlite": {"path": "\#(s.db)", "keyFile": "\#(keyFile)"}}"#.utf8)
                .write(to: URL(fileURLWithPath: file))
            var env = ProcessInfo.processInfo.environment
            env["SECURESTORE_CONFIG"] = file
            env["SECURESTORE_BACKEND"] = nil
            env["SECURESTORE_EXPORT_PASSPHRASE"] = "export passphrase"
            return env
        }
        let before = try config("old.json", keyFile: oldKeyFile), after = try config("new.json", keyFile: newKeyFile)
        _ = try SQLiteStore(path: s.db, key: .keyFile(oldKeyFile))
        let workers = try Self.startWorkers(s, key: old)
        Self.waitForRows(s.db, atLeast: 60)
        let rekey = spawn(cli, ["rekey", "--new-key-file", newKeyFile], environment: before, stdout: s.path("rekey.out"))
        #expect(rekey.map { reap($0, timeout: .seconds(120)) } == 0)
        let new = try #require(FileManager.default.contents(atPath: newKeyFile))
        try Self.checkAcknowledged(s, workers, key: new)
        let find = spawn(cli, ["find", "--service", "worker"], environment: after, stdout: s.path("find.out"))
        #expect(find.map { reap($0, timeout: .seconds(120)) } == 0)
        let export = spawn(cli, ["export", "--output", s.path("export.db")], environment: after, stdout: s.path("export.out"))
        #expect(export.map { reap($0, timeout: .seconds(120)) } == 0)
        let exported = try SQLiteStore(path: s.path("export.db"), key: .passphrase("export passphrase"), readOnly: true)
        let all = try Self.acknowledged(s)
        let exportedCount = try exported.exportRecords().count
        #expect(exportedCount == all.count, "export holds \(exportedCount), acknowledged \(all.count)")
    }

    // MARK: Helpers

    static let workerCount = 6
    static let addsPerWorker = 150

    /// Six worker processes adding `w<i>-0…` to the store; their output goes to files in the scratch folder.
    static func startWorkers(_ s: Scratch, key: Data) throws -> [pid_t] {
        let worker = try builtExecutable("securestore-sqlite-worker")
        return try (0..<workerCount).map { i throws -> pid_t in
            guard let pid = spawn(worker, ["add", s.db, hex(key), "w\(i)", "0", "\(addsPerWorker)"],
                                  environment: ProcessInfo.processInfo.environment, stdout: s.path("worker\(i).out"))
            else { throw SecureStoreError(.io, "could not start a worker") }
            return pid
        }
    }

    /// Waits (bounded) until the store holds `count` rows, so the rekey lands while the workers are adding.
    static func waitForRows(_ path: String, atLeast count: Int) {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if RawDB(path).integer("SELECT count(*) FROM items") >= count { return }
            usleep(20_000)
        }
    }

    /// Every name a worker acknowledged ("ok NAME"); checks that every other line is an authFailed refusal.
    static func acknowledged(_ s: Scratch) throws -> [String] {
        var names: [String] = []
        for i in 0..<workerCount {
            let text = String(decoding: FileManager.default.contents(atPath: s.path("worker\(i).out")) ?? Data(), as: UTF8.self)
            for line in text.split(separator: "\n") {
                if line.hasPrefix("ok ") {
                    names.append(String(line.dropFirst(3)))
                } else {
                    // A worker that added after the rekey (or opened after it) is refused, clearly.
                    #expect(line.contains("authFailed") || line.contains("-25293"), "\(line)")
                    #expect(line.contains("re-keyed") || line.contains("does not open"), "\(line)")
                }
            }
        }
        return names
    }

    /// Waits for the workers; every acknowledged add is readable with `key`, and the store holds nothing else.
    static func checkAcknowledged(_ s: Scratch, _ workers: [pid_t], key: Data) throws {
        for pid in workers { #expect(reap(pid, timeout: .seconds(240)) >= 0) }
        let names = try acknowledged(s)
        let store = try SQLiteStore(path: s.db, key: .raw(key))
        var unreadable: [String] = []
        for name in names {
            let got = Result { () throws(SecureStoreError) in try secret(store, "worker", name) }
            if case .success(let data) = got, data == Data(name.utf8) { continue }
            unreadable.append(name)
        }
        #expect(unreadable.isEmpty, "acknowledged but unreadable under the new key: \(unreadable.prefix(10))")
        let all = try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes))
        #expect(all.count == names.count, "every stored item was acknowledged, every acknowledged one is stored")
        print("[rekey under load] \(names.count) of \(workerCount * addsPerWorker) adds acknowledged before the rekey stopped the rest")
    }
}
