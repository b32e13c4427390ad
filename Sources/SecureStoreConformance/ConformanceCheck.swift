public import SecureStoreCore
import Foundation

/// A store implementation under test: a name and a way to make a fresh, empty store.
///
/// `make` is called once per check (so checks never see each other's items) with the access groups the
/// check needs; the store must use exactly those groups, in that order.
public struct ConformanceSubject: Sendable, CustomStringConvertible {
    public let name: String
    public let make: @Sendable (_ accessGroups: [String]) throws -> any SecureStore
    /// How many random operations the differential test runs against this subject.
    public let differentialOperations: Int

    public init(name: String, differentialOperations: Int = 3000,
                make: @escaping @Sendable (_ accessGroups: [String]) throws -> any SecureStore) {
        self.name = name
        self.make = make
        self.differentialOperations = differentialOperations
    }

    public var description: String { name }

    /// The suite's own naive reference model: linear scans, written from the semantics article
    /// (`Sources/SecureStoreCore/SecureStoreCore.docc/Semantics.md`) alone.
    public static let reference = ConformanceSubject(name: "reference") { groups in ReferenceStore(accessGroups: groups) }
}

/// A failed expectation inside a conformance check.
public struct ConformanceFailure: Error, CustomStringConvertible {
    public let message: String
    public let file: String
    public let line: Int
    public var description: String { "\(file):\(line): \(message)" }
}

/// One rule of the SecItem semantics (`Sources/SecureStoreCore/SecureStoreCore.docc/Semantics.md`, where each rule
/// carries this check's name), checked against a fresh store.
public struct ConformanceCheck: Sendable, CustomStringConvertible {
    /// A short unique name (`"add.duplicate"`).
    public let name: String
    /// The rule it checks, in words.
    public let rule: String
    let body: @Sendable (Context) throws -> Void

    init(_ name: String, _ rule: String, _ body: @escaping @Sendable (Context) throws -> Void) {
        self.name = name
        self.rule = rule
        self.body = body
    }

    public var description: String { name }

    /// Runs the check against `subject`; throws ``ConformanceFailure`` (or the store's error) on failure.
    public func run(against subject: ConformanceSubject) throws {
        try body(Context(subject: subject))
    }

    /// Every check of the suite.
    public static var all: [ConformanceCheck] {
        addChecks + copyChecks + updateChecks + deleteChecks + clearChecks + roundTripChecks + limitChecks
            + appleRegressionChecks + guaranteeChecks + orderChecks
    }

    /// Checks whose names start with `prefix` (`"add."`, `"copy."` …).
    public static func named(_ prefix: String) -> [ConformanceCheck] { all.filter { $0.name.hasPrefix(prefix) } }
}

/// What a check gets: fresh stores and assertions.
struct Context: Sendable {
    let subject: ConformanceSubject

    func store(_ groups: [String] = ["group.main"]) throws -> any SecureStore {
        try subject.make(groups)
    }
}

// MARK: Assertions

func expect(_ condition: Bool, _ message: @autoclosure () -> String, file: String = #fileID, line: Int = #line) throws {
    if !condition { throw ConformanceFailure(message: message(), file: file, line: line) }
}

func expectEqual<T: Equatable>(_ a: T, _ b: T, _ what: String = "", file: String = #fileID, line: Int = #line) throws {
    if a != b { throw ConformanceFailure(message: "\(what) expected \(b), got \(a)", file: file, line: line) }
}

/// Expects `body` to fail with `code`; returns the error.
@discardableResult
func expectError<T>(_ code: SecureStoreError.Code, _ what: String = "", file: String = #fileID, line: Int = #line,
                    _ body: () throws -> T) throws -> SecureStoreError {
    let outcome = Result { try body() }
    switch outcome {
    case .success(let value):
        throw ConformanceFailure(message: "\(what) expected \(code), got success: \(value)", file: file, line: line)
    case .failure(let error):
        guard let storeError = error as? SecureStoreError, storeError.code == code else {
            throw ConformanceFailure(message: "\(what) expected \(code), got \(error)", file: file, line: line)
        }
        return storeError
    }
}

// MARK: Helpers shared by checks

extension SecureStore {
    /// Everything in the store (every class, synced or not, every group): attributes, data and references.
    func everything() throws -> [Item] {
        var out: [Item] = []
        for c in ItemClass.allCases {
            out += try found(ItemQuery(c, synchronizableAny: true, limit: .all, returning: [.attributes, .data, .persistentRef]))
        }
        return out
    }

    func found(_ query: ItemQuery) throws -> [Item] {
        try items(matching: query)
    }

    func count(_ query: ItemQuery) throws -> Int {
        var q = query
        q.limit = .all
        q.returning = [.persistentRef]
        return try found(q).count
    }

    func data(_ query: ItemQuery) throws -> Data? {
        var q = query
        q.limit = .one
        q.returning = .data
        return try items(matching: q).first?.data
    }
}

func genp(_ service: String, _ account: String? = nil, _ extra: [AttributeName: AttributeValue] = [:],
          data: String? = nil) -> NewItem {
    var attrs = extra
    attrs[.service] = .string(service)
    if let account { attrs[.account] = .string(account) }
    return NewItem(.genericPassword, attrs, data: data.map { Data($0.utf8) })
}

func query(_ service: String, _ account: String? = nil, _ extra: [AttributeName: AttributeValue] = [:]) -> ItemQuery {
    var attrs = extra
    attrs[.service] = .string(service)
    if let account { attrs[.account] = .string(account) }
    return ItemQuery(.genericPassword, attrs)
}

/// Runs `body`, then checks that the store is exactly as before (for errors that must change nothing).
func expectUnchanged(_ store: any SecureStore, file: String = #fileID, line: Int = #line, _ body: () throws -> Void) throws {
    let before = try store.everything()
    try body()
    let after = try store.everything()
    try expect(before == after, "the store changed although the call failed", file: file, line: line)
}
