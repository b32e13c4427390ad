// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "SecureStore",
    products: [
        .library(name: "SecureStoreCore", targets: ["SecureStoreCore"]),
        .library(name: "SecureStoreInMemory", targets: ["SecureStoreInMemory"]),
        .library(name: "SecureStoreConformance", targets: ["SecureStoreConformance"]),
        .library(name: "SecItem", targets: ["SecItem"]),
        .library(name: "SecureStoreBackends", targets: ["SecureStoreBackends"]),
        .library(name: "SecureStoreProcess", targets: ["SecureStoreProcess"]),
        .library(name: "SecureStoreSQLite", targets: ["SecureStoreSQLite"]),
        // The encrypted backends' keys (StoreKey, KeyFile): named by programs that pass a key to SQLite or PostgreSQL.
        .library(name: "SecureStoreCrypto", targets: ["SecureStoreCrypto"]),
        .library(name: "SecureStoreSecretService", targets: ["SecureStoreSecretService"]),
        .library(name: "SecureStorePostgres", targets: ["SecureStorePostgres"]),
        .executable(name: "securestore", targets: ["securestore"]),
        // Credential helpers for git and docker on the configured store.
        .executable(name: "git-credential-securestore", targets: ["git-credential-securestore"]),
        .executable(name: "docker-credential-securestore", targets: ["docker-credential-securestore"]),
    ],
    // One trait per optional backend, all on by default. A disabled trait keeps its backend (and its C
    // library) out of SecureStoreBackends and SecItem: `traits: ["SQLite"]` needs only libsqlite3-dev and
    // libsodium-dev; `traits: []` needs no C library (InMemoryStore only).
    traits: [
        .trait(name: "SQLite", description: "The encrypted SQLite backend (libsqlite3, libsodium)."),
        .trait(name: "SecretService", description: "The Secret Service backend over D-Bus (libsecret, GLib)."),
        .trait(name: "Postgres", description: "The end-to-end encrypted PostgreSQL backend (libpq, libsodium)."),
        .default(enabledTraits: ["SQLite", "SecretService", "Postgres"]),
    ],
    targets: [
        // The core: protocol, typed queries, SecItem semantics, errors. Imports no C library and no backend.
        .target(name: "SecureStoreCore", path: "Sources/SecureStoreCore"),
        // The XDG folders every path of the package follows (package-internal: no product).
        .target(name: "SecureStorePaths", path: "Sources/SecureStorePaths"),
        // The reusable conformance suite (a library, so third-party backends can run it too).
        .target(name: "SecureStoreConformance", dependencies: ["SecureStoreCore"], path: "Sources/SecureStoreConformance"),

        // Backends.
        .target(name: "SecureStoreInMemory", dependencies: ["SecureStoreCore"], path: "Backends/InMemory"),
        .systemLibrary(name: "CSQLite", path: "Backends/SQLite/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // Encryption shared by the encrypted backends: keys, blind indexes, sealed records (libsodium).
        .systemLibrary(name: "CSodium", path: "Backends/Crypto/CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        // The Linux key-management system calls (no library: the kernel keyring cache of `unlock`).
        .systemLibrary(name: "CKeyctl", path: "Backends/Crypto/CKeyctl"),
        .target(name: "SecureStoreCrypto", dependencies: ["SecureStoreCore", "SecureStorePaths", "CSodium", "CKeyctl"],
                path: "Backends/Crypto/SecureStoreCrypto"),
        .target(name: "SecureStoreSQLite", dependencies: ["SecureStoreCore", "SecureStorePaths", "SecureStoreCrypto", "CSQLite"],
                path: "Backends/SQLite/SQLiteStore"),
        // Helper process for the SQLite multi-process and crash tests.
        .executableTarget(name: "securestore-sqlite-worker", dependencies: ["SecureStoreCore", "SecureStoreSQLite"],
                          path: "Tests/Workers/SQLiteWorker"),

        // Apple's SecItem functions and kSec constants over the process-wide store.
        .target(name: "SecItem", dependencies: ["SecureStoreCore", "SecureStoreBackends"], path: "Sources/SecItem"),

        // Selection by name: the registry, the configuration file and its parser, and this package's built-in
        // backends registered (only those whose trait is enabled).
        .target(name: "SecureStoreBackends",
                dependencies: ["SecureStoreCore", "SecureStorePaths", "SecureStoreInMemory",
                               .target(name: "SecureStoreSQLite", condition: .when(traits: ["SQLite"])),
                               .target(name: "SecureStoreCrypto", condition: .when(traits: ["SQLite", "Postgres"])),
                               .target(name: "SecureStoreSecretService", condition: .when(traits: ["SecretService"])),
                               .target(name: "SecureStorePostgres", condition: .when(traits: ["Postgres"]))],
                path: "Sources/SecureStoreBackends"),
        // The command-line tool: its command table and parser (no I/O, fuzzed), process hardening, the tool.
        .target(name: "SecureStoreCLI", dependencies: ["SecureStoreCore"], path: "Sources/SecureStoreCLI"),
        .systemLibrary(name: "CProcessControl", path: "Sources/CProcessControl"),
        // Opt-in process hardening (non-dumpable) for programs that hold secrets: the tool, the helpers, yours.
        .target(name: "SecureStoreProcess", dependencies: ["CProcessControl"], path: "Sources/SecureStoreProcess"),
        // Its backend modules follow the traits, as SecureStoreBackends' do: with none, it runs on memory alone.
        .executableTarget(name: "securestore", dependencies: ["SecureStoreCore", "SecureStoreCLI", "SecureStoreBackends",
                                                              .target(name: "SecureStoreSQLite", condition: .when(traits: ["SQLite"])),
                                                              .target(name: "SecureStoreCrypto", condition: .when(traits: ["SQLite", "Postgres"])),
                                                              .target(name: "SecureStorePostgres", condition: .when(traits: ["Postgres"])),
                                                              "SecureStoreProcess"],
                          path: "Sources/securestore"),
        // git's and docker's credential-helper protocols (no I/O), and the two helper executables.
        .target(name: "SecureStoreCredentials", dependencies: ["SecureStoreCore", "SecureStoreProcess", "SecureStoreCLI"],
                path: "Sources/SecureStoreCredentials"),
        .executableTarget(name: "git-credential-securestore",
                          dependencies: ["SecureStoreCore", "SecureStoreBackends", "SecureStoreCredentials"],
                          path: "Sources/git-credential-securestore"),
        .executableTarget(name: "docker-credential-securestore",
                          dependencies: ["SecureStoreCore", "SecureStoreBackends", "SecureStoreCredentials"],
                          path: "Sources/docker-credential-securestore"),
        // libsecret, GIO and GLib declared (glib-subset.h), not linked: the backend opens libsecret-1.so.0 at first use.
        .systemLibrary(name: "CSecret", path: "Backends/SecretService/CSecret"),
        .target(name: "SecureStoreSecretService", dependencies: ["SecureStoreCore", "SecureStorePaths", "CSecret"],
                path: "Backends/SecretService/SecretServiceStore"),
        // Opens a Secret Service store in a fresh process and prints the outcome (for the no-bus test).
        .executableTarget(name: "securestore-secretservice-probe", dependencies: ["SecureStoreCore", "SecureStoreSecretService", "TestSupport", "CProbe"],
                          path: "Tests/Workers/SecretServiceProbe"),
        // Stops or kills the Secret Service daemon as the probe sends a chosen call (the fault tests).
        .systemLibrary(name: "CProbe", path: "Tests/Workers/CProbe"),

        // libpq's headers only (libpq-dev): the backend opens libpq.so.5 at its first use, so nothing links it.
        .systemLibrary(name: "CLibPQ", path: "Backends/PostgreSQL/CLibPQ"),
        .target(name: "SecureStorePostgres", dependencies: ["SecureStoreCore", "SecureStorePaths", "SecureStoreCrypto", "CLibPQ"],
                path: "Backends/PostgreSQL/PostgresStore"),
        // Runs the async API's scenarios in a process of its own (Tests/SecureStoreTests/AsyncTests.swift).
        .executableTarget(name: "securestore-async-probe", dependencies: ["SecureStoreCore", "TestSupport"],
                          path: "Tests/Workers/AsyncProbe"),
        // Forks from a single-threaded process and prints each process's persistent references (PersistentRefForkTests).
        .executableTarget(name: "securestore-fork-probe", dependencies: ["SecureStoreCore"], path: "Tests/Workers/ForkProbe"),
        // SecItem calls on the process-wide default store, as an Apple-style program makes them (FileSafety tests).
        .executableTarget(name: "securestore-secitem-probe", dependencies: ["SecItem", "SecureStorePaths"], path: "Tests/Workers/SecItemProbe"),
        // Helper process for the PostgreSQL multi-process tests (also runs the same sequence on SQLite).
        .executableTarget(name: "securestore-postgres-worker", dependencies: ["SecureStoreCore", "SecureStorePostgres", "SecureStoreSQLite", "TestSupport"],
                          path: "Tests/Workers/PostgresWorker"),

        // Example program: the seeds' scenario.
        .executableTarget(name: "securestore-example", dependencies: ["SecureStoreCore", "SecureStoreBackends"],
                          path: "Examples/SeedScenario"),
        // The seeds' Objective-C wrapper ported to Swift: only `import SecItem` differs from iOS code.
        .executableTarget(name: "secitem-port-example", dependencies: ["SecItem"], path: "Examples/SecItemPort"),

        // Benchmark: every backend against its limit (Dictionary+Mutex; raw sqlite3+libsodium; raw libsecret; raw libpq).
        .executableTarget(name: "securestore-bench",
                          dependencies: ["SecureStoreCore", "SecureStoreConformance", "SecureStoreInMemory", "SecureStoreSQLite", "SecItem",
                                         "CSQLite", "CSodium", "SecureStoreSecretService", "CSecret", "SecureStorePostgres",
                                         "CLibPQ"],
                          path: "Benchmarks/SecureStoreBench",
                          // The raw limits call libpq and libsecret directly.
                          linkerSettings: [.linkedLibrary("pq"), .linkedLibrary("secret-1")]),

        // Fuzzing: the exercise functions (shared by the harnesses and Tests/FuzzRegressionTests), one
        // executable per harness (Fuzz/README.md).
        .target(name: "SecureStoreFuzzing",
                dependencies: ["SecureStoreCore", "SecItem", "SecureStoreInMemory", "SecureStoreBackends", "SecureStoreSQLite",
                               "SecureStoreCrypto", "CSQLite", "SecureStoreCLI"],
                path: "Fuzz/Exercises"),
        .executableTarget(name: "fuzz-secitem", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/SecItem"),
        .executableTarget(name: "fuzz-config", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/Config"),
        .executableTarget(name: "fuzz-record", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/Record"),
        .executableTarget(name: "fuzz-export", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/Export"),
        .executableTarget(name: "fuzz-cli", dependencies: ["SecureStoreFuzzing"], path: "Fuzz/CLI"),

        // Tests. TestSupport: built products, child processes and small helpers shared by the test targets and
        // the test-only workers.
        .target(name: "TestSupport", dependencies: ["SecureStoreCore", "SecureStoreInMemory"], path: "Tests/TestSupport"),
        .testTarget(name: "SecureStoreTests", dependencies: ["SecureStoreCore", "SecureStoreInMemory", "SecureStoreBackends", "TestSupport",
                                                              "SecureStoreConformance"]),
        .testTarget(name: "SecItemTests", dependencies: ["SecItem", "SecureStoreCore", "SecureStoreInMemory", "SecureStoreSQLite",
                                                      "SecureStoreConformance"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "SecureStoreCLI", "SecureStoreCore", "SecureStorePaths"]),
        .testTarget(name: "SQLiteStoreTests", dependencies: ["SecureStoreCore", "SecureStorePaths", "SecureStoreSQLite", "SecureStoreCrypto", "CSQLite", "TestSupport"],
                    exclude: ["Fixtures"]),   // committed store files the tests read from the source tree
        .testTarget(name: "ConformanceTests", dependencies: ["SecureStoreCore", "SecureStoreConformance", "SecureStoreInMemory",
                                                             "SecureStoreSQLite", "SecureStoreSecretService", "SecureStorePostgres", "TestSupport"]),
        .testTarget(name: "SecretServiceStoreTests", dependencies: ["SecureStoreCore", "SecureStoreSecretService", "TestSupport"]),
        .testTarget(name: "PostgresStoreTests", dependencies: ["SecureStoreCore", "SecureStoreCrypto", "SecureStorePostgres", "SecureStoreSQLite", "TestSupport"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["SecureStoreFuzzing", "SecureStoreCLI"]),
        // Apple-style Keychain code against memory, SQLite and Secret Service, compiled in both language modes:
        // Tests/SecItemPortingSwift5Tests is a symbolic link to Tests/SecItemPortingTests.
        .testTarget(name: "SecItemPortingTests", dependencies: ["SecItem", "SecureStoreCore", "SecureStoreInMemory", "SecureStoreSQLite",
                                                                "SecureStoreSecretService", "TestSupport"]),
        .testTarget(name: "SecItemPortingSwift5Tests", dependencies: ["SecItem", "SecureStoreCore", "SecureStoreInMemory", "SecureStoreSQLite",
                                                                      "SecureStoreSecretService", "TestSupport"],
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "CredentialHelperTests", dependencies: ["SecureStoreCredentials", "SecureStoreCore", "SecureStoreInMemory",
                                                                  "SecureStorePaths", "SecItem",
                                                                  "SecureStoreConformance",
                                                                  "TestSupport"]),
    ]
)

// Strict settings for every non-system target, in one place (as swift-log / swift-metrics do).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
