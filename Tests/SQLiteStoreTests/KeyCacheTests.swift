import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite
import SecureStoreCrypto

/// Whether this kernel (and sandbox) lets us keep keys in the session keyring.
let kernelKeyringWorks: Bool = {
    let slot = KeyringSlot(store: "securestore test probe \(UUID().uuidString)")
    guard let key = try? SecretKey(copying: [UInt8](repeating: 1, count: 32)) else { return false }
    let binding = [UInt8](repeating: 2, count: 16)
    guard (try? slot.save(key, binding: binding, seconds: 5)) != nil else { return false }
    defer { slot.drop() }
    return slot.load(binding: binding) != nil
}()

/// Counts how often a store asked for its passphrase.
final class AskCounter: Sendable {
    let count = Locked(0)
    func key(_ answer: String?) -> StoreKey {
        .unlocked(orPassphrase: { _ throws(SecureStoreError) -> Data in
            self.count.withLock { $0 += 1 }
            guard let answer else { throw SecureStoreError(.interactionNotAllowed, "nobody to ask") }
            return Data(answer.utf8)
        })
    }
    var asked: Int { count.withLock { $0 } }
}

@Suite("Unlocked passphrase stores (kernel keyring)",
       .enabled(if: kernelKeyringWorks || TestService.requireAll, "the kernel keyring is not available here (the README's test command runs it and fails instead)"))
