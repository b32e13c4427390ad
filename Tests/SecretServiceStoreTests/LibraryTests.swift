import Foundation
import Testing
import SecureStoreCore
import TestSupport
@testable import SecureStoreSecretService

/// libsecret is opened at the backend's first use (SecretServiceConnection.swift); these need no bus.
@Suite("Secret Service: libsecret loaded at first use")
struct LibraryTests {
    @Test("a libsecret that cannot be loaded is the backend's notAvailable error, naming the library and the package")
    func missingLibrary() {
        let soname = "libsecret-securestore-missing.so.0"
        guard case .failure(let error) = LibSecret.load(soname: soname).result else {
            Issue.record("loading \(soname) succeeded")
            return
        }
        #expect(error.code == .notAvailable)
        #expect(error.message.contains(soname))
        #expect(error.message.contains("apt install \(LibSecret.debianPackage)"))
        #expect(error.message.contains("secret-service"))
    }

    @Test("the installed libsecret has every function the backend calls")
    func installedLibrary() throws {
        _ = try LibSecret.load(soname: LibSecret.soname).result.get()
    }

    /// glib-subset.h declares the part of GLib, GIO and libsecret the backend uses (so building needs no GLib
    /// headers); compiled with SS_GLIB_CHECK against the real headers, the compiler compares every prototype
    /// with GLib's and checks every constant and layout, and shim.h's helpers type-check against the real API.
    @Test("glib-subset.h agrees with the installed GLib, GIO and libsecret headers",
          .enabled(if: Self.compiler != nil && Self.headerFlags != nil
                       || ProcessInfo.processInfo.environment["SECURESTORE_REQUIRE_ALL_BACKENDS"] == "1",
                   "needs a C compiler and libsecret-1-dev (pkg-config libsecret-1) to compare with the real headers"))
    func declarationsMatchTheRealHeaders() throws {
        // The README's test command (SECURESTORE_REQUIRE_ALL_BACKENDS=1) fails here rather than skip the check.
        let compiler = try #require(Self.compiler, "no C compiler on PATH")
        let flags = try #require(Self.headerFlags, "pkg-config libsecret-1 failed: install libsecret-1-dev")
        let dir = packageRoot.appendingPathComponent("Backends/SecretService/CSecret").path
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("ss-glib-check-\(UUID().uuidString).c")
        try Data("#include \"shim.h\"\n#include \"calls.h\"\n#include \"watch.h\"\n#include \"raw.h\"\n".utf8).write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        let (status, output) = try Self.run(compiler, ["-fsyntax-only", "-Werror", "-Wall", "-DSS_GLIB_CHECK", "-I", dir]
                                            + flags + [source.path])
        #expect(status == 0, "\(output)")
    }

    /// A C compiler: `cc`, `clang` or `gcc` on `PATH` (the Swift toolchain's own `clang` on a machine with
    /// nothing else), else in /usr/bin.
    static let compiler: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
        for name in ["cc", "clang", "gcc"] {
            for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/" + name) {
                return folder + "/" + name
            }
        }
        return nil
    }()

    static let headerFlags: [String]? = {
        guard let out = try? run("/usr/bin/pkg-config", ["--cflags", "libsecret-1"]), out.status == 0 else { return nil }
        return out.output.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    }()

    static func run(_ path: String, _ args: [String]) throws -> (status: Int32, output: String) {
        guard FileManager.default.isExecutableFile(atPath: path) else { return (127, "\(path) not found") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = args
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
