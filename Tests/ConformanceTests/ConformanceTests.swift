import Testing
import Foundation
import SecureStoreCore
import SecureStoreConformance
import TestSupport

/// Every rule of the SecItem semantics (SecureStoreCore.docc/Semantics.md) against every backend and the reference model, each pair reported on its own.
@Suite("Conformance")
struct ConformanceTests {
    @Test("rule", arguments: Subjects.all, ConformanceCheck.all)
    func rule(subject: ConformanceSubject, check: ConformanceCheck) throws {
        try check.run(against: subject)
    }

    /// The same seeded random operations against the reference model and one backend, compared step by step.
    @Test("differential", arguments: Subjects.backends)
    func differential(subject: ConformanceSubject) throws {
        let test = DifferentialTest(operations: subject.differentialOperations)
        let stores = try DifferentialTest.stores([.reference, subject])
        let report = try test.run(stores)
        print("[\(subject.name)] \(report)")
        #expect(report.operations == test.operations)
        #expect((report.outcomes["ok"] ?? 0) > test.operations / 5, "too few successful operations: \(report)")
    }

    @Test("concurrency", arguments: Subjects.all)
    func concurrency(subject: ConformanceSubject) throws {
        try ConcurrencyCheck().run(against: subject)
    }

    @Test("concurrency through the async API, from plain tasks and tasks on the store's executor", arguments: Subjects.all)
    func asyncConcurrency(subject: ConformanceSubject) async throws {
        try await ConcurrencyCheck().runAsync(against: subject)
    }

    // The service-backed subjects: reported as skipped (with the reason) when their service is absent.
    @Test("the Secret Service subject runs", .requires(.secretService))
    func secretServiceSubject() {
        #expect(Subjects.backends.contains { $0.name == "secret-service" })
    }

    @Test("the PostgreSQL subject runs", .requires(.postgres))
    func postgresSubject() {
        #expect(Subjects.backends.contains { $0.name == "postgres" })
    }

    @Test("the suite covers every rule family")
    func coverage() {
        for prefix in ["add.", "copy.", "update.", "delete.", "clear.", "roundTrip.", "limits."] {
            #expect(!ConformanceCheck.named(prefix).isEmpty, "\(prefix)")
        }
        print("conformance checks: \(ConformanceCheck.all.count) per subject; subjects: \(Subjects.all.map(\.name))")
    }
}
