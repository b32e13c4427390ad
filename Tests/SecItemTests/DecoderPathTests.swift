import Foundation
import Testing
import SecureStore
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

    static func decide(_ read: (NSDictionary) throws(SecureStoreError) -> [String: SecItemValue], _ dict: NSDictionary,
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
}
