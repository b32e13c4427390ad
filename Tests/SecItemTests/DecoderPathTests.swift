import Foundation
import Testing
import SecureStoreCore
import SecureStoreConformance
@testable import SecItem

/// The decoder reads a caller's dictionary through `allKeys`/`allValues` with the common classes typed at
/// once (``SecItemDecoder/dictionary(_:)``); `bridgedDictionary` iterates it, bridging every value, as the
/// decoder used to. Both must give every decision alike: the same query, item, changes or error.
@Suite("SecItem decoder: typed reading against bridged iteration")
struct DecoderPathTests {
    enum Outcome: Equatable {
        case query(ItemQuery, deferred: String?)
        case add(NewItem, ReturnOptions, deferred: String?)
        case changes(ItemChanges, deferred: String?)
        case failed(String, parameter: String?)
    }

    static func decide(_ read: (NSDictionary) throws(SecureStoreError) -> SecItemDictionary, _ dict: NSDictionary,
                       as kind: Int) -> Outcome {
        var deferred: SecureStoreError?
        do throws(SecureStoreError) {
            let values = try read(dict)
            switch kind {
            case 0:
                let (item, returning) = try SecItemDecoder.newItem(values, deferred: &deferred)
                return .add(item, returning, deferred: deferred?.code.name)
            case 1: return .query(try SecItemDecoder.query(values, call: .copy, deferred: &deferred), deferred: deferred?.code.name)
            case 2: return .query(try SecItemDecoder.query(values, call: .updateQuery, deferred: &deferred), deferred: deferred?.code.name)
            case 3: return .query(try SecItemDecoder.query(values, call: .delete, deferred: &deferred), deferred: deferred?.code.name)
            default: return .changes(try SecItemDecoder.changes(values, deferred: &deferred), deferred: deferred?.code.name)
            }
        } catch {
            return .failed(error.code.name, parameter: error.parameter)
        }
    }

