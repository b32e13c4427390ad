import Testing
import SecureStoreConformance
import Foundation
@testable import SecureStoreCore
import SecureStoreInMemory
import TestSupport

/// A backend that records every filter the core sends, to prove which queries are index probes.
final class SpyBackend: StorageBackend {
    struct Txn: StorageTransaction {
        var records: [ItemRecord]
        var filters: [RecordFilter] = []
        /// Answers every find with records without their attributes (as a backend that misreads the filter).
        var omittingAttributes = false
        mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
            filters.append(filter)
            guard omittingAttributes else { return records }
            return records.map { ItemRecord(persistentRef: $0.persistentRef, itemClass: $0.itemClass,
                                            foundByKey: $0.uniqueKey, data: nil, modified: nil) }
        }
        mutating func insert(_ record: ItemRecord) throws(SecureStoreError) { records.append(record) }
        mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
            records = records.map { $0.persistentRef == record.persistentRef ? record : $0 }
        }
        mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) { records.removeAll { refs.contains($0.persistentRef) } }
        mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int { 0 }
    }
    let state = Locked(Txn(records: []))
    var filters: [RecordFilter] { state.withLock { $0.filters } }
    var backendDescription: String { "spy" }
    static let guarantees = InMemoryBackend.guarantees
    func withTransaction<T>(writing: Bool, _ body: (inout Txn) throws(SecureStoreError) -> T) throws(SecureStoreError) -> T {
        var txn = state.withLock { $0 }
        let value = try body(&txn)
        let copy = txn
        state.withLock { $0 = copy }
        return value
    }
}

@Suite("Core")
struct CoreTests {
    @Test("a query naming the full uniqueness key is an index probe; a partial one is not")
    func indexProbe() throws {
        let spy = SpyBackend()
        let store = try Keychain(backend: spy, configuration: StoreConfiguration(accessGroups: ["g1", "g2"]))
        try store.add(NewItem(.genericPassword, [.service: "s", .account: "a"]))
        _ = try store.items(matching: ItemQuery(.genericPassword, [.service: "s", .account: "a"]))
        let probe = try #require(spy.filters.last)
        #expect(probe.uniqueKeys?.count == 2, "one probe per access group")
        _ = try? store.items(matching: ItemQuery(.genericPassword, [.service: "s"]))
        #expect(spy.filters.last?.uniqueKeys == nil)
        #expect(spy.filters.last?.equalities[.service] == .string("s"), "partial queries pass equality hints")
        var folded = ItemQuery(.genericPassword, [.service: "S", .account: "A"])
        folded.caseInsensitive = true
        _ = try store.items(matching: folded)
        #expect(spy.filters.last?.uniqueKeys == nil, "case-insensitive queries cannot use the exact index")
    }

