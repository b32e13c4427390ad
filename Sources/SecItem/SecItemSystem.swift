public import SecureStoreCore
import Foundation
import SecureStoreBackends

/// The process-wide store behind `SecItemAdd` and friends, chosen once per process in the manner of
/// swift-log's `LoggingSystem.bootstrap`.
///
/// Without a bootstrap call, the first SecItem call opens the default store (see ``openDefault(creating:)``).
/// Call ``bootstrap(_:)`` before the first SecItem call to choose another store in code.
public enum SecItemSystem {
    private struct State {
        var factory: (@Sendable () throws(SecureStoreError) -> any SecureStore)?
        var store: (any SecureStore)?
        var bootstrapped = false
    }
    private static let state = Locked(State())

    /// The store used when nothing was bootstrapped: the configured one (`SECURESTORE_BACKEND`,
    /// `SECURESTORE_CONFIG`, `~/.config/securestore/config.json`), by default the encrypted SQLite store (the
    /// Secret Service when the package is built without its `SQLite` trait). A backend whose trait is
    /// disabled is an error naming the trait. Without `creating`, only a store that exists is opened
    /// (`itemNotFound` otherwise, nothing written).
    static func openDefault(creating: Bool) throws(SecureStoreError) -> any SecureStore {
        try BuiltinBackends.open(creatingStore: creating)
    }

    /// Chooses the store every SecItem function uses. Call once, before the first SecItem call.
    /// - Precondition: not bootstrapped before, and no SecItem call has opened the default store yet.
    public static func bootstrap(_ store: any SecureStore) {
        state.withLock { s in
            precondition(!s.bootstrapped && s.store == nil,
                         "SecItemSystem.bootstrap may only be called once, before the first SecItem call.")
            s.bootstrapped = true
            s.store = store
        }
    }

    /// Like ``bootstrap(_:)`` with a factory that is run on first use (so a failure to open surfaces as a
    /// status from the first SecItem call, not at start-up).
    public static func bootstrap(_ factory: @escaping @Sendable () throws(SecureStoreError) -> any SecureStore) {
        state.withLock { s in
            precondition(!s.bootstrapped && s.store == nil,
                         "SecItemSystem.bootstrap may only be called once, before the first SecItem call.")
            s.bootstrapped = true
            s.factory = factory
        }
    }

    /// For tests: replaces the store at any time.
    static func bootstrapInternal(_ store: any SecureStore) {
        state.withLock { s in
            s.bootstrapped = true
            s.store = store
            s.factory = nil
        }
    }

    /// A store that replaces the process-wide one for the current task only (see ``withStore(_:_:)``).
    @TaskLocal private static var scopedStore: (any SecureStore)?

    /// Runs `body` with every SecItem call made by this task going to `store`, whatever was bootstrapped.
    /// For the fuzz harnesses and tests, which share one process with other users of the SecItem functions.
    package static func withStore<R>(_ store: any SecureStore, _ body: () throws -> R) rethrows -> R {
        try $scopedStore.withValue(store, operation: body)
    }

    /// The store in use, opening it on first use.
    public static func store() throws(SecureStoreError) -> any SecureStore {
        try store(creating: true)
    }

    /// The store in use. With `creating` false (the calls that only read, change or delete), the default
    /// store is opened only if it exists: where nothing was ever added there is no store, and such a call
    /// fails with `itemNotFound` (`errSecItemNotFound`, what Apple's keychain answers when it holds nothing)
    /// without writing a file; the next call tries again, and the first `SecItemAdd` creates the store. A
    /// bootstrapped store or factory is used as it is.
    static func store(creating: Bool) throws(SecureStoreError) -> any SecureStore {
        if let scoped = scopedStore { return scoped }
        let outcome: Result<any SecureStore, SecureStoreError> = state.withLock { s in
            if let store = s.store { return .success(store) }
            do throws(SecureStoreError) {
                let store = if let factory = s.factory { try factory() } else { try openDefault(creating: creating) }
                s.store = store
                return .success(store)
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}