    @Test("generated dictionaries decode alike through both paths, for every call")
    func samePaths() {
        var rng = SystemRandomNumberGenerator()
        let seed = ProcessInfo.processInfo.environment["SECURESTORE_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max, using: &rng)
        var gen = Fuzz(seed: seed)
        var decided = 0
        for round in 0..<3000 {
            var swiftDictionary = gen.dictionary()
            if round % 3 == 0 {   // secrets of every size, as NSData and as Data
                let bytes = Data((0..<Int.random(in: 0..<5000, using: &gen)).map { _ in UInt8.random(in: 0...255, using: &gen) })
                swiftDictionary[kSecValueData as String] = Bool.random(using: &gen) ? bytes as Any : NSData(data: bytes)
            }
            let dict: NSDictionary = round % 5 == 0 ? NSMutableDictionary(dictionary: swiftDictionary)
                                                     : swiftDictionary as CFDictionary
            for kind in 0..<5 {
                let typed = Self.decide(SecItemDecoder.dictionary, dict, as: kind)
                let bridged = Self.decide(SecItemDecoder.bridgedDictionary, dict, as: kind)
                #expect(typed == bridged, "seed \(seed) round \(round) call \(kind): \(swiftDictionary)")
                if case .failed = typed {} else { decided += 1 }
            }
        }
        #expect(decided > 1000, "seed \(seed): too few dictionaries were decoded to compare the paths")
    }

    @Test("the key table finds every key this module knows, and nothing else")
    func keyTable() {
        let named = ["class", "accc", "sync", "m_Limit", "m_CaseInsensitive", "v_Data", "v_PersistentRef",
                     "r_Data", "r_Attributes", "r_Ref", "r_PersistentRef", "nleg", "u_AuthUI", "m_Policy", "acls",
                     "tkid", "u_Keychain", "m_SearchList"]
        for code in AttributeName.all.map(\.code) + named {
            let entry = SecItemDecoder.decision(code)
            if case .unknown = entry.key { Issue.record("\(code) was not found") }
        }
        // Every attribute code is that attribute, but those with a decision of their own (kSecAttrSynchronizable
        // takes kSecAttrSynchronizableAny too).
        for (code, name) in AttributeName.all.map({ ($0.code, $0) }) where !named.contains(code) {
            guard case .attribute(let found) = SecItemDecoder.decision(code).key, found == name else {
                Issue.record("\(code) is not the attribute \(name.name)")
                continue
            }
        }
        var gen = SystemRandomNumberGenerator()
        for _ in 0..<2000 {   // near misses and random keys: never a known key
            let known = (AttributeName.all.map(\.code) + named).randomElement(using: &gen)!
            let variants = [known + "x", String(known.dropLast()), known.uppercased() == known ? known.lowercased() : known.uppercased(),
                            "x" + known, String((0..<Int.random(in: 0...12, using: &gen)).map { _ in "abcdefghijklmnopqrstuvwxyz_".randomElement(using: &gen)! })]
            for v in variants where !(AttributeName.all.map(\.code) + named).contains(v) {
                if case .unknown = SecItemDecoder.decision(v).key {} else { Issue.record("\(v) was taken for a known key") }
            }
        }
    }

    @Test("two keys that are one Swift string (canonically equivalent) are one entry: the first key, the last value")
    func equivalentKeys() {
        let values = SecItemDictionary([("z\u{e9}", .string("first")), ("ze\u{301}", .string("second")), ("svce", .string("s"))])
        #expect(values.count == 2)
        #expect(values.entries.first?.key.unicodeScalars.count == 2, "the first spelling is kept")
        guard case .string("second")? = values["z\u{e9}"] else { Issue.record("the later value replaces the earlier"); return }
        // (Not through an NSMutableDictionary: swift-corelibs-foundation's NSString takes the two spellings for
        // equal but hashes them apart, and its dictionary traps on such keys, in the caller's code.)
    }

    @Test("a secret is copied once, byte for byte, whatever its size")
    func secretBytes() throws {
        for count in [0, 1, 31, 32, 4096, 65537] {
            let bytes = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let dict = [kSecClass as String: kSecClassGenericPassword, kSecValueData as String: bytes] as CFDictionary
            let values = try SecItemDecoder.dictionary(dict)
            guard case .data(let read)? = values[kSecValueData as String] else {
                Issue.record("kSecValueData was not read as data")
                continue
            }
            #expect(read == bytes)
        }
    }

    /// A bad key of a generated dictionary: its value, and the status it gives on its own — thrown at once
    /// (a malformed dictionary) or kept as the call's deferred refusal (a request that cannot be served here).
    struct BadKey {
        let key: String
        let value: Any
        let thrown: Bool
        let status: String
    }

    /// The bad keys each call can meet (0 add, 1 copy, 2 update's query, 3 delete, 4 update's changes).
    static var badKeys: [[BadKey]] {
        let array: Any = [1, 2] as NSArray
        let common = [
            BadKey(key: "acct", value: array, thrown: true, status: "param"),
            BadKey(key: "labl", value: 1.5, thrown: true, status: "param"),
            BadKey(key: "zz_unknown", value: "x", thrown: true, status: "param"),
        ]
        let add = common + [
            BadKey(key: "m_Limit", value: "m_LimitAll", thrown: true, status: "param"),
            BadKey(key: "v_PersistentRef", value: Data([1]), thrown: true, status: "param"),
            BadKey(key: "acls", value: "x", thrown: false, status: "unimplemented"),
            BadKey(key: "tkid", value: "x", thrown: false, status: "unimplemented"),
            BadKey(key: "u_Keychain", value: "x", thrown: false, status: "noSuchKeychain"),
            BadKey(key: "m_SearchList", value: "x", thrown: false, status: "noSuchKeychain"),
        ]
        let copy = common + [
            BadKey(key: "m_Limit", value: "bogus", thrown: true, status: "param"),
            BadKey(key: "r_Data", value: "yes", thrown: true, status: "param"),
            BadKey(key: "acls", value: "x", thrown: false, status: "unimplemented"),
            BadKey(key: "m_Policy", value: "x", thrown: false, status: "unimplemented"),
            BadKey(key: "u_Keychain", value: "x", thrown: false, status: "noSuchKeychain"),
            BadKey(key: "m_SearchList", value: "x", thrown: false, status: "noSuchKeychain"),
        ]
        let delete = common + [
            BadKey(key: "m_Policy", value: "x", thrown: true, status: "param"),
            BadKey(key: "m_Limit", value: "m_LimitOne", thrown: true, status: "param"),
            BadKey(key: "acls", value: "x", thrown: false, status: "unimplemented"),
            BadKey(key: "tkid", value: "x", thrown: false, status: "unimplemented"),
            BadKey(key: "u_Keychain", value: "x", thrown: false, status: "noSuchKeychain"),
        ]
        let updateQuery = delete + [BadKey(key: "r_Data", value: true, thrown: true, status: "param")]
        let changes = [
            BadKey(key: "acct", value: array, thrown: true, status: "param"),
            BadKey(key: "labl", value: 1.5, thrown: true, status: "param"),
            BadKey(key: "sync", value: "syna", thrown: true, status: "param"),
            BadKey(key: "class", value: "genp", thrown: true, status: "noSuchAttribute"),
            BadKey(key: "zz_unknown", value: "x", thrown: true, status: "noSuchAttribute"),
            BadKey(key: "m_Limit", value: "m_LimitAll", thrown: true, status: "noSuchAttribute"),
        ]
        return [add, copy, updateQuery, delete, changes]
    }

    /// The status and parameter a call reports for `values`: what it throws, else its deferred refusal.
    static func status(_ values: SecItemDictionary, as kind: Int) -> (String, String?) {
        var deferred: SecureStoreError?
        do throws(SecureStoreError) {
            switch kind {
            case 0: _ = try SecItemDecoder.newItem(values, deferred: &deferred)
            case 1: _ = try SecItemDecoder.query(values, call: .copy, deferred: &deferred)
            case 2: _ = try SecItemDecoder.query(values, call: .updateQuery, deferred: &deferred)
            case 3: _ = try SecItemDecoder.query(values, call: .delete, deferred: &deferred)
            default: _ = try SecItemDecoder.changes(values, deferred: &deferred)
            }
        } catch {
            return (error.code.name, error.parameter)
        }
        return deferred.map { ($0.code.name, $0.parameter) } ?? ("success", nil)
    }

    @Test("several bad keys: the status is the first bad key's in key order, whatever the insertion order")
    func badKeysInAnyOrder() throws {
        var rng = SystemRandomNumberGenerator()
        let seed = ProcessInfo.processInfo.environment["SECURESTORE_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max, using: &rng)
        var gen = Fuzz(seed: seed)
        var orders = 0
        let table = Self.badKeys
        for round in 0..<600 {
            let kind = round % 5
            let chosen = table[kind].shuffled(using: &gen).prefix(Int.random(in: 2...5, using: &gen))
            // The expected decision, from the table: the first thrown key in key order, else the first refusal.
            let sortedBad = chosen.sorted { $0.key < $1.key }
            let first = sortedBad.first(where: \.thrown) ?? sortedBad.first!
            var good: [(String, Any)] = kind == 4 ? [("labl", "label")]
                : [("class", kSecClassGenericPassword as String), ("svce", "service"), ("acct", "account")]
            good.removeAll { entry in chosen.contains { $0.key == entry.0 } }
            let entries = good + chosen.map { ($0.key, $0.value) }
            var seen = Set<String>()
            for permutation in 0..<6 {
                // NSDictionary filled in a random order, read, and its entries decided in that order (sorted,
                // reversed, shuffled).
                let ordered = permutation == 0 ? entries.sorted { $0.0 < $1.0 }
                    : permutation == 1 ? entries.sorted { $0.0 > $1.0 } : entries.shuffled(using: &gen)
                let dict = NSMutableDictionary()
                for (key, value) in ordered { dict[key as NSString] = value }
                let read = try SecItemDecoder.dictionary(dict)
                let values = SecItemDictionary(ordered.compactMap { key, _ in read[key].map { (key, $0) } })
                #expect(values.count == ordered.count)
                seen.insert(values.entries.map(\.key).joined(separator: ","))
                let (status, parameter) = Self.status(values, as: kind)
                #expect(status == first.status && parameter == first.key,
                        "seed \(seed) round \(round) call \(kind): \(ordered.map(\.0)) gave \(status) \(parameter ?? "-"), expected \(first.status) \(first.key)")
            }
            orders += seen.count
        }
        #expect(orders > 900, "seed \(seed): the dictionaries were iterated in too few different orders")
    }
}