    @Test("what each find asks to read: a change of secret alone the key decides, its references and dates; any other update, whole records; a record without attributes never reaches another update")
    func readNeedsOfUpdates() throws {
        let spy = SpyBackend()
        let store = try Keychain(backend: spy, configuration: StoreConfiguration(accessGroups: ["g1"]))
        try store.add(NewItem(.genericPassword, [.service: "s", .account: "a", .label: "L"], data: Data("1".utf8)))
        func lastFind() throws -> RecordFilter { try #require(spy.filters.last) }
        try store.update(ItemQuery(.genericPassword, [.service: "s", .account: "a"]), with: ItemChanges(data: Data("2".utf8)))
        var filter = try lastFind()
        #expect(!filter.needsData && !filter.needsAttributes && filter.needsModificationDate)
        for (query, changes) in [
            (ItemQuery(.genericPassword, [.service: "s", .account: "a"]), ItemChanges([.label: "M"], data: Data("3".utf8))),
            (ItemQuery(.genericPassword, [.service: "s"]), ItemChanges(data: Data("4".utf8))),
            (ItemQuery(.genericPassword, [.service: "s", .account: "a", .label: "M"]), ItemChanges(data: Data("5".utf8))),
        ] {
            try store.update(query, with: changes)
            filter = try lastFind()
            #expect(!filter.needsData && filter.needsAttributes && !filter.needsModificationDate, "\(query) \(changes)")
        }
        try store.update(ItemQuery(.genericPassword, [.service: "s", .account: "a"]), with: ItemChanges([.label: "N"]))
        filter = try lastFind()
        #expect(filter.needsData && filter.needsAttributes && !filter.needsModificationDate)
        _ = try store.item(matching: ItemQuery(.genericPassword, [.service: "s", .account: "a"], returning: .data))
        filter = try lastFind()
        #expect(!filter.needsAttributes && !filter.needsModificationDate, "a lookup reads no date")
        // A backend that answers an update which changes attributes with records without them: refused, nothing
        // written (the record it would write has lost its attributes).
        spy.state.withLock { $0.omittingAttributes = true }
        let refused = failure { () throws(SecureStoreError) in
            try store.update(ItemQuery(.genericPassword, [.service: "s", .account: "a"]), with: ItemChanges([.label: "O"]))
        }
        #expect(refused?.code == .internalError)
        spy.state.withLock { $0.omittingAttributes = false }
        let stored = try store.item(matching: ItemQuery(.genericPassword, [.service: "s", .account: "a"], returning: .attributes))
        #expect(stored?.attributes?[.label] == "N")
    }

    @Test("the in-memory store answers a full-key lookup from its index among 20,000 items")
    func inMemoryIndex() throws {
        let store = try InMemoryStore()
        for i in 0..<20_000 {
            try store.add(NewItem(.genericPassword, [.service: "svc", .account: .string("a\(i)")]))
        }
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for i in stride(from: 0, to: 20_000, by: 10) {
                _ = try store.items(matching: ItemQuery(.genericPassword, [.service: "svc", .account: .string("a\(i)")]))
            }
        }
        // 2,000 lookups; a scan of 20,000 items each would take seconds. Generous bound: this is not a benchmark.
        #expect(elapsed < .seconds(2), "\(elapsed)")
    }

    @Test("uniqueness keys: String and Data with the same bytes are equal; defaults fill missing attributes")
    func uniqueKeys() {
        let a = ItemRecord(persistentRef: .random(), itemClass: .genericPassword,
                           attributes: [.service: "s", .account: "", .accessGroup: "g", .synchronizable: false], data: Data())
        let b = ItemRecord(persistentRef: .random(), itemClass: .genericPassword,
                           attributes: [.service: .data(Data("s".utf8)), .accessGroup: "g"], data: Data([1]))
        #expect(a.uniqueKey == b.uniqueKey)
        let c = ItemRecord(persistentRef: .random(), itemClass: .internetPassword,
                           attributes: [.account: "", .accessGroup: "g"], data: Data())
        #expect(a.uniqueKey != c.uniqueKey)
    }

