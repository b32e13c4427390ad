public import SecureStoreCore
import Foundation

/// The seeded randomized differential test: the same random operations applied to several stores must give
/// the same outcome (status, result shape, attributes, data, which item) at every step.
public struct DifferentialTest: Sendable {
    /// The seed: `SECURESTORE_SEED` if set, else random. Printed in every failure.
    public let seed: UInt64
    /// How many operations.
    public let operations: Int

    public init(seed: UInt64? = nil, operations: Int) {
        let env = ProcessInfo.processInfo.environment
        self.seed = seed ?? env["SECURESTORE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        self.operations = env["SECURESTORE_DIFF_OPS"].flatMap { Int($0) } ?? operations
    }

    /// What one step produced, with persistent references replaced by the ordinal of the add that made them
    /// and dates left out (they differ by microseconds between stores).
    public enum Outcome: Equatable, CustomStringConvertible {
        case failed(SecureStoreError.Code)
        case count(Int)
        case result(String)

        public var description: String {
            switch self {
            case .failed(let c): "error \(c)"
            case .count(let n): "count \(n)"
            case .result(let r): r
            }
        }
    }

    /// Summary of a run.
    public struct Report: Sendable, CustomStringConvertible {
        public let seed: UInt64
        public let operations: Int
        public let outcomes: [String: Int]
        public var description: String {
            "differential test: \(operations) operations, seed \(seed), outcomes " +
                outcomes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }

    /// Runs the operations against every store in `stores` (the first is the reference) and throws
    /// ``ConformanceFailure`` at the first step where any store disagrees with the first.
    @discardableResult
    public func run(_ stores: [(name: String, store: any SecureStore)]) throws -> Report {
        var rng = SplitMix64(seed: seed)
        var refs: [[PersistentRef]] = Array(repeating: [], count: stores.count)
        var tally: [String: Int] = [:]
        for step in 0..<operations {
            let op = Operation.random(&rng, knownRefs: refs[0].count)
            var outcomes: [Outcome] = []
            for (i, subject) in stores.enumerated() {
                outcomes.append(op.apply(to: subject.store, refs: &refs[i]))
            }
            for (i, o) in outcomes.enumerated().dropFirst() where o != outcomes[0] {
                throw ConformanceFailure(
                    message: "differential test, seed \(seed) (set SECURESTORE_SEED=\(seed) to replay), step \(step): "
                        + "\(op)\n  \(stores[0].name): \(outcomes[0])\n  \(stores[i].name): \(o)",
                    file: #fileID, line: #line)
            }
            let key: String = switch outcomes[0] {
            case .failed(let c): c.name
            case .count, .result: "ok"
            }
            tally[key, default: 0] += 1
        }
        return Report(seed: seed, operations: operations, outcomes: tally)
    }

    static let groups = ["grp.a", "grp.b"]

    /// Makes the stores with the access groups the test uses.
    public static func stores(_ subjects: [ConformanceSubject]) throws -> [(name: String, store: any SecureStore)] {
        try subjects.map { ($0.name, try $0.make(groups)) }
    }
}

/// A small fast PRNG (SplitMix64) so that a seed replays exactly; shared by the suite, the SecItem fuzz
/// test and the benchmark.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Operation: CustomStringConvertible {
    case add(NewItem, ReturnOptions)
    case copy(ItemQuery, refOrdinal: Int?)
    case update(ItemQuery, ItemChanges, refOrdinal: Int?)
    case delete(ItemQuery, refOrdinal: Int?)
    case clear(Set<ItemClass>)

    var description: String {
        switch self {
        case .add(let i, let r): "add \(i.itemClass) \(i.attributes.sorted { $0.key < $1.key }) data \(i.data?.count ?? -1) returning \(r.rawValue)"
        case .copy(let q, let r): "copy \(describe(q)) ref#\(r.map(String.init) ?? "-")"
        case .update(let q, let c, let r): "update \(describe(q)) ref#\(r.map(String.init) ?? "-") with \(c.attributes.sorted { $0.key < $1.key }) data \(c.data?.count ?? -1)"
        case .delete(let q, let r): "delete \(describe(q)) ref#\(r.map(String.init) ?? "-")"
        case .clear(let c): "clear \(c.map(\.rawValue).sorted())"
        }
    }

    private func describe(_ q: ItemQuery) -> String {
        "\(q.itemClass?.rawValue ?? "nil") \(q.attributes.sorted { $0.key < $1.key }) any:\(q.synchronizableAny) "
            + "limit:\(q.limit.map { "\($0)" } ?? "-") ci:\(q.caseInsensitive) ret:\(q.returning.rawValue)"
    }

    // The universe is small on purpose, so that collisions, misses and case variants are frequent.
    static let classes: [ItemClass] = [.genericPassword, .genericPassword, .internetPassword, .key]
    static let texts: [AttributeValue] = [.string("s0"), .string("s1"), .string("S0"), .string(""), .data(Data("s1".utf8))]
    static let accounts: [AttributeValue] = [.string("alice"), .string("Alice"), .string("bob"), .string("")]

    static func pick(_ values: [AttributeValue], _ rng: inout SplitMix64) -> AttributeValue {
        values[Int.random(in: 0..<values.count, using: &rng)]
    }

    static func randomAttributes(_ c: ItemClass, _ rng: inout SplitMix64, forQuery: Bool) -> [AttributeName: AttributeValue] {
        var a: [AttributeName: AttributeValue] = [:]
        func maybe(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
        let keep = forQuery ? 0.4 : 0.8
        switch c {
        case .genericPassword:
            if maybe(keep) { a[.service] = texts.randomElement(using: &rng) }
            if maybe(keep) { a[.account] = accounts.randomElement(using: &rng) }
        case .internetPassword:
            if maybe(keep) { a[.server] = texts.randomElement(using: &rng) }
            if maybe(keep) { a[.account] = accounts.randomElement(using: &rng) }
            if maybe(0.3) { a[.port] = pick([AttributeValue.number(443), .number(80), .string("443")], &rng) }
            // Protocol and authentication type as text, as four-character codes in numbers (0x68747073 is
            // 'htps'), as decimal text, as data and as other types (refused for protocol).
            if maybe(0.3) {
                a[.protocol] = pick([AttributeValue.string("htps"), .string("ftp "), .string("HTPS"), .number(0x6874_7073),
                                     .string("1752461427"), .number(0), .string(""), .bool(true), .data(Data("htps".utf8))], &rng)
            }
            if maybe(0.25) {
                a[.authenticationType] = pick([AttributeValue.string("dflt"), .string("DFLT"), .number(0x6466_6c74),
                                               .data(Data("dflt".utf8)), .string(""), .number(0), .bool(false)], &rng)
            }
        default:
            if maybe(keep) { a[.applicationTag] = pick([AttributeValue.data(Data([1])), .data(Data([2])), .string("tag")], &rng) }
            if maybe(0.3) { a[.keyClass] = pick([AttributeValue.number(1), .string("2"), .bool(true)], &rng) }
            if maybe(0.2) { a[.canSign] = pick([AttributeValue.bool(true), .number(0)], &rng) }
        }
        if maybe(0.3) { a[.label] = pick([AttributeValue.string("L1"), .string("l1"), .string("L2")], &rng) }
        if maybe(0.15) { a[.synchronizable] = .bool(Bool.random(using: &rng)) }
        if maybe(0.2) { a[.accessGroup] = .string(DifferentialTest.groups.randomElement(using: &rng) ?? "") }
        if maybe(0.03) { a[.accessGroup] = AttributeValue.string("grp.foreign") }
        if maybe(0.03) { a[c == .genericPassword ? AttributeName.server : AttributeName.service] = AttributeValue.string("misplaced") }
        if maybe(0.02) { a[.accessible] = pick([AttributeValue.string("ak"), .string("bogus")], &rng) }
        return a
    }

    static func random(_ rng: inout SplitMix64, knownRefs: Int) -> Operation {
        let c = classes.randomElement(using: &rng) ?? .genericPassword
        let roll = Int.random(in: 0..<100, using: &rng)
        // No secret (nil), an empty one, or a few random bytes: "no secret" and "empty" must stay distinct.
        func data() -> Data? {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: nil
            case 1: Data()
            default: Data((0..<Int.random(in: 1..<12, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            }
        }
        func q() -> ItemQuery {
            var query = ItemQuery(c, randomAttributes(c, &rng, forQuery: true))
            query.synchronizableAny = query.attributes[.synchronizable] == nil && Int.random(in: 0..<5, using: &rng) == 0
            query.caseInsensitive = Int.random(in: 0..<5, using: &rng) == 0
            return query
        }
        let ref: Int? = knownRefs > 0 && Int.random(in: 0..<8, using: &rng) == 0 ? Int.random(in: 0..<knownRefs, using: &rng) : nil
        switch roll {
        case 0..<40:
            let ret = ReturnOptions(rawValue: UInt8.random(in: 0..<16, using: &rng))
            return .add(NewItem(c, randomAttributes(c, &rng, forQuery: false), data: data()), ret.union(.persistentRef))
        case 40..<65:
            var query = q()
            let limits: [MatchLimit?] = [nil, .one, .all, .count(2), .count(0)]
            query.limit = limits[Int.random(in: 0..<limits.count, using: &rng)]
            query.returning = ReturnOptions(rawValue: UInt8.random(in: 0..<16, using: &rng))
            if ref != nil { query = ItemQuery(Bool.random(using: &rng) ? c : nil, returning: query.returning) }
            return .copy(query, refOrdinal: ref)
        case 65..<82:
            var query = q()
            if Int.random(in: 0..<10, using: &rng) > 0 { query.caseInsensitive = false }
            if ref != nil { query = ItemQuery(nil) }
            return .update(query, ItemChanges(randomAttributes(c, &rng, forQuery: true), data: data()), refOrdinal: ref)
        case 82..<97:
            var query = q()
            if Int.random(in: 0..<10, using: &rng) > 0 { query.caseInsensitive = false }
            if ref != nil { query = ItemQuery(nil) }
            return .delete(query, refOrdinal: ref)
        default:
            return .clear(Set(ItemClass.allCases.filter { _ in Bool.random(using: &rng) }))
        }
    }

    func apply(to store: any SecureStore, refs: inout [PersistentRef]) -> DifferentialTest.Outcome {
        func withRef(_ q: ItemQuery, _ ordinal: Int?) -> ItemQuery {
            guard let ordinal, ordinal < refs.count else { return q }
            var q = q
            q.persistentRef = refs[ordinal]
            return q
        }
        do throws(SecureStoreError) {
            switch self {
            case .add(let item, let ret):
                let r = try store.add(item, returning: ret)
                if let ref = r.persistentRef { refs.append(ref) }
                return .result(render([r], refs))
            case .copy(let q, let ordinal):
                return .result(render(try store.items(matching: withRef(q, ordinal)), refs))
            case .update(let q, let changes, let ordinal):
                return .count(try store.update(withRef(q, ordinal), with: changes))
            case .delete(let q, let ordinal):
                return .count(try store.delete(withRef(q, ordinal)))
            case .clear(let classes):
                return .count(try store.clear(classes))
            }
        } catch {
            return .failed(error.code)
        }
    }

    private func render(_ items: [Item], _ refs: [PersistentRef]) -> String {
        func one(_ i: Item) -> String {
            var parts = [i.itemClass.rawValue]
            if let a = i.attributes {
                parts.append(a.filter { $0.key != .creationDate && $0.key != .modificationDate }
                    .sorted { $0.key < $1.key }.map { "\($0.key.code)=\($0.value)" }.joined(separator: ","))
            }
            if let d = i.data { parts.append("data=[\(d.map { String($0) }.joined(separator: "."))]") }
            if let p = i.persistentRef { parts.append("ref#\(refs.firstIndex(of: p).map(String.init) ?? "new")") }
            return "{" + parts.joined(separator: " ") + "}"
        }
        return "[" + items.map(one).joined(separator: ", ") + "]"
    }
}
