import Foundation
import SecureStoreCore
import SecureStoreInMemory
import SecureStoreSQLite
import SecureStoreSecretService

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
    /// The item counts N this backend is measured at.
    var counts: @Sendable (Options) -> [Int] = { $0.counts }
    /// Items are spread over this many services (list returns N / services items).
    var services = 100
    /// List returns secrets too (the Secret Service's match-all with secrets).
    var listWithSecrets = false
    /// Needs a running service (a session bus with an unlocked gnome-keyring): when it cannot be reached,
    /// the backend is reported as not measured, with the reason, and the run goes on.
    var needsService = false
    /// Items of the warm-up pass (untimed).
    var warmUpItems = 300
    /// Time the backend and its limits interleaved (see ``Runner``); off for the Secret Service, where the
    /// daemon's cost grows with every item it holds, so targets must not hold items at the same time.
    var interleave = true
    /// Drives the store through something other than the typed API (the SecItem functions).
    var makeTarget: (@Sendable (_ store: any SecureStore) -> any BenchTarget)? = nil
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
        /// Clearing a store of `items` items takes at most `max` times the reference limit's clear, worst size.
        case clearRatio(items: Int, max: Double)
        /// Worst backend median minus reference-limit median of `op` over every N and size, at most `micros`.
        case overLimit(Op, micros: Double)
        /// Worst backend median / the median of the limit whose name ends with `limit` (not the reference one),
        /// same `op`, N and size, at most `max`.
        case ratioToNamedLimit(Op, limit: String, max: Double)
    }
    let text: String
    let kind: Kind
}

extension BackendEntry {
    static let all: [BackendEntry] = [memory, secItem, sqlite, secItemSQLite, secretService] + postgresEntries   // postgres: see PostgresBench.swift

    /// Not interleaved: no disk noise to share, and alternating would cool the Dictionary's caches and
    /// flatter the ratio.
    static let memory: BackendEntry = {
        var entry = BackendEntry(
        name: "memory",
        makeStore: { (_: String) throws -> any SecureStore in try InMemoryStore() },
        databaseFile: nil,
        limits: [LimitEntry(name: "Dictionary+Mutex",
                            make: { (_: String) throws -> any BenchTarget in DictionaryLimit() })],
        goals: [
            Goal(text: "lookup within 10× of Dictionary+Mutex", kind: .ratioToLimit(.lookup, max: 10)),
            Goal(text: "add within 10× of Dictionary+Mutex", kind: .ratioToLimit(.add, max: 10)),
            Goal(text: "lookup flat from N=1,000 to 100,000 (within 1.5×)", kind: .growth(.lookup, max: 1.5)),
            Goal(text: "clear of 100,000 items within 3× of Dictionary removeAll", kind: .clearRatio(items: 100_000, max: 3)),
        ])
        entry.interleave = false
        return entry
    }()

    /// A new SQLite store `file` in `folder`, under a random raw key.
    static func makeSQLiteStore(_ folder: String, file: String = "store.db") throws -> SQLiteStore {
        var key = Data(count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in 0..<32 { key[i] = UInt8.random(in: 0...255, using: &generator) }
        return try SQLiteStore(path: folder + "/" + file, key: .raw(key))
    }

    /// The SQLite backend's reference limit: sqlite3 and libsodium called directly.
    static let rawSQLiteLimit = LimitEntry(name: "raw sqlite3+XChaCha20",
                                           make: { (folder: String) throws -> any BenchTarget in
                                               try RawSQLiteLimit(path: folder + "/raw.db", encrypted: true)
                                           })

    static let sqlite = BackendEntry(
        name: "sqlite",
        makeStore: { (folder: String) throws -> any SecureStore in try makeSQLiteStore(folder) },
        databaseFile: { (folder: String) -> String in folder + "/store.db" },
        limits: [
            rawSQLiteLimit,
            LimitEntry(name: "raw sqlite3, plain",
                       make: { (folder: String) throws -> any BenchTarget in
                           try RawSQLiteLimit(path: folder + "/raw-plain.db", encrypted: false)
                       }),
        ],
        goals: [
            Goal(text: "add within 1.3× of raw sqlite3+XChaCha20 (same durability)", kind: .ratioToLimit(.add, max: 1.3)),
            Goal(text: "update within 1.3× of raw sqlite3+XChaCha20", kind: .ratioToLimit(.update, max: 1.3)),
            Goal(text: "delete within 1.3× of raw sqlite3+XChaCha20", kind: .ratioToLimit(.delete, max: 1.3)),
            Goal(text: "lookup within 1.3× of raw sqlite3+XChaCha20", kind: .ratioToLimit(.lookup, max: 1.3)),
            Goal(text: "lookup growth from N=1,000 to 100,000 within 1.5×", kind: .growth(.lookup, max: 1.5)),
            Goal(text: "clear of 100,000 items under 1 s", kind: .clearUnder(items: 100_000, seconds: 1)),
        ])
}

extension BackendEntry {
    /// gnome-keyring over D-Bus, against raw libsecret calls on one connection to the same daemon. Each case
    /// gets its own namespace (backend) or tag (limit), so cases never see each other's items.
    static let secretService: BackendEntry = {
        var entry = BackendEntry(
            name: "secret-service",
            makeStore: { (folder: String) throws -> any SecureStore in
                try SecretServiceStore(namespace: "securestore-bench-\(getpid())-" + (folder as NSString).lastPathComponent)
            },
            databaseFile: nil,
            limits: [LimitEntry(name: "raw libsecret, one connection",
                                make: { (folder: String) throws -> any BenchTarget in
                                    try SecretServiceLimit(tag: "\(getpid())-" + (folder as NSString).lastPathComponent)
                                })],
            goals: [
                Goal(text: "add within 1.3× of raw libsecret (one connection)", kind: .ratioToLimit(.add, max: 1.3)),
                Goal(text: "lookup within 1.3× of raw libsecret (one connection)", kind: .ratioToLimit(.lookup, max: 1.3)),
                Goal(text: "match-all with secrets within 1.5× of SearchItems + bulk GetSecrets",
                     kind: .ratioToLimit(.list, max: 1.5)),
            ])
        entry.counts = { $0.secretServiceCounts }
        entry.services = 10
        entry.listWithSecrets = true
        entry.needsService = true
        entry.interleave = false
        entry.warmUpItems = 20
        return entry
    }()
}