    @Test("errors carry Apple's status codes and name the bad parameter")
    func errors() throws {
        #expect(SecureStoreError.Code.duplicateItem.status == -25299)
        #expect(SecureStoreError.Code.itemNotFound.status == -25300)
        #expect(SecureStoreError.Code.param.status == -50)
        #expect(SecureStoreError.Code.decode.status == -26275)
        #expect(SecureStoreError.Code(status: -25308) == .interactionNotAllowed)
        let store = try InMemoryStore()
        do {
            try store.add(NewItem(.internetPassword, [.port: "eighty"]))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .param)
            #expect(error.parameter == "port")
            #expect(error.description.contains("port"))
        }
        #expect(throws: SecureStoreError.self) { try InMemoryStore(configuration: StoreConfiguration(accessGroups: [])) }
    }

    @Test("attribute names resolve by Apple code and by readable name")
    func attributeNames() {
        #expect(AttributeName(codeOrName: "svce") == .service)
        #expect(AttributeName(codeOrName: "service") == .service)
        #expect(AttributeName(codeOrName: "keyType") == .keyType)
        #expect(AttributeName(codeOrName: "nope") == nil)
        #expect(ItemClass(name: "generic") == .genericPassword)
        #expect(ItemClass(name: "idnt") == .identity)
        #expect(ItemClass.internetPassword.attributes.contains(.service) == false)
    }

    @Test("the in-memory service/account index agrees with a scan through adds, updates, deletes and rollbacks")
    func inMemoryEqualityIndex() throws {
        let backend = InMemoryBackend()
        let store = try Keychain(backend: backend)
        for i in 0..<60 {
            var attributes: [AttributeName: AttributeValue] = [.account: .string("a\(i)"), .label: .string("l\(i)")]
            if i % 5 != 0 { attributes[.service] = i % 2 == 0 ? .string("s\(i % 3)") : .data(Data("s\(i % 3)".utf8)) }
            try store.add(NewItem(.genericPassword, attributes))
        }
        try store.add(NewItem(.internetPassword, [.account: "a1", .server: "example.com"]))
        try store.update(ItemQuery(.genericPassword, [.service: "s1"]), with: ItemChanges([.service: "moved"]))
        try store.update(ItemQuery(.genericPassword, [.account: "a2"]), with: ItemChanges([.account: "b2"]))
        try store.delete(ItemQuery(.genericPassword, [.service: "s2", .account: "a17"]))
        // A failing update (duplicate) rolls back its index changes too.
        #expect(throws: SecureStoreError.self) {
            try store.update(ItemQuery(.genericPassword, [.service: "s0"]), with: ItemChanges([.service: "x", .account: "y"]))
        }
        func bySearch(_ equalities: [AttributeName: AttributeValue], _ itemClass: ItemClass) throws -> [PersistentRef] {
            try backend.withTransaction(writing: false) { (txn: inout InMemoryBackend.State) throws(SecureStoreError) in
                try txn.find(RecordFilter(itemClass: itemClass, equalities: equalities))
            }.filter { record in
                equalities.allSatisfy { name, value in
                    (record.attributes[name] ?? name.defaultValue)?.bytes == value.bytes
                }
            }.map(\.persistentRef)
        }
        func byScan(_ equalities: [AttributeName: AttributeValue], _ itemClass: ItemClass) throws -> [PersistentRef] {
            try backend.withTransaction(writing: false) { (txn: inout InMemoryBackend.State) throws(SecureStoreError) in
                try txn.find(RecordFilter(itemClass: itemClass))
            }.filter { record in
                equalities.allSatisfy { name, value in
                    (record.attributes[name] ?? name.defaultValue)?.bytes == value.bytes
                }
            }.map(\.persistentRef)
        }
        let probes: [([AttributeName: AttributeValue], ItemClass)] = [
            ([.service: "s0"], .genericPassword), ([.service: .data(Data("s1".utf8))], .genericPassword),
            ([.service: "moved"], .genericPassword), ([.service: ""], .genericPassword), ([.service: "none"], .genericPassword),
            ([.account: "a1"], .genericPassword), ([.account: "a1"], .internetPassword), ([.account: "a2"], .genericPassword),
            ([.account: "b2"], .genericPassword), ([.service: "s2", .account: "a17"], .genericPassword),
            ([.service: "moved", .account: "a4"], .genericPassword), ([.service: "s0", .account: "a3"], .genericPassword),
        ]
        for (equalities, itemClass) in probes {
            let scanned = try byScan(equalities, itemClass)
            #expect(try bySearch(equalities, itemClass) == scanned, "\(equalities)")
        }
        #expect(try byScan([.service: "moved"], .genericPassword).count == 16)
        #expect(try byScan([.service: "s0"], .genericPassword).count == 16)
        #expect(try byScan([.account: "b2"], .genericPassword).count == 1)
        #expect(try byScan([.service: "s2", .account: "a17"], .genericPassword).isEmpty)
        #expect(try byScan([.service: ""], .genericPassword).count == 12)
    }

    @Test("a failed in-memory transaction leaves no trace")
    func rollback() throws {
        let backend = InMemoryBackend()
        let store = try Keychain(backend: backend)
        try store.add(NewItem(.genericPassword, [.service: "kept"]))
        #expect(throws: SecureStoreError.self) {
            try backend.withTransaction(writing: true) { (txn: inout InMemoryBackend.State) throws(SecureStoreError) in
                try txn.insert(ItemRecord(persistentRef: .random(), itemClass: .genericPassword,
                                          attributes: [.service: "ghost", .accessGroup: "securestore"], data: Data()))
                try txn.remove(try txn.find(RecordFilter(itemClass: .genericPassword)).map(\.persistentRef))
                throw SecureStoreError(.io, "simulated failure")
            }
        }
        let left = try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes))
        #expect(left.compactMap { $0.attributes?[.service] } == [.string("kept")])
    }
}

