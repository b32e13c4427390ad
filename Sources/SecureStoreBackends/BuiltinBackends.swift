public import SecureStore
import InMemoryStore

/// Registers this package's backends with the ``BackendRegistry`` (idempotent). The CLI, the SecItem
/// module's default store and `SecureStoreBackends.open()` call it; a program may call it too.
public enum BuiltinBackends {
    private static let once: Void = {
        BackendRegistry.register(BackendFactory(
            name: "memory", section: "memory", allowedKeys: ["accessGroups"],
            summary: "in this process's memory only (tests, ephemeral processes)"
        ) { (s: BackendSettings) throws(SecureStoreError) -> any SecureStore in
            try InMemoryStore(configuration: StoreConfiguration(accessGroups: try s.strings("accessGroups") ?? ["securestore"]))
        })
    }()

    public static func register() { once }

    /// Resolves the selection (explicit > environment > config file > default) and opens it.
    public static func open(backend: String? = nil, configFile: String? = nil) throws(SecureStoreError) -> any SecureStore {
        register()
        return try StoreSelection.resolve(backend: backend, configFile: configFile).open()
    }
}
