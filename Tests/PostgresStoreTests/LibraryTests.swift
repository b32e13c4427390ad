import Foundation
import Testing
import SecureStoreCore
@testable import SecureStorePostgres

/// libpq is opened at the backend's first use (PostgresConnection.swift); these need no server.
@Suite("PostgreSQL: libpq loaded at first use")
struct LibPQLoadingTests {
    @Test("a libpq that cannot be loaded is the backend's notAvailable error, naming the library and the package")
    func missingLibrary() {
        let soname = "libpq-securestore-missing.so.5"
        guard case .failure(let error) = LibPQ.load(soname: soname).result else {
            Issue.record("loading \(soname) succeeded")
            return
        }
        #expect(error.code == .notAvailable)
        #expect(error.message.contains(soname))
        #expect(error.message.contains("apt install \(LibPQ.debianPackage)"))
        #expect(error.message.contains("postgres"))
    }

    @Test("the installed libpq has every function the backend calls; a URL parses without a server")
    func installedLibrary() throws {
        _ = try LibPQ.load(soname: LibPQ.soname).result.get()
        try PostgresBackend.checkLibrary()
        let target = try PostgresConnection.parse("postgresql://user@db.example:5433/mydb")
        #expect(target.hosts == "db.example" && target.ports == "5433" && target.database == "mydb")
    }
}
