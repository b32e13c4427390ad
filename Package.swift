// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SecureStore",
    products: [
        .library(name: "SecureStore", targets: ["SecureStore"]),
        .library(name: "InMemoryStore", targets: ["InMemoryStore"]),
        .library(name: "SecureStoreConformance", targets: ["SecureStoreConformance"]),
        .library(name: "SecretServiceStore", targets: ["SecretServiceStore"]),
    ],
    targets: [
        // The core: protocol, typed queries, SecItem semantics, errors. Imports no C library and no backend.
        .target(name: "SecureStore", path: "Sources/SecureStore"),
        // The reusable conformance suite (a library, so third-party backends can run it too).
        .target(name: "SecureStoreConformance", dependencies: ["SecureStore"], path: "Sources/SecureStoreConformance"),

        // Backends.
        .target(name: "InMemoryStore", dependencies: ["SecureStore"], path: "Backends/InMemory"),
        .systemLibrary(name: "CSecret", path: "Backends/SecretService/CSecret", pkgConfig: "libsecret-1",
                       providers: [.apt(["libsecret-1-dev"])]),
        .target(name: "SecretServiceStore", dependencies: ["SecureStore", "CSecret"],
                path: "Backends/SecretService/SecretServiceStore"),
        // Opens a Secret Service store in a fresh process and prints the outcome (for the no-bus test).
        .executableTarget(name: "securestore-secretservice-probe", dependencies: ["SecureStore", "SecretServiceStore"],
                          path: "Backends/SecretService/Probe"),

        // Example program: the seeds' scenario.
        .executableTarget(name: "securestore-example", dependencies: ["SecureStore", "InMemoryStore"],
                          path: "Examples/SeedScenario"),

        // Tests.
        .testTarget(name: "SecureStoreTests", dependencies: ["SecureStore", "InMemoryStore"]),
        .testTarget(name: "ConformanceTests", dependencies: ["SecureStore", "SecureStoreConformance", "InMemoryStore",
                                                             "SecretServiceStore"]),
        .testTarget(name: "SecretServiceStoreTests", dependencies: ["SecureStore", "SecretServiceStore"]),
    ]
)

// Strict settings for every non-system target, in one place (as swift-log / swift-metrics do).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
