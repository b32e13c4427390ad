import Testing
import Foundation
import TestSupport
import SecureStore
import SecureStorePostgres

@Suite("PostgreSQL store, concurrent callers", .requires(.postgres))
struct PostgresPoolTests {
    @Test("16 threads on one store object with a pool of 4: every add lands once, racing adds of one item succeed once, reads see them")
    func concurrentCallers() throws {
        let ns = Server.freshNamespace("pool"), key = randomKey()
        let store = try PostgresStore(url: Server.url(), key: .raw(key), namespace: ns, passwordEnv: Server.passwordEnv,
                                      poolSize: 4)
        #expect(store.backend.poolSize == 4)
        let outcomes = Locked<[String]>([])
        let group = DispatchGroup()
        for t in 0..<16 {
            group.enter()
            Thread {
                defer { group.leave() }
                var lines: [String] = []
                for i in 0..<15 {
                    let name = "t\(t)-\(i)"
                    do throws(SecureStoreError) {
                        try store.add(NewItem(.genericPassword, generic("pool", name), data: Data(name.utf8)), returning: [])
                        let read = try store.items(matching: ItemQuery(.genericPassword, generic("pool", name), returning: .data))
                        lines.append(read.first?.data == Data(name.utf8) ? "ok" : "wrong \(name)")
                    } catch {
                        lines.append("err \(name) \(error)")
                    }
                    do throws(SecureStoreError) {
                        try store.add(NewItem(.genericPassword, generic("pool", "shared-\(i)"), data: Data("s".utf8)), returning: [])
                        lines.append("shared")
                    } catch {
                        lines.append(error.code == .duplicateItem ? "dup" : "err shared \(error)")
                    }
                }
                outcomes.withLock { $0 += lines }
            }.start()
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        let lines = outcomes.withLock { $0 }
        #expect(lines.filter { $0 == "ok" }.count == 16 * 15, "\(lines.filter { $0.hasPrefix("err") || $0.hasPrefix("wrong") }.prefix(3))")
        #expect(lines.filter { $0 == "shared" }.count == 15)
        #expect(lines.filter { $0 == "dup" }.count == 15 * 15)
        let all = try store.items(matching: ItemQuery(.genericPassword, [.service: .string("pool")], limit: .all, returning: .attributes))
        #expect(all.count == 16 * 15 + 15)
    }

    @Test("pool size and timeouts out of range are refused as param errors")
    func badSettings() throws {
        let url = try Server.url()
        for (pool, statement) in [(0, 10), (65, 10), (4, 0)] {
            let error = failure { () throws(SecureStoreError) in
                _ = try PostgresStore(url: url, key: .raw(randomKey()), namespace: Server.freshNamespace(),
                                      passwordEnv: Server.passwordEnv, statementTimeout: .seconds(statement), poolSize: pool)
            }
            #expect(error?.code == .param, "\(String(describing: error))")
        }
    }
}
