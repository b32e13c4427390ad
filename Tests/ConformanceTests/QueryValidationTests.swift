import Testing
import Foundation
import SecureStoreCore
import SecureStoreInMemory
import SecureStoreConformance

/// Random queries (malformed ones included: bad and zero limits, NaN and infinite dates, oversized values, a
/// reference with attributes, no class) give the same items or the same error, code and parameter, from the
/// core and from the reference model written independently from the rules in the SecItem semantics article (Semantics.md).
@Suite("Query validation")
struct QueryValidationTests {
    static let values: [AttributeValue] = [
        .string(""), .string("s"), .string("a"), .string("htps"), .string("80"), .string("true"), .string("ak"),
        .string(String(repeating: "x", count: StoreLimits.maxAttributeValueBytes + 1)),
        .data(Data()), .data(Data("s".utf8)), .number(0), .number(1), .number(-1), .bool(true), .bool(false),
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: .nan)),
        .date(Date(timeIntervalSinceReferenceDate: .infinity)),
    ]
    static let limits: [MatchLimit?] = [nil, .one, .all, .count(1), .count(2), .count(0), .count(-1)]

    @Test("random queries: the core and the reference model agree on items and errors")
    func randomQueries() throws {
        let core = try InMemoryStore(configuration: StoreConfiguration(accessGroups: ["g1", "g2"]))
        let reference = ReferenceStore(accessGroups: ["g1", "g2"])
        for store in [core, reference] as [any SecureStore] {
            for (i, service) in ["s", "a", ""].enumerated() {
                try store.add(NewItem(.genericPassword, [.service: .string(service), .account: "a", .label: .string("L\(i)")],
                                      data: Data([UInt8(i)])))
                try store.add(NewItem(.internetPassword, [.server: .string(service), .port: .number(Int64(i))]))
            }
        }
        var rng = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &rng)
        var generator = SplitMix64(seed: seed)
        let names: [AttributeName] = [.service, .account, .label, .server, .port, .protocol, .creationDate,
                                      .synchronizable, .accessGroup, .generic, .isInvisible]
        var disagreements: [String] = []
        for _ in 0..<5_000 {
            var query = ItemQuery([ItemClass.genericPassword, .internetPassword, .key, nil].randomElement(using: &generator)!)
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let name = names.randomElement(using: &generator)!
                query.attributes[name] = name == .accessGroup
                    ? [.string("g1"), .string("g2"), .string("g3")].randomElement(using: &generator)!
                    : Self.values.randomElement(using: &generator)!
            }
            query.limit = Self.limits.randomElement(using: &generator)!
            query.caseInsensitive = Int.random(in: 0..<4, using: &generator) == 0
            query.synchronizableAny = Int.random(in: 0..<4, using: &generator) == 0
            query.returning = [[], .data, .attributes, [.data, .persistentRef]].randomElement(using: &generator)!
            // References differ between the two stores: one that names no item checks the rules around it.
            if Int.random(in: 0..<6, using: &generator) == 0 { query.persistentRef = PersistentRef.random() }
            func outcome(_ store: any SecureStore) -> String {
                do throws(SecureStoreError) {
                    let items = try store.items(matching: query)
                    return "\(items.count) items: " + items.map { "\($0.data.map { Array($0) } ?? [])" }.joined(separator: ",")
                } catch {
                    return "\(error.code.name) \(error.parameter ?? "-")"
                }
            }
            let (a, b) = (outcome(core), outcome(reference))
            if a != b { disagreements.append("\(query): core \(a), reference \(b)") }
        }
        #expect(disagreements.isEmpty, "seed \(seed), \(disagreements.count) disagreements: \(disagreements.prefix(3))")
    }

}
