import Foundation
import SecureStore
import InMemoryStore
import SQLiteStore

/// One backend under benchmark: how to make a store, the limits it is compared with, and its goals.
/// Adding a backend is adding one entry to ``BackendEntry/all``.
struct BackendEntry: Sendable {
    let name: String
    /// A fresh, empty store whose files (if any) live in `folder`.
    let makeStore: @Sendable (_ folder: String) throws -> any SecureStore
    /// The SQLite database file in `folder` whose size (with its WAL, after a checkpoint) is reported.
    let databaseFile: (@Sendable (_ folder: String) -> String)?
    /// The same work done directly; the first one is the reference for the ratio column.
    let limits: [LimitEntry]
    let goals: [Goal]
}

struct LimitEntry: Sendable {
    let name: String
    let make: @Sendable (_ folder: String) throws -> any BenchTarget
}

/// A target to meet, evaluated on the measured figures.
struct Goal: Sendable {
    enum Kind: Sendable {
        /// Worst backend median / reference-limit median of `op` over every N and size is at most `max`.
        case ratioToLimit(Op, max: Double)
        /// Median of `op` at the largest N over the smallest N (1,000 → 100,000), worst size, at most `max`.
        case growth(Op, max: Double)
        /// Clearing a store of `items` items takes under `seconds`.
        case clearUnder(items: Int, seconds: Double)
    }
    let text: String
    let kind: Kind
}

extension BackendEntry {
    static let all: [BackendEntry] = [memory, sqlite] + postgresEntries   // postgres: see PostgresBench.swift

    static let memory = BackendEntry(
        name: "memory",
        makeStore: { (_: String) throws -> any SecureStore in try InMemoryStore() },
        databaseFile: nil,
        limits: [LimitEntry(name: "Dictionary+Mutex",
                            make: { (_: String) throws -> any BenchTarget in DictionaryLimit() })],
        goals: [
            Goal(text: "lookup within 10× of Dictionary+Mutex", kind: .ratioToLimit(.lookup, max: 10)),
            Goal(text: "add within 10× of Dictionary+Mutex", kind: .ratioToLimit(.add, max: 10)),
            Goal(text: "lookup flat from N=1,000 to 100,000 (within 1.5×)", kind: .growth(.lookup, max: 1.5)),
        ])

    static let sqlite = BackendEntry(
        name: "sqlite",
        makeStore: { (folder: String) throws -> any SecureStore in
            var key = Data(count: 32)
            var generator = SystemRandomNumberGenerator()
            for i in 0..<32 { key[i] = UInt8.random(in: 0...255, using: &generator) }
            return try SQLiteStore(path: folder + "/store.db", key: .raw(key))
        },
        databaseFile: { (folder: String) -> String in folder + "/store.db" },
        limits: [
            LimitEntry(name: "raw sqlite3+XChaCha20",
                       make: { (folder: String) throws -> any BenchTarget in
                           try RawSQLiteLimit(path: folder + "/raw.db", encrypted: true)
                       }),
            LimitEntry(name: "raw sqlite3, plain",
                       make: { (folder: String) throws -> any BenchTarget in
                           try RawSQLiteLimit(path: folder + "/raw-plain.db", encrypted: false)
                       }),
        ],
        goals: [
            Goal(text: "add within 1.3× of raw sqlite3+XChaCha20 (same durability)", kind: .ratioToLimit(.add, max: 1.3)),
            Goal(text: "update within 1.3× of raw sqlite3+XChaCha20", kind: .ratioToLimit(.update, max: 1.3)),
            Goal(text: "delete within 1.3× of raw sqlite3+XChaCha20", kind: .ratioToLimit(.delete, max: 1.3)),
            Goal(text: "lookup within 2× of raw encrypted lookup", kind: .ratioToLimit(.lookup, max: 2)),
            Goal(text: "lookup growth from N=1,000 to 100,000 within 1.5×", kind: .growth(.lookup, max: 1.5)),
            Goal(text: "clear of 100,000 items under 1 s", kind: .clearUnder(items: 100_000, seconds: 1)),
        ])
}
