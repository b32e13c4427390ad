public import SecureStore

/// A store that lives in this process's memory: for tests and ephemeral processes.
public typealias InMemoryStore = Keychain<InMemoryBackend>

extension Keychain where Backend == InMemoryBackend {
    /// An empty in-memory store.
    public convenience init(configuration: StoreConfiguration = StoreConfiguration()) throws(SecureStoreError) {
        try self.init(backend: InMemoryBackend(), configuration: configuration)
    }
}

/// Records in a dictionary behind a lock (`Locked`), with a uniqueness-key index so a query that names an item's
/// full key is one hash lookup.
public final class InMemoryBackend: StorageBackend {
    private let state = Locked(State())

    public init() {}

    public var backendDescription: String { "memory" }

    public func withTransaction<T>(writing: Bool, _ body: (inout State) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        // The body runs entirely under the lock and the result is
        // handed out only after it, so we pass it through an unchecked box.
        let outcome: UncheckedBox<Result<T, SecureStoreError>> = state.withLock { state in
            state.undo = [:]
            defer { state.undo = nil }
            do throws(SecureStoreError) {
                return UncheckedBox(.success(try body(&state)))
            } catch {
                state.rollBack()
                return UncheckedBox(.failure(error))
            }
        }
        return try outcome.value.get()
    }

    /// The backend's tables, with an undo log so that a failed transaction leaves no trace.
    public struct State: StorageTransaction, Sendable {
        struct Entry: Sendable {
            var order: UInt64
            var record: ItemRecord
        }
        var entries: [PersistentRef: Entry] = [:]
        var byKey: [UniqueKey: PersistentRef] = [:]
        var nextOrder: UInt64 = 0
        /// The entries as they were before this transaction touched them (`nil` inner: did not exist).
        var undo: [PersistentRef: Entry?]? = nil

        private mutating func remember(_ ref: PersistentRef) {
            if undo != nil, undo?[ref] == nil { undo?[ref] = .some(entries[ref]) }
        }

        mutating func rollBack() {
            guard let undo else { return }
            for (ref, before) in undo {
                if let now = entries.removeValue(forKey: ref), byKey[now.record.uniqueKey] == ref {
                    byKey[now.record.uniqueKey] = nil
                }
                if let before {
                    entries[ref] = before
                    byKey[before.record.uniqueKey] = ref
                }
            }
        }

        public mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
            if let ref = filter.persistentRef {
                return entries[ref].map { [$0.record] } ?? []
            }
            var hits: [Entry] = []
            if let keys = filter.uniqueKeys, keys.count == 1 {   // a full-key lookup: one probe, one array
                guard let ref = byKey[keys[0]], let entry = entries[ref] else { return [] }
                return [entry.record]
            }
            if let keys = filter.uniqueKeys {
                for key in keys {
                    if let ref = byKey[key], let entry = entries[ref] { hits.append(entry) }
                }
            } else {
                for entry in entries.values where filter.itemClass == nil || entry.record.itemClass == filter.itemClass {
                    hits.append(entry)
                }
            }
            if hits.count > 1 { hits.sort { $0.order < $1.order } }
            return hits.map(\.record)
        }

        public mutating func insert(_ record: ItemRecord) throws(SecureStoreError) {
            remember(record.persistentRef)
            entries[record.persistentRef] = Entry(order: nextOrder, record: record)
            byKey[record.uniqueKey] = record.persistentRef
            nextOrder += 1
        }

        public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
            guard let old = entries[record.persistentRef] else {
                throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
            }
            remember(record.persistentRef)
            if old.record.uniqueKey != record.uniqueKey, byKey[old.record.uniqueKey] == record.persistentRef {
                byKey[old.record.uniqueKey] = nil
            }
            byKey[record.uniqueKey] = record.persistentRef
            entries[record.persistentRef] = Entry(order: old.order, record: record)
        }

        public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
            for ref in refs {
                remember(ref)
                guard let old = entries.removeValue(forKey: ref) else { continue }
                if byKey[old.record.uniqueKey] == ref { byKey[old.record.uniqueKey] = nil }
            }
        }

        public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
            let doomed = entries.values.filter { classes.contains($0.record.itemClass) }.map(\.record.persistentRef)
            try remove(doomed)
            return doomed.count
        }
    }
}

private struct UncheckedBox<Value>: @unchecked Sendable {   // crosses the lock boundary only; never shared
    let value: Value
    init(_ value: Value) { self.value = value }
}
