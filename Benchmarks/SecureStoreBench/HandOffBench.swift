import Foundation
import SecureStoreCore

// `securestore-bench --hand-off`: what handing one call to a store's thread pool costs, without the store:
// a call that does nothing, run N times through a `StoreThreadPool` of 3 threads (SQLite's concurrency) by
// 1 and 16 tasks, against calling it directly. The difference is the fixed cost every async call of a
// store that may block pays on top of the store's own work.
enum HandOffBench {
    static func run() throws -> String {
        let pool = StoreThreadPool(name: "hand-off", size: 3)
        let total = 40_000
        var lines = ["| callers | µs per call through the pool (async) | calls/s |", "|---:|---:|---:|"]
        for callers in [1, 16] {
            var best = 0.0
            for _ in 0..<3 {
                let rate = try ConcurrencyBench.tasks(callers, total) { _, i in
                    let r = try await pool.run(timeout: nil, "no-op") { () throws(SecureStoreError) -> Int in i &+ 1 }
                    if r == 0 { throw BenchFailure("impossible") }
                }
                best = max(best, rate)
            }
            lines.append("| \(callers) | " + String(format: "%.2f", 1e6 / best) + " | \(Int(best)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