/// Validation has one set of rules and reports the first error in a documented order: a bad value of a
/// defined attribute (in code order), then an attribute the class lacks, then a foreign group. An oracle written
/// from that rule checks it on random attribute sets (limits and NaN dates included).
@Suite("Core validation order")
struct ValidationOrderTests {
    static let values: [AttributeValue] = [
        .string(""), .string("s"), .string("htps"), .string("80"), .string("080"), .string("-5"), .string(" 7"),
        .string("true"), .string("no"), .string("ak"), .string("bogus"), .string(String(repeating: "x", count: StoreLimits.maxAttributeValueBytes + 1)),
        .data(Data()), .data(Data("ak".utf8)), .data(Data([0xFF, 0xFE])), .data(Data(count: StoreLimits.maxAttributeValueBytes + 1)),
        .number(0), .number(1), .number(-1), .number(0x6874_7073), .number(.max), .number(.min),
        .bool(true), .bool(false),
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: .nan)),
        .date(Date(timeIntervalSinceReferenceDate: .infinity)),
    ]

    /// The documented order, written out plainly.
    static func oracle(_ attributes: [AttributeName: AttributeValue], _ itemClass: ItemClass?, writing: Bool,
                       groups: [String]) -> Result<[AttributeName: AttributeValue], SecureStoreError> {
        let names = attributes.keys.sorted()
        var out: [AttributeName: AttributeValue] = [:]
        for name in names where itemClass?.attributes.contains(name) ?? true {
            do throws(SecureStoreError) {
                let clean = try name.normalize(attributes[name]!)
                if writing { try StoreLimits.checkAttribute(name, clean) }
                out[name] = clean
            } catch {
                return .failure(error)
            }
        }
        if let itemClass, let name = names.first(where: { !itemClass.attributes.contains($0) }) {
            return .failure(SecureStoreError(.noSuchAttribute, "", parameter: name.code))
        }
        if let group = out[.accessGroup], !groups.contains(group.text ?? "\u{0}") {
            return .failure(SecureStoreError(.missingEntitlement, "", parameter: AttributeName.accessGroup.code))
        }
        return .success(out)
    }

    @Test("random attribute sets: the result or the first error the documented order gives")
    func orderHolds() throws {
        let groups = ["g1", "g2"]
        let store = try Keychain(backend: SpyBackend(), configuration: StoreConfiguration(accessGroups: groups))
        var rng = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &rng)
        var generator = SplitMix64(seed: seed)
        let names = AttributeName.all + [.keyType]
        let groupValues: [AttributeValue] = [.string("g1"), .string("g2"), .string("other"), .number(1)]
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            var attributes: [AttributeName: AttributeValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                let name = names[Int.random(in: 0..<names.count, using: &generator)]
                attributes[name] = name == .accessGroup && Bool.random(using: &generator)
                    ? groupValues[Int.random(in: 0..<groupValues.count, using: &generator)]
                    : Self.values[Int.random(in: 0..<Self.values.count, using: &generator)]
            }
            let itemClass: ItemClass? = Int.random(in: 0..<6, using: &generator) == 0 ? nil : ItemClass.allCases.randomElement(using: &generator)
            let writing = Bool.random(using: &generator)
            let got = Result { () throws(SecureStoreError) in try store.validate(attributes, for: itemClass, writing: writing) }
            let expected = Self.oracle(attributes, itemClass, writing: writing, groups: groups)
            let same: Bool = switch (got, expected) {
            case (.success(let a), .success(let b)): a == b
            case (.failure(let a), .failure(let b)): a.code == b.code && a.parameter == b.parameter
            default: false
            }
            if !same { disagreements.append("\(itemClass.map { "\($0)" } ?? "nil") writing:\(writing) \(attributes.keys.map(\.code)): \(got) vs \(expected)") }
        }
        #expect(disagreements.isEmpty, "seed \(seed): \(disagreements.prefix(3))")
    }

}
