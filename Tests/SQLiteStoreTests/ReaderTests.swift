import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite

/// Copy queries run on reader connections of their own: beside each other and beside this object's writer.
@Suite("SQLite reader connections")
struct ReaderTests {
    @Test("a store declares its readers and one writer; a read-only store has no readers")
    func declared() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        #expect(store.backend.readerConnections == SQLiteBackend.defaultReaderConnections)
        #expect(store.concurrency == SQLiteBackend.defaultReaderConnections + 1)
        #expect(store.threadPool?.size == store.concurrency)
        let none = try SQLiteStore(path: s.path("none.db"), key: .raw(randomKey()), readerConnections: 0)
        #expect(none.concurrency == 1)
        let bad = failure { () throws(SecureStoreError) in
            _ = try SQLiteStore(path: s.path("bad.db"), key: .raw(randomKey()), readerConnections: 17)
        }
        #expect(bad?.code == .param)
    }

    @Test("lookups answer while this object's writer holds its transaction open, and see the state before it")
    func readsBesideTheWriter() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("1".utf8)))
        let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread {
            _ = try? store.backend.write { (txn: inout SQLiteBackend.Transaction) throws(SecureStoreError) in
                try txn.removeAll(of: [.genericPassword])
                inside.signal()
                release.wait()   // the writer's transaction stays open until the reads below are done
            }
            done.signal()
        }.start()
        inside.wait()
        // Reads on the writer's connection would wait for `release`, which only comes after them.
        var found: [Data?] = []
        for _ in 0..<20 { found.append(try secret(store, "svc", "a")) }
        release.signal()
        done.wait()
        #expect(found.allSatisfy { $0 == Data("1".utf8) }, "a snapshot from before the writer's uncommitted delete")
        #expect(try secret(store, "svc", "a") == nil, "the delete committed")
    }

    @Test("after this object's rekey its readers open rows under the new key")
    func readersFollowRekey() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("1".utf8)))
        #expect(try secret(store, "svc", "a") == Data("1".utf8))   // opens a reader
        try store.rekey(to: .raw(randomKey()))
        #expect(try secret(store, "svc", "a") == Data("1".utf8))
        try store.add(NewItem(.genericPassword, generic("svc", "b"), data: Data("2".utf8)))
        #expect(try secret(store, "svc", "b") == Data("2".utf8))
        #expect(try secret(store, "svc", "missing") == nil, "an empty answer checks the key epoch: the new one")
    }

    @Test("16 threads reading while 4 write: every read sees a whole item, every write lands")
    func concurrentReadersAndWriters() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let store = try SQLiteStore(path: s.db, key: .raw(randomKey()))
        for i in 0..<20 { try store.add(NewItem(.genericPassword, generic("svc", "r\(i)"), data: Data("v\(i)".utf8))) }
        let errors = Locked<[String]>([])
        let group = DispatchGroup()
        for t in 0..<20 {
            group.enter()
            Thread {
                defer { group.leave() }
                for i in 0..<25 {
                    do throws(SecureStoreError) {
                        if t < 4 {
                            try store.add(NewItem(.genericPassword, generic("svc", "w\(t)-\(i)"), data: Data("w".utf8)))
                        } else if try secret(store, "svc", "r\(i % 20)") != Data("v\(i % 20)".utf8) {
                            errors.withLock { $0.append("wrong r\(i % 20)") }
                        }
                    } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                }
            }.start()
        }
        group.wait()
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 }.prefix(3))")
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: "svc"], limit: .all)).count == 20 + 4 * 25)
    }
}
