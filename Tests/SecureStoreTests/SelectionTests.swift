import Testing
import Foundation
import SecureStoreCore
import SecureStoreInMemory
import SecureStoreBackends

/// Selection order, config-file validation and third-party registration, with test-only backends.
@Suite("Selection", .serialized)
struct SelectionTests {
    static let register: Void = {
        BackendRegistry.register(BackendFactory(name: "memory", section: "memory", allowedKeys: ["accessGroups"],
                                                summary: "in-memory") { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try InMemoryStore(configuration: StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? ["securestore"]))
        })
        if BackendRegistry.factory(named: "sqlite") == nil {   // the default's name must resolve
            BackendRegistry.register(BackendFactory(name: "sqlite", section: "sqlite", allowedKeys: ["path", "keyFile", "passphraseEnv"],
                                                    summary: "stand-in") { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
                throw SecureStoreError(.notAvailable, "stand-in for the test")
            })
        }
        BackendRegistry.register(BackendFactory(name: "broken", section: "broken", allowedKeys: [],
                                                summary: "never available") { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            throw SecureStoreError(.notAvailable, "the daemon is not running; start it with …")
        })
        // A backend "defined outside this package": only the public registry API is used.
        BackendRegistry.register(BackendFactory(name: "thirdparty", section: "thirdParty", allowedKeys: ["greeting"],
                                                summary: "a test-only backend") { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            let store = try InMemoryStore()
            try store.add(NewItem(.genericPassword, [.service: .string(try s.string("greeting") ?? "none")]))
            return store
        })
    }()

    func tempConfig(_ json: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("config.json").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("explicit > environment > config file > default, and the reason is reported")
    func order() throws {
        _ = Self.register
        let file = try tempConfig(#"{"backend": "thirdparty", "thirdParty": {"greeting": "hi"}}"#)
        let noFile = ["XDG_CONFIG_HOME": "/nonexistent-\(UUID().uuidString)"]
        #expect(try StoreSelection.resolve(environment: noFile).reason == .defaultChoice)
        #expect(try StoreSelection.resolve(environment: noFile).backend == "sqlite")
        let byFile = try StoreSelection.resolve(environment: ["SECURESTORE_CONFIG": file])
        #expect(byFile.backend == "thirdparty")
        #expect(byFile.reason == .environment(variable: "SECURESTORE_CONFIG") || byFile.reason == .configFile(path: file))
        let byEnv = try StoreSelection.resolve(environment: ["SECURESTORE_CONFIG": file, "SECURESTORE_BACKEND": "memory"])
        #expect(byEnv.backend == "memory")
        #expect(byEnv.reason == .environment(variable: "SECURESTORE_BACKEND"))
        let explicit = try StoreSelection.resolve(backend: "memory", environment: ["SECURESTORE_BACKEND": "thirdparty"])
        #expect(explicit.reason == .explicit)
        // The third-party backend opens with its section's settings.
        let store = try byFile.open()
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: "hi"])).count == 1)
    }

    @Test("a backend that cannot be used is an error naming it, never a fallback")
    func noFallback() throws {
        _ = Self.register
        let e = #expect(throws: SecureStoreError.self) {
            try StoreSelection.resolve(environment: ["SECURESTORE_BACKEND": "broken", "XDG_CONFIG_HOME": "/nonexistent"]).open()
        }
        #expect(e?.code == .notAvailable)
        #expect(e?.message.contains("broken") == true && e?.message.contains("SECURESTORE_BACKEND") == true)
        let unknown = #expect(throws: SecureStoreError.self) {
            try StoreSelection.resolve(backend: "nosuch", environment: [:])
        }
        #expect(unknown?.message.contains("nosuch") == true)
    }

    @Test("config file errors name the file and the key")
    func badFiles() throws {
        _ = Self.register
        let cases: [(String, String)] = [
            (#"{"backend": "memory", "bogus": 1}"#, "bogus"),
            (#"{"backend": 7}"#, "backend"),
            (#"{"sqlite": {"path": "/x", "passphrase": "never in a file"}}"#, "passphrase"),
            (#"{"sqlite": "not an object"}"#, "sqlite"),
            (#"not json"#, "JSON"),
        ]
        for (json, key) in cases {
            let path = try tempConfig(json)
            let e = #expect(throws: SecureStoreError.self) { try StoreSelection.resolve(configFile: path, environment: [:]) }
            #expect(e?.message.contains(key) == true, "\(json): \(e?.message ?? "")")
            #expect(e?.message.contains(path) == true)
            #expect(e?.message.contains("never in a file") != true, "values are not echoed")
        }
        let missing = #expect(throws: SecureStoreError.self) { try StoreSelection.resolve(configFile: "/nonexistent/c.json", environment: [:]) }
        #expect(missing?.message.contains("/nonexistent/c.json") == true)
        // Too big, endless, or not a file: an error naming it, after reading at most the limit.
        let big = try tempConfig(#"{"backend": "memory", "pad": ""# + String(repeating: " ", count: 1 << 20) + "}")
        for path in [big, "/dev/zero", FileManager.default.temporaryDirectory.path] {
            let e = #expect(throws: SecureStoreError.self) { try StoreSelection.resolve(configFile: path, environment: [:]) }
            #expect(e?.message.contains(path) == true, "\(e?.message ?? "")")
        }
        let wrongType = try tempConfig(#"{"backend": "memory", "memory": {"accessGroups": "one"}}"#)
        let e = #expect(throws: SecureStoreError.self) { try StoreSelection.resolve(configFile: wrongType, environment: [:]).open() }
        #expect(e?.message.contains("accessGroups") == true)
    }
}
