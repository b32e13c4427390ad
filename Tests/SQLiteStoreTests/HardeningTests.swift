import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite
import SecureStoreCrypto
import CSQLite

/// The bytes of a store file and its -wal (what "unchanged" means for a WAL-mode database).
func fileState(_ path: String) -> [Data?] {
    [FileManager.default.contents(atPath: path), FileManager.default.contents(atPath: path + "-wal")]
}

@Suite("SQLite store on bad days")
struct HardeningTests {
    @Test("a full disk: errSecIO on the failing call with a clear message; earlier items readable; the file stays consistent")
    func diskFull() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        for i in 0..<5 { try store.add(NewItem(.genericPassword, generic("svc", "a\(i)"), data: Data("v\(i)".utf8))) }
        try store.backend.limitPagesForTesting(1)   // as large as the file is now: the next growth fails
        let big = Data(repeating: 7, count: 200_000)
        let add = failure { () throws(SecureStoreError) in
            for i in 0..<50 { try store.add(NewItem(.genericPassword, generic("big", "b\(i)"), data: big)) }
        }
        #expect(add?.code == .io, "\(String(describing: add))")
        #expect(add?.status == -36)
        #expect(add?.message.contains("disk is full") == true, "\(String(describing: add))")
        let update = failure { () throws(SecureStoreError) in
            try store.update(ItemQuery(.genericPassword, generic("svc", "a0")), with: ItemChanges(data: big))
        }
        #expect(update?.code == .io)
        for i in 0..<5 { #expect(try secret(store, "svc", "a\(i)") == Data("v\(i)".utf8)) }
        #expect(RawDB(s.db).text("PRAGMA integrity_check") == "ok")
        // Room again: the store works as before.
        try store.backend.limitPagesForTesting(1 << 30)
        try store.add(NewItem(.genericPassword, generic("after", "x"), data: big))
        #expect(try secret(store, "after", "x") == big)
    }

