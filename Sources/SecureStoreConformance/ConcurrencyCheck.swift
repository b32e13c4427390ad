import SecureStoreCore
import Foundation
import Synchronization

/// Many threads adding, reading and deleting at once on one store; the final state is checked exactly.
public struct ConcurrencyCheck: Sendable {
    public let workers: Int
    public let itemsPerWorker: Int

    public init(workers: Int = 8, itemsPerWorker: Int = 40) {
        self.workers = workers
        self.itemsPerWorker = itemsPerWorker
    }

    /// Runs the check against a fresh store of `subject`. Throws the first problem seen.
    public func run(against subject: ConformanceSubject) throws {
        let store = try subject.make(["group.main"])
        let problems = Locked<[String]>([])
        let racedWins = Atomic<Int>(0)
        let n = itemsPerWorker
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            func fail(_ s: String) { problems.withLock { $0.append("worker \(w): \(s)") } }
            for i in 0..<n {
                let account = "w\(w)-i\(i)"
                do {
                    try store.add(NewItem(.genericPassword, [.service: "conc", .account: .string(account)],
                                          data: Data(account.utf8)))
                    let got = try store.items(matching: ItemQuery(.genericPassword, [.service: "conc", .account: .string(account)],
                                                               returning: .data))
                    if got.first?.data != Data(account.utf8) { fail("read back wrong data for \(account)") }
                    if i % 2 == 1 {
                        let deleted = try store.delete(ItemQuery(.genericPassword, [.service: "conc", .account: .string(account)]))
                        if deleted != 1 { fail("deleted \(deleted) for \(account)") }
                    } else {
                        try store.update(ItemQuery(.genericPassword, [.service: "conc", .account: .string(account)]),
                                         with: ItemChanges([.label: .string("L\(w)")]))
                    }
                    // Everyone races to create the same item; exactly one add may win each round.
                    do {
                        try store.add(NewItem(.genericPassword, [.service: "race", .account: .string("r\(i)")]))
                        racedWins.add(1, ordering: .relaxed)
                    } catch let error as SecureStoreError where error.code == .duplicateItem {
                    }
                    _ = try? store.items(matching: ItemQuery(.genericPassword, [.service: "conc"], limit: .all, returning: .attributes))
                } catch {
                    fail("\(account): \(error)")
                }
            }
        }
        try verify(store, problems: problems, wins: racedWins.load(ordering: .relaxed))
    }

    /// The same work through the async API, from `workers` tasks: half of them preferring the store's executor
    /// (its thread pool, where their calls run on the thread they are on) and half plain tasks (whose calls are
    /// handed to the pool), all at once; the final state is checked as ``run(against:)`` checks it.
    public func runAsync(against subject: ConformanceSubject) async throws {
        let store = try subject.make(["group.main"])
        let problems = Locked<[String]>([])
        let racedWins = Locked(0)
        let n = itemsPerWorker
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<workers {
                group.addTask(executorPreference: w % 2 == 0 ? store.threadPool : nil) {
                    func fail(_ s: String) { problems.withLock { $0.append("task \(w): \(s)") } }
                    for i in 0..<n {
                        let account = "w\(w)-i\(i)"
                        let key: [AttributeName: AttributeValue] = [.service: "conc", .account: .string(account)]
                        do throws(SecureStoreError) {
                            try await store.add(NewItem(.genericPassword, key, data: Data(account.utf8)), timeout: nil)
                            let got = try await store.item(matching: ItemQuery(.genericPassword, key, returning: .data), timeout: nil)
                            if got?.data != Data(account.utf8) { fail("read back wrong data for \(account)") }
                            if i % 2 == 1 {
                                let deleted = try await store.delete(ItemQuery(.genericPassword, key), timeout: nil)
                                if deleted != 1 { fail("deleted \(deleted) for \(account)") }
                            } else {
                                try await store.update(ItemQuery(.genericPassword, key), with: ItemChanges([.label: .string("L\(w)")]),
                                                       timeout: nil)
                            }
                            do throws(SecureStoreError) {
                                try await store.add(NewItem(.genericPassword, [.service: "race", .account: .string("r\(i)")]), timeout: nil)
                                racedWins.withLock { $0 += 1 }
                            } catch where error.code == .duplicateItem {
                            }
                        } catch {
                            fail("\(account): \(error)")
                        }
                    }
                }
            }
        }
        try verify(store, problems: problems, wins: racedWins.withLock { $0 })
    }

    /// The final state after the workers: no problem reported, one win per raced item, every even item left
    /// with its worker's label and every odd one gone.
    private func verify(_ store: any SecureStore, problems: Locked<[String]>, wins: Int) throws {
        let n = itemsPerWorker
        if let first = problems.withLock({ $0.first }) {
            throw ConformanceFailure(message: first, file: #fileID, line: #line)
        }
        guard wins == n else {
            throw ConformanceFailure(message: "racing adds succeeded \(wins) times, expected \(n)", file: #fileID, line: #line)
        }
        let left = try store.items(matching: ItemQuery(.genericPassword, [.service: "conc"], limit: .all, returning: .attributes))
        var expected = Set<String>()
        for w in 0..<workers { for i in stride(from: 0, to: n, by: 2) { expected.insert("w\(w)-i\(i)") } }
        let accounts = Set(left.compactMap { $0.attributes?[.account]?.text })
        guard accounts == expected, left.count == expected.count else {
            throw ConformanceFailure(message: "final state: \(left.count) items, expected \(expected.count)", file: #fileID, line: #line)
        }
        for item in left {
            guard let acct = item.attributes?[.account]?.text, let w = acct.split(separator: "-").first?.dropFirst(),
                  item.attributes?[.label] == .string("L\(w)")
            else {
                throw ConformanceFailure(message: "an update was lost: \(item)", file: #fileID, line: #line)
            }
        }
        let raced = try store.items(matching: ItemQuery(.genericPassword, [.service: "race"], limit: .all))
        _ = raced
        guard try store.count(ItemQuery(.genericPassword, [.service: "race"])) == n else {
            throw ConformanceFailure(message: "raced items: expected \(n)", file: #fileID, line: #line)
        }
    }
}
