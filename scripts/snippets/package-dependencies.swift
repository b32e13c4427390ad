// swift-tools-version:6.1
// For a manifest's `dependencies:` entries shown on their own.
import PackageDescription

let package = Package(name: "App", dependencies: [
// snippet
])
