public import SecureStoreCore

/// A store whose items live in a Secret Service collection (gnome-keyring, KeePassXC, …) over D-Bus.
///
/// Every item carries this store's namespace (`securestore.namespace`); no operation ever reads, changes or
/// deletes an item outside it. See `Backends/SecretService/MAPPING.md`.
public typealias SecretServiceStore = Keychain<SecretServiceBackend>

extension Keychain where Backend == SecretServiceBackend {
    /// Connects to the session bus's Secret Service (once; the connection is reused).
    /// - Parameters:
    ///   - collection: a collection alias (`"default"`, usually the `login` keyring) or a collection name.
    ///   - namespace: separates this store's items from every other store's in the same collection.
    /// - Throws: `notAvailable` without a session bus or Secret Service; `interactionNotAllowed` when the
    ///   collection is locked (no prompt is ever shown); `param` for an unusable namespace.
    ///   - configuration: nil for the default, whose access groups are ``defaultAccessGroups(namespace:)``.
    public convenience init(collection: String = "default", namespace: String,
                            configuration: StoreConfiguration? = nil) throws(SecureStoreError) {
        try self.init(backend: SecretServiceBackend(collection: collection, namespace: namespace),
                      configuration: configuration
                          ?? StoreConfiguration(accessGroups: Self.defaultAccessGroups(namespace: namespace)))
    }

    /// The access groups of a store with none configured: ``StoreConfiguration/defaultAccessGroup``, as on
    /// every backend (new items go there), then the namespace itself, the default group of earlier versions,
    /// so items stored with it stay visible, changeable and deletable.
    public static func defaultAccessGroups(namespace: String) -> [String] {
        namespace == StoreConfiguration.defaultAccessGroup
            ? [StoreConfiguration.defaultAccessGroup] : [StoreConfiguration.defaultAccessGroup, namespace]
    }
}
