// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SecureStore",
    products: [
        .library(name: "SecureStore", targets: ["SecureStore"]),
        .library(name: "InMemoryStore", targets: ["InMemoryStore"]),
        .library(name: "SecureStoreConformance", targets: ["SecureStoreConformance"]),
        .library(name: "SecItem", targets: ["SecItem"]),
        .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
        .executable(name: "securestore-bench", targets: ["securestore-bench"]),
        .library(name: "SecretServiceStore", targets: ["SecretServiceStore"]),
        .library(name: "PostgresStore", targets: ["PostgresStore"]),
        // libFuzzer harnesses (scripts/fuzz.sh builds them with -sanitize=fuzzer,address).
        .executable(name: "fuzz-secitem", targets: ["fuzz-secitem"]),
        .executable(name: "fuzz-config", targets: ["fuzz-config"]),
        .executable(name: "fuzz-record", targets: ["fuzz-record"]),
        .executable(name: "fuzz-export", targets: ["fuzz-export"]),
    ],
    targets: [
        // The core: protocol, typed queries, SecItem semantics, errors. Imports no C library and no backend.
        .target(name: "SecureStore", path: "Sources/SecureStore"),
        // The reusable conformance suite (a library, so third-party backends can run it too).
        .target(name: "SecureStoreConformance", dependencies: ["SecureStore"], path: "Sources/SecureStoreConformance"),

        // Backends.
        .target(name: "InMemoryStore", dependencies: ["SecureStore"], path: "Backends/InMemory"),
        .systemLibrary(name: "CSQLite", path: "Backends/SQLite/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // Encryption shared by the encrypted backends: keys, blind indexes, sealed records (libsodium).
        .systemLibrary(name: "CSodium", path: "Backends/Crypto/CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        // The Linux key-management system calls (no library: the kernel keyring cache of `unlock`).
        .systemLibrary(name: "CKeyctl", path: "Backends/Crypto/CKeyctl"),
        .target(name: "SecureStoreCrypto", dependencies: ["SecureStore", "CSodium", "CKeyctl"],
                path: "Backends/Crypto/SecureStoreCrypto"),
        .target(name: "SQLiteStore", dependencies: ["SecureStore", "SecureStoreCrypto", "CSQLite"],
                path: "Backends/SQLite/SQLiteStore"),
        // Helper process for the SQLite multi-process and crash tests.
        .executableTarget(name: "securestore-sqlite-worker", dependencies: ["SecureStore", "SQLiteStore"],
                          path: "Backends/SQLite/Worker"),

        // Apple's SecItem functions and kSec constants over the process-wide store.
        .target(name: "SecItem", dependencies: ["SecureStore", "SecureStoreBackends"], path: "Sources/SecItem"),

        // Registers this package's backends for selection by name.
        .target(name: "SecureStoreBackends", dependencies: ["SecureStore", "InMemoryStore", "SQLiteStore", "SecretServiceStore",
                                                               "PostgresStore"],
                path: "Sources/SecureStoreBackends"),
        // The command-line tool.
        .executableTarget(name: "securestore", dependencies: ["SecureStore", "SecureStoreBackends", "SQLiteStore"],
                          path: "Sources/securestore"),
        .systemLibrary(name: "CSecret", path: "Backends/SecretService/CSecret", pkgConfig: "libsecret-1",
                       providers: [.apt(["libsecret-1-dev"])]),
        .target(name: "SecretServiceStore", dependencies: ["SecureStore", "CSecret"],
                path: "Backends/SecretService/SecretServiceStore"),
        // Opens a Secret Service store in a fresh process and prints the outcome (for the no-bus test).
        .executableTarget(name: "securestore-secretservice-probe", dependencies: ["SecureStore", "SecretServiceStore"],
                          path: "Backends/SecretService/Probe"),

        .systemLibrary(name: "CLibPQ", path: "Backends/PostgreSQL/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .target(name: "PostgresStore", dependencies: ["SecureStore", "SecureStoreCrypto", "CLibPQ"],
                path: "Backends/PostgreSQL/PostgresStore"),
        // Helper process for the PostgreSQL multi-process tests (also runs the same sequence on SQLite).
        .executableTarget(name: "securestore-postgres-worker", dependencies: ["SecureStore", "PostgresStore", "SQLiteStore", "TestSupport"],
                          path: "Backends/PostgreSQL/Worker"),

        // Example program: the seeds' scenario.
        .executableTarget(name: "securestore-example", dependencies: ["SecureStore", "SecureStoreBackends"],
                          path: "Examples/SeedScenario"),
        // The seeds' Objective-C wrapper ported to Swift: only `import SecItem` differs from iOS code.
        .executableTarget(name: "secitem-port-example", dependencies: ["SecItem"], path: "Examples/SecItemPort"),

        // Benchmark: every backend against its limit (Dictionary+Mutex; raw sqlite3+libsodium; raw libsecret; raw libpq).
        .executableTarget(name: "securestore-bench",
                          dependencies: ["SecureStore", "SecureStoreConformance", "InMemoryStore", "SQLiteStore",
                                         "CSQLite", "CSodium", "SecretServiceStore", "CSecret", "PostgresStore",
                                         "CLibPQ"],
                          path: "Benchmarks/SecureStoreBench"),

        // Fuzzing: the exercise functions (shared by the harnesses and Tests/FuzzRegressionTests), one
        // executable per harness (Fuzz/README.md).
        .target(name: "SecureStoreFuzzing",
                dependencies: ["SecureStore", "SecItem", "InMemoryStore", "SecureStoreBackends", "SQLiteStore",
                               "SecureStoreCrypto", "CSQLite"],
                path: "Fuzz/Exercises"),
        .executableTarget(name: "fuzz-secitem", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/SecItem"),
        .executableTarget(name: "fuzz-config", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/Config"),
        .executableTarget(name: "fuzz-record", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/Record"),
        .executableTarget(name: "fuzz-export", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/Export"),

        // Tests. TestSupport: built products, child processes and small helpers shared by the test targets and
        // the test-only workers.
        .target(name: "TestSupport", dependencies: ["SecureStore"], path: "Tests/TestSupport"),
        .testTarget(name: "SecureStoreTests", dependencies: ["SecureStore", "InMemoryStore"]),
        .testTarget(name: "SecItemTests", dependencies: ["SecItem", "SecureStore", "InMemoryStore", "SQLiteStore",
                                                      "SecureStoreConformance"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "securestore"]),
        .testTarget(name: "SQLiteStoreTests", dependencies: ["SecureStore", "SQLiteStore", "SecureStoreCrypto", "CSQLite", "TestSupport"]),
        .testTarget(name: "ConformanceTests", dependencies: ["SecureStore", "SecureStoreConformance", "InMemoryStore",
                                                             "SQLiteStore", "SecretServiceStore", "PostgresStore"]),
        .testTarget(name: "SecretServiceStoreTests", dependencies: ["SecureStore", "SecretServiceStore"]),
        .testTarget(name: "PostgresStoreTests", dependencies: ["SecureStore", "PostgresStore", "SQLiteStore", "TestSupport"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["SecureStoreFuzzing"]),
    ]
)

// Strict settings for every non-system target, in one place (as swift-log / swift-metrics do).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
