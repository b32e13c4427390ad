import Testing
import Foundation
import TestSupport
import SecureStoreCore
import SecureStorePostgres

@Suite("PostgreSQL rekey", .serialized, .requires(.postgres))
struct PostgresRekeyTests {
    func all(_ store: PostgresStore) throws(SecureStoreError) -> [String: Data] {
        var out: [String: Data] = [:]
        for item in try store.items(matching: ItemQuery(.genericPassword, returning: [.attributes, .data])) {
            if case .string(let account)? = item.attributes?[.account] { out[account] = item.data ?? Data() }
        }
        return out
    }

    @Test("rekey re-encrypts every row in one transaction; the old key then fails with authFailed, the new one reads all")
    func rekey() throws {
        let ns = Server.freshNamespace("rekey"), old = randomKey(), new = randomKey()
        let store = try Server.store(namespace: ns, key: old)
        for i in 0..<30 {
            try store.add(NewItem(.genericPassword, generic("rk", "a\(i)"), data: Data("s\(i)".utf8)), returning: [])
        }
        let before = try Server.psql(["-At", "-c", "SELECT string_agg(encode(blob, 'hex'), ',' ORDER BY id) FROM securestore_items WHERE \(Server.scope(ns))"])
        try store.rekey(to: .raw(new))
        let after = try Server.psql(["-At", "-c", "SELECT string_agg(encode(blob, 'hex'), ',' ORDER BY id) FROM securestore_items WHERE \(Server.scope(ns))"])
        #expect(before != after, "every blob was sealed again")
        // The same store object goes on with the new key.
        try store.add(NewItem(.genericPassword, generic("rk", "later"), data: Data("l".utf8)), returning: [])
        #expect(failure { () throws(SecureStoreError) in _ = try Server.store(namespace: ns, key: old) }?.code == .authFailed)
        let reopened = try all(Server.store(namespace: ns, key: new))
        #expect(reopened.count == 31)
        #expect(reopened["a7"] == Data("s7".utf8) && reopened["later"] == Data("l".utf8))
        // A passphrase works too, and back to a raw key.
        try store.rekey(to: .passphrase("correct horse"), passphraseCost: .minimum)
        #expect(try all(PostgresStore(url: Server.url(), key: .passphrase("correct horse"), namespace: ns,
                                      passwordEnv: Server.passwordEnv)).count == 31)
        #expect(failure { () throws(SecureStoreError) in _ = try Server.store(namespace: ns, key: new) }?.code == .authFailed)
    }

    @Test("a rekey of 600 rows is four round trips (the read with the transaction's opening, two pipelines of 256 rewritten rows, the rest with the new key check and COMMIT), not one per row")
    func rekeyRoundTrips() throws {
        let ns = Server.freshNamespace("rekey-trips"), new = randomKey()
        let store = try Server.store(namespace: ns, key: randomKey())
        for i in 0..<600 {
            try store.add(NewItem(.genericPassword, generic("rt", "a\(i)"), data: Data("s\(i)".utf8)), returning: [])
        }
        let before = store.backend.roundTripsForTesting
        try store.rekey(to: .raw(new))
        #expect(store.backend.roundTripsForTesting - before == 4)
        let reopened = try all(Server.store(namespace: ns, key: new))
        #expect(reopened.count == 600 && reopened["a599"] == Data("s599".utf8))
    }

    @Test("a long-lived store object holding the old key: writes fail with authFailed and write nothing; reads say so")
    func staleStoreObject() throws {
        let ns = Server.freshNamespace("stale"), old = randomKey(), new = randomKey()
        let stale = try Server.store(namespace: ns, key: old)
        try stale.add(NewItem(.genericPassword, generic("st", "x"), data: Data("x".utf8)), returning: [])
        let rotator = try Server.store(namespace: ns, key: old)
        try rotator.rekey(to: .raw(new))
        let attempts: [(String, () throws(SecureStoreError) -> Void)] = [
            ("add", { () throws(SecureStoreError) in
                try stale.add(NewItem(.genericPassword, generic("st", "y"), data: Data("y".utf8)), returning: []) }),
            ("update", { () throws(SecureStoreError) in
                try stale.update(ItemQuery(.genericPassword, generic("st", "x")), with: ItemChanges(data: Data("z".utf8))) }),
            ("delete", { () throws(SecureStoreError) in try stale.delete(ItemQuery(.genericPassword, generic("st", "x"))) }),
            ("read", { () throws(SecureStoreError) in
                _ = try stale.items(matching: ItemQuery(.genericPassword, generic("st", "x"), returning: .data)) }),
        ]
        for (name, attempt) in attempts {
            let error = failure(attempt)
            #expect(error?.code == .authFailed, "\(name): \(String(describing: error))")
            #expect(error?.message.contains("re-keyed") == true, "\(name): \(String(describing: error))")
        }
        let state = try all(Server.store(namespace: ns, key: new))
        #expect(state == ["x": Data("x".utf8)], "nothing of the stale writer landed")
    }

    @Test("writers sharing the store object that rekeys carry on with the new key: none fails, every item readable")
    func sameObjectWriters() throws {
        let ns = Server.freshNamespace("rekeyself"), new = randomKey()
        let store = try Server.store(namespace: ns, key: randomKey())
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for t in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                for i in 0..<40 {
                    do throws(SecureStoreError) {
                        try store.add(NewItem(.genericPassword, generic("self", "t\(t)-\(i)"), data: Data("t\(t)-\(i)".utf8)),
                                      returning: [])
                    } catch {
                        failures.withLock { $0.append("t\(t)-\(i): \(error)") }
                    }
                }
            }.start()
        }
        usleep(30_000)
        try store.rekey(to: .raw(new))
        #expect(group.wait(timeout: .now() + 120) == .success)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        let state = try all(Server.store(namespace: ns, key: new))
        #expect(state.count == 8 * 40)
        for (name, data) in state { #expect(data == Data(name.utf8)) }
    }

    @Test("4 writer processes racing a rekey: each add either lands readable under the new key or fails authFailed")
    func racingWriters() throws {
        let ns = Server.freshNamespace("rekeyrace"), old = randomKey(), new = randomKey()
        let store = try Server.store(namespace: ns, key: old)
        let workers = try (0..<4).map { w in try Worker(["add", "pg:\(ns)", hex(old), "w\(w)", "0", "300"]) }
        // Rekey once the writers are well under way: every one of them has opened the store and written.
        let start = ContinuousClock.now
        func underWay() throws -> Bool {
            let names = try all(store).keys
            return names.count >= 40 && (0..<4).allSatisfy { w in names.contains { $0.hasPrefix("w\(w)-") } }
        }
        while try !underWay(), ContinuousClock.now - start < .seconds(30) { usleep(20_000) }
        try store.rekey(to: .raw(new))
        let lines = workers.flatMap { $0.finish() }
        let ok = Set(lines.filter { $0.hasPrefix("ok ") }.map { String($0.dropFirst(3)) })
        let refused = lines.filter { $0.hasPrefix("err ") && $0.split(separator: " ")[2] == "authFailed" }
        let other = lines.filter { !$0.hasPrefix("ok ") && !($0.hasPrefix("err ") && $0.split(separator: " ")[2] == "authFailed") }
        #expect(other.isEmpty, "\(other.prefix(5))")
        #expect(ok.count >= 40 && !refused.isEmpty, "the rekey fell in the middle: \(ok.count) ok, \(refused.count) refused")
        #expect(ok.count + refused.count == 1200)
        // Every row opens with the new key (a copy of all of them would fail on a single unreadable one).
        let state = try all(Server.store(namespace: ns, key: new))
        #expect(Set(state.keys) == ok, "exactly the acknowledged adds, all readable")
        for (name, data) in state { #expect(data == Data(name.utf8)) }
    }
}
