import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite
import SecureStoreCrypto
import Synchronization

/// Store and key files checked like ssh checks its keys. The tests run as root, which ignores permission
/// bits for access, but stat() still shows mode and owner: "another user" is a file chown'ed to uid 65534.
@Suite("SQLite store files checked like ssh keys")
struct FileSafetyTests {
    static let nobody: uid_t = 65534

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    static func entries(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    @Test("a new store and key file are 0600, and nothing else is left in the folder")
    func newFiles() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .keyFile(s.path("store.key")))
        try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        #expect(Self.mode(s.db) == 0o600)
        #expect(Self.mode(s.path("store.key")) == 0o600)
        for name in Self.entries(s.dir.path) { #expect(!name.contains("creating"), "\(name) left behind") }
    }

    @Test("an empty 0666 file planted at the store path by another user is refused (chown named); nothing is written into it or next to it")
    func plantedByAnotherUser() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        #expect(FileManager.default.createFile(atPath: s.db, contents: Data()))
        chmod(s.db, 0o666)
        chown(s.db, Self.nobody, Self.nobody)
        let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .keyFile(s.path("store.key"))) }
        #expect(e?.code == .authFailed, "\(String(describing: e))")
        #expect(e?.message.contains("another user") == true, "\(String(describing: e))")
        #expect(e?.message.contains("chown") == true, "\(String(describing: e))")
        #expect(Self.entries(s.dir.path) == ["store.db"], "no -wal, -shm or key file was made")
        #expect(Self.mode(s.db) == 0o666)
        #expect(FileManager.default.contents(atPath: s.db) == Data())
    }

    @Test("an existing store readable or writable by group or others, or owned by another user, is refused saying how to fix it",
          arguments: [0o644, 0o640, 0o620, 0o606, 0o604])
    func badMode(mode: Int) throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        do {
            let store = try SQLiteStore(path: s.db, key: .raw(key))
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        }
        chmod(s.db, mode_t(mode))
        let before = fileState(s.db)
        let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(key)) }
        #expect(e?.code == .authFailed, "\(String(describing: e))")
        #expect(e?.message.contains("chmod 600 \(s.db)") == true, "\(String(describing: e))")
        #expect(e?.message.contains(String(mode, radix: 8)) == true, "\(String(describing: e))")
        #expect(fileState(s.db) == before)
        // Fixed as told, it opens.
        chmod(s.db, 0o600)
        #expect(try secret(try SQLiteStore(path: s.db, key: .raw(key)), "svc", "a") == Data("v".utf8))
        // Owned by someone else: refused, naming chown.
        chown(s.db, Self.nobody, Self.nobody)
        let owner = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(key)) }
        #expect(owner?.code == .authFailed)
        #expect(owner?.message.contains("uid 65534") == true, "\(String(describing: owner))")
        #expect(owner?.message.contains("chown") == true, "\(String(describing: owner))")
    }

    @Test("a -wal or -shm file readable by others or owned by another user is refused")
    func sidecars() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        let open = try SQLiteStore(path: s.db, key: .raw(key))   // keeps -wal and -shm in place
        try open.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        for suffix in ["-wal", "-shm"] {
            let path = s.db + suffix
            try #require(FileManager.default.fileExists(atPath: path))
            chmod(path, 0o644)
            let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(key)) }
            #expect(e?.code == .authFailed, "\(suffix): \(String(describing: e))")
            #expect(e?.message.contains("chmod 600 \(path)") == true, "\(suffix): \(String(describing: e))")
            chmod(path, 0o600)
            chown(path, Self.nobody, Self.nobody)
            let owner = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .raw(key)) }
            #expect(owner?.message.contains("another user") == true, "\(suffix): \(String(describing: owner))")
            chown(path, 0, 0)
        }
        #expect(try secret(try SQLiteStore(path: s.db, key: .raw(key)), "svc", "a") == Data("v".utf8))
    }

    @Test("symbolic links: followed only to a file that passes the checks; a link to a 0644 file, a dangling link and a link to a folder are refused, and nothing is created through them")
    func symlinks() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        // A link to an empty 0644 file: refused, the target stays empty and 0644.
        let target = s.path("target.db")
        #expect(FileManager.default.createFile(atPath: target, contents: Data(), attributes: [.posixPermissions: 0o644]))
        symlink(target, s.path("link.db"))
        let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.path("link.db"), key: .raw(key)) }
        #expect(e?.code == .authFailed, "\(String(describing: e))")
        #expect(e?.message.contains("chmod 600") == true, "\(String(describing: e))")
        #expect(FileManager.default.contents(atPath: target) == Data())
        #expect(Self.mode(target) == 0o644)
        // A dangling link: refused; nothing is created where it points.
        symlink(s.path("nowhere.db"), s.path("dangling.db"))
        let dangling = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.path("dangling.db"), key: .raw(key)) }
        #expect(dangling?.code == .notAvailable, "\(String(describing: dangling))")
        #expect(dangling?.message.contains("symbolic link") == true, "\(String(describing: dangling))")
        #expect(!FileManager.default.fileExists(atPath: s.path("nowhere.db")))
        // A link to a folder.
        try FileManager.default.createDirectory(atPath: s.path("folder"), withIntermediateDirectories: false)
        let folder = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.path("folder"), key: .raw(key)) }
        #expect(folder?.message.contains("is a folder") == true, "\(String(describing: folder))")
        // A link to a good store of this user: followed.
        do {
            let real = try SQLiteStore(path: s.db, key: .raw(key))
            try real.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        }
        symlink(s.db, s.path("good-link.db"))
        let linked = try SQLiteStore(path: s.path("good-link.db"), key: .raw(key))
        try linked.add(NewItem(.genericPassword, generic("svc", "b"), data: Data("w".utf8)))
        #expect(try secret(try SQLiteStore(path: s.db, key: .raw(key)), "svc", "b") == Data("w".utf8))
    }

    @Test("a store truncated to 0 bytes is an error that says so, never a new store; the file stays empty")
    func truncatedToZero() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let keyFile = s.path("store.key")
        do {
            let store = try SQLiteStore(path: s.db, key: .keyFile(keyFile))
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        }
        truncate(s.db, 0)
        for readOnly in [false, true] {
            let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .keyFile(keyFile), readOnly: readOnly) }
            #expect(e?.code == .decode, "\(String(describing: e))")
            #expect(e?.message.contains("empty (0 bytes)") == true, "\(String(describing: e))")
            #expect(e?.message.contains("truncated") == true, "\(String(describing: e))")
            #expect(FileManager.default.contents(atPath: s.db) == Data())
        }
        // A private empty file the caller did not ask to create is refused the same way.
        let empty = s.path("empty.db")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data(), attributes: [.posixPermissions: 0o600]))
        let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: empty, key: .raw(randomKey())) }
        #expect(e?.message.contains("empty (0 bytes)") == true, "\(String(describing: e))")
    }

    @Test("an existing store whose key file is missing: a clear error, and no new key file is written")
    func missingKeyFile() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let keyFile = s.path("store.key")
        do {
            let store = try SQLiteStore(path: s.db, key: .keyFile(keyFile))
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        }
        let saved = try #require(FileManager.default.contents(atPath: keyFile))
        unlink(keyFile)
        let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .keyFile(keyFile)) }
        #expect(e?.code == .notAvailable, "\(String(describing: e))")
        #expect(e?.message.contains("missing") == true, "\(String(describing: e))")
        #expect(e?.message.contains("Restore the key file") == true, "\(String(describing: e))")
        #expect(!FileManager.default.fileExists(atPath: keyFile), "no new key was made for the existing store")
        // Restored, it opens.
        #expect(FileManager.default.createFile(atPath: keyFile, contents: saved, attributes: [.posixPermissions: 0o600]))
        #expect(try secret(try SQLiteStore(path: s.db, key: .keyFile(keyFile)), "svc", "a") == Data("v".utf8))
    }

    @Test("key files: a folder is reported as a folder; another user's, a group-readable one and a link to a 0644 file are refused")
    func keyFiles() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let folder = s.path("keys")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let e = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .keyFile(folder)) }
        #expect(e?.message.contains("is a folder") == true, "\(String(describing: e))")
        #expect(e?.message.contains("readable") == false, "\(String(describing: e))")
        #expect(!FileManager.default.fileExists(atPath: s.db), "no store is made without its key")

        let keyFile = s.path("store.key")
        #expect(FileManager.default.createFile(atPath: keyFile, contents: randomKey(), attributes: [.posixPermissions: 0o600]))
        chown(keyFile, Self.nobody, Self.nobody)
        let owner = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .keyFile(keyFile)) }
        #expect(owner?.code == .authFailed)
        #expect(owner?.message.contains("another user") == true, "\(String(describing: owner))")
        chown(keyFile, 0, 0)
        chmod(keyFile, 0o640)
        let group = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .keyFile(keyFile)) }
        #expect(group?.message.contains("chmod 600 \(keyFile)") == true, "\(String(describing: group))")
        chmod(keyFile, 0o600)
        let open = s.path("open.key")
        #expect(FileManager.default.createFile(atPath: open, contents: randomKey(), attributes: [.posixPermissions: 0o644]))
        symlink(open, s.path("link.key"))
        let linked = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .keyFile(s.path("link.key"))) }
        #expect(linked?.message.contains("chmod 600") == true, "\(String(describing: linked))")
        // A dangling link where a new key file would go: refused, nothing created through it.
        symlink(s.path("elsewhere.key"), s.path("dangling.key"))
        let dangling = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.path("new.db"), key: .keyFile(s.path("dangling.key"))) }
        #expect(dangling != nil)
        #expect(!FileManager.default.fileExists(atPath: s.path("elsewhere.key")))
        #expect(!FileManager.default.fileExists(atPath: s.path("new.db")))
        // The good key file works.
        _ = try SQLiteStore(path: s.db, key: .keyFile(keyFile))
    }

    @Test("a write to a read-only store is refused without SQL text in the message")
    func readOnlyMessage() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = randomKey()
        _ = try SQLiteStore(path: s.db, key: .raw(key))
        let store = try SQLiteStore(path: s.db, key: .raw(key), readOnly: true)
        let e = failure { () throws(SecureStoreError) in try store.add(NewItem(.genericPassword, generic("svc", "a"))) }
        #expect(e?.code == .readOnly)
        for sql in ["BEGIN", "INSERT", "SELECT", "items", "meta"] {
            #expect(e?.message.contains(sql) == false, "\(sql) in \(String(describing: e))")
        }
    }

    @Test("a store in a folder its owner cannot write to (0500): reads work, a write says why (run as uid 65534)",
          arguments: [false, true])
    func readOnlyFolder(liveWAL: Bool) throws {
        let s = try Scratch()
        defer {
            chmod(s.path("ro"), 0o700)
            s.cleanUp()
        }
        guard access("/usr/bin/setpriv", X_OK) == 0, getuid() == 0 else {
            print("[read-only folder] skipped: needs root and setpriv to run the reader as another user (root ignores folder modes)")
            return
        }
        let worker = try builtExecutable("securestore-sqlite-worker")
        let folder = s.path("ro"), db = s.path("ro") + "/store.db"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(s.dir.path, 0o755)
        let key = randomKey()
        do {
            let store = try SQLiteStore(path: db, key: .raw(key))
            for i in 0..<5 {
                try store.add(NewItem(.genericPassword, [.service: "worker", .account: .string("w-\(i)")],
                                      data: Data("w-\(i)".utf8)))
            }
        }
        // A live WAL: a connection kept open with its last commit not merged into the database file.
        var holder: RawDB?
        if liveWAL {
            holder = RawDB(db)
            #expect(holder?.integer("SELECT count(*) FROM items") == 5)   // holds the WAL open
            do {
                let store = try SQLiteStore(path: db, key: .raw(key))
                try store.add(NewItem(.genericPassword, [.service: "worker", .account: "w-5"], data: Data("w-5".utf8)))
            }
            var wal = stat()
            try #require(stat(db + "-wal", &wal) == 0 && wal.st_size > 0, "the WAL is live")
        }
        for name in Self.entries(folder) { chown(folder + "/" + name, Self.nobody, Self.nobody) }
        chown(folder, Self.nobody, Self.nobody)
        chmod(folder, 0o500)
        let before = Self.entries(folder)
        let count = liveWAL ? 6 : 5
        let out = s.path("reader.out")
        let pid = spawn("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", worker,
                                             "read", db, hex(key), "w", "0", "\(count)"],
                        environment: ProcessInfo.processInfo.environment, stdout: out)
        #expect(pid.map { reap($0, timeout: .seconds(60)) } != -1)
        let lines = String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self)
            .split(separator: "\n").map(String.init)
        withExtendedLifetime(holder) {}
        if lines.allSatisfy({ $0.hasPrefix("read ") || $0.hasPrefix("write ") }) {
            #expect(lines.filter { $0.hasPrefix("read ") }.count == count, "\(lines)")
            let write = lines.first { $0.hasPrefix("write ") } ?? ""
            #expect(write.hasPrefix("write err readOnly"), "\(write)")
            #expect(write.contains("reading only"), "\(write)")
        } else {
            // Where reading is impossible, the message says why and what to do.
            let text = lines.joined(separator: "\n")
            #expect(text.contains("folder") && text.contains("chmod u+w"), "\(text)")
        }
        #expect(Self.entries(folder) == before, "nothing was created in the read-only folder")
        print("[read-only folder, live WAL \(liveWAL)] \(lines.first ?? "")")
    }

    @Test("a store moved over the path while another object opens it (after SQLite opened the file, during the passphrase's key derivation) is never written through the old file: the write fails saying so, and the moved copy keeps its items")
    func storeReplacedWhileOpening() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let key = StoreKey.passphrase("correct horse")
        do {
            let store = try SQLiteStore(path: s.db, key: key, passphraseCost: .interactive)
            for i in 1...5 { try store.add(NewItem(.genericPassword, generic("s\(i)", "a"), data: Data("v\(i)".utf8))) }
        }
        #expect(Self.copyfile(s.db, s.path("copy.db")))
        do {
            let store = try SQLiteStore(path: s.db, key: key)
            #expect(try store.delete(ItemQuery(.genericPassword)) == 5)
        }
        // One object opens the emptied store (Argon2id takes a while after SQLite opened the file) and adds an item;
        // once its connection has the file open, the copy (5 items) is moved over the path.
        let outcome = Mutex<Result<Void, SecureStoreError>?>(nil)
        let opener = Thread {
            let result = Result { () throws(SecureStoreError) in
                let store = try SQLiteStore(path: s.db, key: key)
                try store.add(NewItem(.genericPassword, generic("new", "a"), data: Data("new".utf8)))
            }
            outcome.withLock { $0 = result }
        }
        opener.start()
        var polls = 0
        while !Self.processHasOpen(s.db + "-shm"), outcome.withLock({ $0 == nil }), polls < 60_000 {
            usleep(1_000)
            polls += 1
        }
        #expect(rename(s.path("copy.db"), s.db) == 0)
        while outcome.withLock({ $0 == nil }) { usleep(1_000) }
        guard case .failure(let error)? = outcome.withLock({ $0 }) else {
            Issue.record("the add reported success into a file that is no longer the store")
            return
        }
        #expect(error.code == .notAvailable && error.message.contains("replaced"), "\(error)")
        let reopened = try SQLiteStore(path: s.db, key: key)
        #expect(try reopened.items(matching: ItemQuery(.genericPassword, returning: .attributes)).count == 5)
    }

    /// Whether this process has `path` open (a descriptor in /proc/self/fd leads to it).
    static func processHasOpen(_ path: String) -> Bool {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }
    }

    static func copyfile(_ from: String, _ to: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: from) else { return false }
        return FileManager.default.createFile(atPath: to, contents: data, attributes: [.posixPermissions: 0o600])
    }
}
