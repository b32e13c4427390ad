import Foundation
import Testing
@testable import SecureStoreCore
import SecureStoreInMemory

/// Where a new item's persistent reference comes from (``StorageBackend/newPersistentRef()``): an in-memory
/// store, whose records live in that object alone, numbers its references after a random prefix of its own;
/// every store shared with other processes draws each one from the system (PersistentRefForkTests, and
/// SQLiteStoreTests' "references are drawn").
@Suite("Persistent references: an in-memory store numbers its own")
struct PersistentRefSourceTests {
    static func words(_ ref: PersistentRef) -> (prefix: UInt64, serial: UInt64) {
        ref.withUnsafeBytes { raw in
            (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
             UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    static func add(_ store: InMemoryStore, _ account: String) throws -> PersistentRef {
        let item = try store.add(NewItem(.genericPassword, [.service: "refs", .account: .string(account)],
                                         data: Data(account.utf8)), returning: .persistentRef)
        return try #require(item.persistentRef)
    }

    @Test("1,000 adds: 1,000 different 16-byte references, each finding its own item")
    func uniqueAndUsable() throws {
        let store = try InMemoryStore()
        var seen = Set<PersistentRef>()
        var refs: [PersistentRef] = []
        for i in 0..<1_000 {
            let ref = try Self.add(store, "a\(i)")
            #expect(ref.data.count == 16)
            #expect(seen.insert(ref).inserted, "reference \(ref) handed out twice")
            refs.append(ref)
        }
        // One prefix per store object; serials never repeat, even after deletes.
        #expect(Set(refs.map { Self.words($0).prefix }).count == 1)
        #expect(try store.delete(.item(refs[10])) == 1)
        let after = try Self.add(store, "after")
        #expect(!seen.contains(after))
        for i in [0, 499, 999] {
            let found = try store.item(matching: .item(refs[i], returning: .data))
            #expect(found?.data == Data("a\(i)".utf8))
        }
        #expect(try store.item(matching: .item(refs[10])) == nil)
    }

    @Test("Another store's reference names nothing here, though both numbered the same count of adds")
    func storesDoNotShareReferences() throws {
        let a = try InMemoryStore(), b = try InMemoryStore()
        let fromA = try (0..<5).map { try Self.add(a, "x\($0)") }
        let fromB = try (0..<5).map { try Self.add(b, "x\($0)") }
        #expect(Self.words(fromA[0]).prefix != Self.words(fromB[0]).prefix)
        for ref in fromA {
            #expect(try b.item(matching: .item(ref)) == nil)
            // Apple's answer for a delete or an update that matches nothing: errSecItemNotFound.
            let delete = #expect(throws: SecureStoreError.self) { try b.delete(.item(ref)) }
            #expect(delete?.code == .itemNotFound)
            let update = #expect(throws: SecureStoreError.self) {
                try b.update(.item(ref), with: ItemChanges(data: Data("changed".utf8)))
            }
            #expect(update?.code == .itemNotFound)
        }
        #expect(try b.items(matching: ItemQuery(.genericPassword, limit: .all)).count == 5)
        #expect(Set(fromA).isDisjoint(with: fromB))
    }

    @Test("References from many threads at once are all different")
    func concurrentAdds() throws {
        let store = try InMemoryStore()
        let refs = Locked<[PersistentRef]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<250 {
                if let ref = try? Self.add(store, "t\(t)-\(i)") { refs.withLock { $0.append(ref) } }
            }
        }
        let all = refs.withLock { $0 }
        #expect(all.count == 2_000)
        #expect(Set(all).count == 2_000)
    }
}
