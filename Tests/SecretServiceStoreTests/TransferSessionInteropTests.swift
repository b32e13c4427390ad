import Foundation
import Testing
import SecureStore
import TestSupport
@testable import SecureStoreSecretService

/// Our transfer session against the real daemon and libsecret: what we encrypt, gnome-keyring decrypts and
/// `secret-tool` (libsecret's session) reads back; what libsecret's session stored, the daemon re-encrypts for
/// ours and we decrypt; and a daemon that refuses the algorithm gets libsecret's session instead. Run under
/// `scripts/with-keyring.sh`.
@Suite("Secret Service: our transfer session with gnome-keyring and libsecret", .serialized, .timeLimit(.minutes(2)),
       .requires(.secretService))
struct TransferSessionInteropTests {
    /// A connection to the default collection; `refused` asks for an algorithm the daemon does not know, so the
    /// connection falls back to libsecret's session.
    static func connection(refused: Bool = false) throws -> Connection {
        try SecretServiceStoreTests.requireBus()
        let connection = try Connection.open(collection: "default", activate: false)
        if refused { connection.transferAlgorithm = "securestore-test-unknown-algorithm" }
        return connection
    }

    /// `secret-tool lookup` of these attributes: its exit status and the bytes it printed.
    static func secretToolLookup(_ attributes: [String]) throws -> (status: Int32, bytes: Data) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ss-lookup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let words = (["secret-tool", "lookup"] + attributes).map { "'\($0)'" }.joined(separator: " ")
        let out = try SecretServiceStoreTests.run(["sh", "-c", "\(words) > '\(file.path)'"])
        return (out.status, (try? Data(contentsOf: file)) ?? Data())
    }

    /// `secret-tool store` of `secret` (from a file on its standard input) under these attributes.
    static func secretToolStore(_ secret: Data, _ attributes: [String]) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ss-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try secret.write(to: file)
        let words = (["secret-tool", "store", "--label", "other app"] + attributes).map { "'\($0)'" }.joined(separator: " ")
        let out = try SecretServiceStoreTests.run(["sh", "-c", "\(words) < '\(file.path)'"])
        #expect(out.status == 0, "secret-tool store")
    }

    static func pseudoRandom(_ count: Int, seed: UInt64) -> Data {
        var state = seed
        var out = Data(count: count)
        for i in out.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out[i] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return out
    }

    @Test("secrets written through our session (0 bytes, every byte value, 1 MiB; added and updated) are read by secret-tool lookup byte for byte")
    func secretToolReadsWhatWeEncrypted() throws {
        let probe = try Self.connection()
        _ = try probe.search([["securestore.test": "none"]], checkingLock: false)
        #expect(probe.usesOwnSession && !probe.usesLibsecretSession, "the daemon accepted our session")
        let store = try SecretServiceStoreTests.freshStore()
        defer { _ = try? store.clear() }
        let service = "session-\(UInt32.random(in: 0...UInt32.max))"
        let cases: [(String, Data)] = [("empty", Data()), ("bytes", Data((0...255).map { UInt8($0) } + [0, 0])),
                                       ("large", Self.pseudoRandom(1 << 20, seed: 17))]
        for (account, secret) in cases {
            try store.add(NewItem(.genericPassword, [.service: .string(service), .account: .string(account)], data: secret))
            let lookup = try Self.secretToolLookup(["service", service, "account", account])
            #expect(lookup.status == 0, "\(account)")
            #expect(lookup.bytes == secret, "\(account): \(lookup.bytes.count) bytes read, \(secret.count) written")
            let back = try store.item(matching: ItemQuery(.genericPassword, [.service: .string(service), .account: .string(account)],
                                                         returning: .data))
            #expect(back?.data == secret, "\(account)")
        }
        let changed = Self.pseudoRandom(100, seed: 5)
        try store.update(ItemQuery(.genericPassword, [.service: .string(service), .account: "bytes"]),
                         with: ItemChanges(data: changed))
        #expect(try Self.secretToolLookup(["service", service, "account", "bytes"]).bytes == changed)
    }

    @Test("an item another application stored with secret-tool (libsecret's session) is read exactly through our session and through libsecret's")
    func weReadWhatLibsecretStored() throws {
        let service = "other-app-\(UInt32.random(in: 0...UInt32.max))"
        let secret = Self.pseudoRandom(4096, seed: 99).map { $0 == 0 ? 1 : $0 }   // secret-tool reads text: no NUL
        let attributes = ["service", service, "user", "bob", "kind", "token"]
        try Self.secretToolStore(Data(secret), attributes)
        defer { _ = try? SecretServiceStoreTests.run(["secret-tool", "clear"] + attributes) }
        let query = ["service": service, "user": "bob", "kind": "token"]
        for refused in [false, true] {
            let connection = try Self.connection(refused: refused)
            let paths = try connection.search([query], checkingLock: false)
            #expect(paths.count == 1)
            let loaded = try connection.load(paths, secrets: true)
            #expect(connection.usesOwnSession == !refused)
            #expect(connection.usesLibsecretSession == refused)
            #expect(loaded.first?.secret == Data(secret), refused ? "libsecret's session" : "our session")
            #expect(loaded.first?.attributes["user"] == "bob")
        }
    }

    @Test("a daemon that refuses our algorithm: libsecret's session, and what either session writes the other reads")
    func refusedAlgorithmFallsBack() throws {
        let ours = try Self.connection()
        let fallback = try Self.connection(refused: true)
        let service = "fallback-\(UInt32.random(in: 0...UInt32.max))"
        let first = Self.pseudoRandom(300, seed: 1), second = Self.pseudoRandom(17, seed: 2)
        let byFallback = try fallback.create(label: "fallback", attributes: ["service": service, "account": "a"], secret: first)
        let byOurs = try ours.create(label: "ours", attributes: ["service": service, "account": "b"], secret: second)
        defer { try? ours.delete([byFallback, byOurs]) }
        #expect(fallback.usesLibsecretSession && !fallback.usesOwnSession)
        #expect(ours.usesOwnSession && !ours.usesLibsecretSession)
        for connection in [ours, fallback] {
            let loaded = try connection.load([byFallback, byOurs], secrets: true)
            #expect(loaded.map(\.secret) == [first, second])
        }
        try fallback.update(path: byOurs, attributes: ["service": service, "account": "b"], label: nil, secret: first)
        try ours.update(path: byFallback, attributes: ["service": service, "account": "a"], label: nil, secret: second)
        #expect(try ours.load([byFallback, byOurs], secrets: true).map(\.secret) == [second, first])
        #expect(try Self.secretToolLookup(["service", service, "account", "a"]).bytes == second)
    }
}
