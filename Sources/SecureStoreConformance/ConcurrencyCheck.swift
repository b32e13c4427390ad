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
        if let first = problems.withLock({ $0.first }) {
            throw ConformanceFailure(message: first, file: #fileID, line: #line)
        }
        let wins = racedWins.load(ordering: .relaxed)
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
