// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SecureStore",
    products: [
        .library(name: "SecureStore", targets: ["SecureStore"]),
        .library(name: "InMemoryStore", targets: ["InMemoryStore"]),
        .library(name: "SecureStoreConformance", targets: ["SecureStoreConformance"]),
        .library(name: "SecItem", targets: ["SecItem"]),
    ],
    targets: [
        // The core: protocol, typed queries, SecItem semantics, errors. Imports no C library and no backend.
        .target(name: "SecureStore", path: "Sources/SecureStore"),
        // The reusable conformance suite (a library, so third-party backends can run it too).
        .target(name: "SecureStoreConformance", dependencies: ["SecureStore"], path: "Sources/SecureStoreConformance"),

        // Backends.
        .target(name: "InMemoryStore", dependencies: ["SecureStore"], path: "Backends/InMemory"),

        // Apple's SecItem functions and kSec constants over the process-wide store.
        .target(name: "SecItem", dependencies: ["SecureStore"], path: "Sources/SecItem"),

        // Registers this package's backends for selection by name.
        .target(name: "SecureStoreBackends", dependencies: ["SecureStore", "InMemoryStore"], path: "Sources/SecureStoreBackends"),
        // The command-line tool.
        .executableTarget(name: "securestore", dependencies: ["SecureStore", "SecureStoreBackends"], path: "Sources/securestore"),

        // Example program: the seeds' scenario.
        .executableTarget(name: "securestore-example", dependencies: ["SecureStore", "InMemoryStore"],
                          path: "Examples/SeedScenario"),
        // The seeds' Objective-C wrapper ported to Swift: only `import SecItem` differs from iOS code.
        .executableTarget(name: "secitem-port-example", dependencies: ["SecItem"], path: "Examples/SecItemPort"),

        // Tests.
        .testTarget(name: "SecureStoreTests", dependencies: ["SecureStore", "InMemoryStore"]),
        .testTarget(name: "SecItemTests", dependencies: ["SecItem", "SecureStore", "InMemoryStore"]),
        .testTarget(name: "ConformanceTests", dependencies: ["SecureStore", "SecureStoreConformance", "InMemoryStore"]),
    ]
)

// Strict settings for every non-system target, in one place (as swift-log / swift-metrics do).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