    @Test("a really full filesystem (a 2 MiB tmpfs): errSecIO, earlier items readable, the file consistent, works again after space is freed")
    func fullFilesystem() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let mountPoint = s.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mountPoint]) == 0 else {
            print("[full filesystem] skipped: this machine does not allow mount; diskFull covers SQLITE_FULL")
            return
        }
        defer { _ = run("/bin/umount", ["-l", mountPoint]) }
        let path = mountPoint + "/store.db"
        let key = randomKey()
        do {
            let store = try SQLiteStore(path: path, key: .raw(key))
            for i in 0..<5 { try store.add(NewItem(.genericPassword, generic("svc", "a\(i)"), data: Data("v\(i)".utf8))) }
            let big = Data(repeating: 9, count: 300_000)
            var failed: SecureStoreError?
            for i in 0..<20 {
                if let e = failure({ () throws(SecureStoreError) in
                    try store.add(NewItem(.genericPassword, generic("big", "b\(i)"), data: big))
                }) {
                    failed = e
                    break
                }
            }
            #expect(failed?.code == .io, "\(String(describing: failed))")
            #expect(failed?.message.contains("disk is full") == true, "\(String(describing: failed))")
            for i in 0..<5 { #expect(try secret(store, "svc", "a\(i)") == Data("v\(i)".utf8)) }
            // Free the space the big items took; the store works again.
            if let e = failure({ () throws(SecureStoreError) in try store.delete(ItemQuery(.genericPassword, [.service: "big"])) }) {
                #expect(e.code == .itemNotFound || e.code == .io, "\(e)")
            }
        }
        #expect(RawDB(path).text("PRAGMA integrity_check") == "ok")
        let reopened = try SQLiteStore(path: path, key: .raw(key))
        for i in 0..<5 { #expect(try secret(reopened, "svc", "a\(i)") == Data("v\(i)".utf8)) }
    }

    @Test("opened read-only: reads work, every write is errSecReadOnly, the file is unchanged")
    func readOnlyOption() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(key))
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        }
        let before = fileState(s.db)
        let store = try SQLiteStore(path: s.db, key: .raw(key), readOnly: true)
        #expect(store.backend.readOnly)
        try Self.expectReadOnly(store)
        #expect(fileState(s.db) == before)
        // Nothing to read is an error, not a new store.
        let absent = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.path("none.db"), key: .raw(key), readOnly: true) }
        #expect(absent?.code == .notAvailable)
        #expect(!FileManager.default.fileExists(atPath: s.path("none.db")))
    }

    @Test("a store on a read-only mount opens read-only by itself: reads work, writes are errSecReadOnly")
    func readOnlyMount() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let source = s.path("rw"), mountPoint = s.path("ro")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let key = randomKey()
        do {
            let store = try SQLiteStore(path: source + "/store.db", key: .raw(key))
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        }
        // A read-only bind mount (root cannot write there either, unlike a chmod'ed file).
        guard run("/bin/mount", ["--bind", source, mountPoint]) == 0 else {
            print("[read-only mount] skipped: this machine does not allow mount (not root, or no CAP_SYS_ADMIN)")
            return
        }
        defer { _ = run("/bin/umount", [mountPoint]) }
        try #require(run("/bin/mount", ["-o", "remount,bind,ro", mountPoint]) == 0)
        let path = mountPoint + "/store.db"
        #expect(access(path, W_OK) != 0)
        let before = fileState(path)
        let store = try SQLiteStore(path: path, key: .raw(key))
        #expect(store.backend.readOnly)
        try Self.expectReadOnly(store)
        #expect(fileState(path) == before)
    }

    static func expectReadOnly(_ store: SQLiteStore) throws {
        #expect(try secret(store, "svc", "a") == Data("v".utf8))
        let writes: [(String, () throws(SecureStoreError) -> Void)] = [
            ("add", { () throws(SecureStoreError) in try store.add(NewItem(.genericPassword, generic("svc", "b"))) }),
            ("update", { () throws(SecureStoreError) in
                try store.update(ItemQuery(.genericPassword, generic("svc", "a")), with: ItemChanges([.label: "x"])) }),
            ("delete", { () throws(SecureStoreError) in try store.delete(ItemQuery(.genericPassword, generic("svc", "a"))) }),
            ("clear", { () throws(SecureStoreError) in try store.clear([.genericPassword]) }),
        ]
        for (name, write) in writes {
            let e = failure(write)
            #expect(e?.code == .readOnly, "\(name): \(String(describing: e))")
            #expect(e?.status == -25292)
            #expect(e?.message.contains("reading only") == true, "\(name): \(String(describing: e))")
        }
        #expect(try secret(store, "svc", "a") == Data("v".utf8))
    }

    @Test("not a SecureStore file (random bytes, another program's database, a newer format, damaged): a clear error and the file byte-for-byte unchanged",
          arguments: ["random", "foreign", "newer", "truncated", "unknownVersion", "emptyReadOnly"])
    func badFile(kind: String) throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        let path = s.path("\(kind).db")
        var expected: SecureStoreError.Code = .decode
        var words = "not a valid SecureStore database"
        var readOnly = false
        switch kind {
        case "random":
            _ = FileManager.default.createFile(atPath: path, contents: Data((0..<8192).map { _ in UInt8.random(in: 0...255) }))
        case "foreign":
            RawDB(path).exec("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('hello');")
            words = "database of another program"
        case "newer", "unknownVersion", "truncated":
            do {
                let store = try SQLiteStore(path: path, key: .raw(key))
                for i in 0..<100 { try store.add(NewItem(.genericPassword, generic("s\(i)", "a"), data: Data(count: 300))) }
            }
            if kind == "newer" {
                RawDB(path).exec("PRAGMA user_version = \(SQLiteBackend.schemaVersion + 1)")
                expected = .notAvailable
                words = "newer SecureStore"
            } else if kind == "unknownVersion" {
                RawDB(path).exec("PRAGMA user_version = 0")
                words = "unknown schema version"
            } else {
                let full = FileManager.default.contents(atPath: path) ?? Data()
                _ = FileManager.default.createFile(atPath: path, contents: full.prefix(full.count / 3))
            }
        default:   // an empty file where an existing store (an export) is expected
            _ = FileManager.default.createFile(atPath: path, contents: Data())
            readOnly = true
            words = "empty"
        }
        chmod(path, 0o600)   // private, so what is tested is the content
        let before = fileState(path)
        let e = failure { () throws(SecureStoreError) in
            let store = try SQLiteStore(path: path, key: .raw(key), readOnly: readOnly)
            _ = try store.items(matching: ItemQuery(.genericPassword, limit: .all))
        }
        #expect(e?.code == expected, "\(kind): \(String(describing: e))")
        #expect(e?.message.contains(words) == true, "\(kind): \(String(describing: e))")
        #expect(fileState(path) == before, "\(kind): the file changed")
    }

    @Test("a store file demanding huge Argon2id costs is refused (decode, naming the limit) without stretching")
    func hostileCosts() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        do {
            let store = try SQLiteStore(path: s.db, key: .passphrase("pw"), passphraseCost: .minimum)
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        }
        let kdf = RawDB(s.db).rows("SELECT v FROM meta WHERE k = 'kdf'").first?.first ?? Data()
        try #require(kdf.count == 33)
        for (ops, mem, words) in [(UInt64(3), UInt64(4) << 30, "1073741824"), (100_000, 65536, "passes"),
                                  (4, UInt64(1) << 30 + 1, "limit"), (0, 65536, "minimum")] {
            var hostile = Data([1])
            withUnsafeBytes(of: ops.bigEndian) { hostile.append(contentsOf: $0) }
            withUnsafeBytes(of: mem.bigEndian) { hostile.append(contentsOf: $0) }
            hostile.append(kdf[17...])
            var stmt: OpaquePointer?
            let db = RawDB(s.db)
            sqlite3_prepare_v2(db.db, "UPDATE meta SET v = ? WHERE k = 'kdf'", -1, &stmt, nil)
            _ = hostile.withUnsafeBytes { sqlite3_bind_blob(stmt, 1, $0.baseAddress, Int32($0.count), csqlite_transient()) }
            sqlite3_step(stmt)
            sqlite3_finalize(stmt)
            let before = fileState(s.db)
            let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .passphrase("pw")) }
            #expect(e?.code == .decode, "\(ops) × \(mem): \(String(describing: e))")
            #expect(e?.message.contains(words) == true, "\(ops) × \(mem): \(String(describing: e))")
            #expect(fileState(s.db) == before)
        }
        // Creating a store with costs over the limit is refused up front, so no store can lock itself out.
        let tooMuch = failure { () throws(SecureStoreError) in
            _ = try SQLiteStore(path: s.path("new.db"), key: .passphrase("pw"),
                                passphraseCost: PassphraseCost(operations: 32, memoryBytes: 1 << 20))
        }
        #expect(tooMuch?.code == .param)
        #expect(!FileManager.default.fileExists(atPath: s.path("new.db")), "nothing is created")
    }
}

/// Runs a program and waits for it (posix_spawn: no pipes for a daemon to inherit); returns its exit status.
func run(_ program: String, _ arguments: [String]) -> Int32 {
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    guard posix_spawn(&pid, program, nil, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
}