struct KeyCacheTests {
    @Test("after unlock a store opens without its passphrase; lock drops the key and the passphrase is asked again")
    func unlockAndLock() throws {
        let s = try Scratch()
        defer { s.cleanUp(); SQLiteBackend.lock(path: s.db) }
        let store = try SQLiteStore(path: s.db, key: .passphrase("pw"), passphraseCost: .minimum)
        try store.add(NewItem(.genericPassword, generic("svc", "acct"), data: Data("v".utf8)))
        try store.unlock(for: .seconds(60))

        let nobody = AskCounter()
        let reopened = try SQLiteStore(path: s.db, key: nobody.key(nil), passphraseCost: .minimum)
        #expect(try secret(reopened, "svc", "acct") == Data("v".utf8))
        try reopened.add(NewItem(.genericPassword, generic("svc", "second"), data: Data("w".utf8)))
        #expect(nobody.asked == 0, "the cached key opened it")

        #expect(SQLiteBackend.lock(path: s.db))
        #expect(!SQLiteBackend.lock(path: s.db), "nothing left to lock")
        let locked = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: nobody.key(nil)) }
        #expect(locked?.code == .interactionNotAllowed && nobody.asked == 1)
        let person = AskCounter()
        let asked = try SQLiteStore(path: s.db, key: person.key("pw"), passphraseCost: .minimum)
        #expect(try secret(asked, "svc", "second") == Data("w".utf8) && person.asked == 1)
        // A passphrase given outright is always checked, never replaced by a cached key.
        try store.unlock(for: .seconds(60))
        let wrong = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: .passphrase("nope")) }
        #expect(wrong?.code == .authFailed)
    }

    @Test("rekey drops the cached key; a key cached for an earlier store at the same path is ignored")
    func rekeyAndReplacedStore() throws {
        let s = try Scratch()
        defer { s.cleanUp(); SQLiteBackend.lock(path: s.db) }
        let store = try SQLiteStore(path: s.db, key: .passphrase("old"), passphraseCost: .minimum)
        try store.add(NewItem(.genericPassword, generic("svc", "acct"), data: Data("v".utf8)))
        try store.unlock(for: .seconds(60))
        try store.rekey(to: .passphrase("new"), passphraseCost: .minimum)
        #expect(!SQLiteBackend.lock(path: s.db), "rekey dropped it")
        let asker = AskCounter()
        #expect(try secret(try SQLiteStore(path: s.db, key: asker.key("new")), "svc", "acct") == Data("v".utf8))
        #expect(asker.asked == 1)

        // Unlock, then put another store (another passphrase) at the same path: the old key is not used.
        let unlocked = try SQLiteStore(path: s.db, key: .passphrase("new"))
        try unlocked.unlock(for: .seconds(60))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: s.db + suffix) }
        let other = try SQLiteStore(path: s.db, key: .passphrase("other"), passphraseCost: .minimum)
        try other.add(NewItem(.genericPassword, generic("svc", "other"), data: Data("o".utf8)))
        let second = AskCounter()
        let wrong = failure { () throws(SecureStoreError) in _ = try SQLiteStore(path: s.db, key: second.key("new")) }
        #expect(wrong?.code == .authFailed && second.asked == 1, "the stale key was ignored and the passphrase asked")
    }

    @Test("a cached key that does not open the store is ignored; the passphrase is asked; an unlock expires")
    func wrongKeyAndTimeout() throws {
        let maker = try RecordSealer.make(.passphrase(Data("pw".utf8)), storedKDF: nil, cost: .minimum)
        let kdf = try #require(maker.kdfParameters)
        let check = maker.makeCheck()
        let slot = KeyringSlot(store: "securestore test \(UUID().uuidString)")
        defer { slot.drop() }
        // A foreign key under the right binding: the key check refuses it.
        try slot.save(try SecretKey(copying: randomKey().map { $0 }), binding: KeyringSlot.binding(kdf: kdf, check: check), seconds: 60)
        let asker = AskCounter()
        _ = try RecordSealer.open(asker.key("pw"), storedKDF: kdf, check: check, cost: .minimum, slot: slot)
        #expect(asker.asked == 1)
        // The real key: no asking (unlocked for a minute, so a slow machine cannot let it expire first).
        try maker.unlock(slot, check: check, seconds: 60)
        let quiet = AskCounter()
        _ = try RecordSealer.open(quiet.key(nil), storedKDF: kdf, check: check, cost: .minimum, slot: slot)
        #expect(quiet.asked == 0)
        // Unlocked again for one second: after it the kernel has removed the key.
        try maker.unlock(slot, check: check, seconds: 1)
        Thread.sleep(forTimeInterval: 2.2)
        #expect(slot.load(binding: KeyringSlot.binding(kdf: kdf, check: check)) == nil)
        let later = failure { () throws(SecureStoreError) in
            _ = try RecordSealer.open(quiet.key(nil), storedKDF: kdf, check: check, cost: .minimum, slot: slot)
        }
        #expect(later?.code == .interactionNotAllowed && quiet.asked == 1)
    }

    @Test("the cached key is never in the store file; a key-file store cannot be unlocked; durations are bounded")
    func hygiene() throws {
        let s = try Scratch()
        defer { s.cleanUp(); SQLiteBackend.lock(path: s.db) }
        let store = try SQLiteStore(path: s.db, key: .passphrase("pw"), passphraseCost: .minimum)
        try store.add(NewItem(.genericPassword, generic("svc", "acct"), data: Data("v".utf8)))
        try store.unlock(for: .seconds(60))
        let slot = try #require(SQLiteBackend.Connection.keyringSlot(s.db))
        let loaded = try #require(slot.load(binding: try binding(of: s.db)))
        let master = Data(UnsafeBufferPointer(start: loaded.pointer, count: loaded.count))
        for file in fileState(s.db).compactMap({ $0 }) { #expect(file.range(of: master) == nil) }
        #expect(failure { () throws(SecureStoreError) in try store.unlock(for: .seconds(0)) }?.code == .param)
        #expect(failure { () throws(SecureStoreError) in try store.unlock(for: .seconds(86_401)) }?.code == .param)
        let keyFileStore = try SQLiteStore(path: s.dir.appendingPathComponent("k.db").path, key: .raw(randomKey()))
        #expect(failure { () throws(SecureStoreError) in try keyFileStore.unlock(for: .seconds(60)) }?.code == .param)
    }

    /// The binding of the store at `path` now (its stored KDF parameters and key check).
    func binding(of path: String) throws -> [UInt8] {
        let db = RawDB(path)
        func blob(_ key: String) -> [UInt8] { Array(db.rows("SELECT v FROM meta WHERE k = '\(key)'").first?.first ?? Data()) }
        return KeyringSlot.binding(kdf: blob("kdf"), check: blob("check"))
    }
}
