public import SecureStoreCore
import Foundation

/// One transaction on a ``SecretServiceBackend`` (runs under the backend's mutex, a writer also under the
/// writer lock): turns filters into searches, records into items, and keeps the undo log.
///
/// The Secret Service has no transactions: every write takes effect at once, and a transaction that fails
/// is undone by ``rollBack()``, best effort (``SecretServiceBackend/guarantees``).
public struct SecretServiceTransaction: StorageTransaction {
    struct Known {
        var path: String
        var record: ItemRecord
        var sequence: UInt64
    }
    enum Undo {
        case inserted(path: String)
        case replaced(Known)
        case removed(Known)
    }

    let connection: Connection
    let namespace: String
    /// Hands out insertion sequence numbers; nil in a reading transaction.
    let sequence: InsertionSequence?
    /// Records this transaction has seen, by reference (for replace/remove and for undo).
    var known: [PersistentRef: Known] = [:]
    var undo: [Undo] = []
    /// Whether the collection's `Locked` property was read in this transaction (with its first search).
    var lockChecked = false
    /// Whether anything was sent that changes the keyring (then the transaction is never retried).
    private(set) var wrote = false

    init(connection: Connection, namespace: String, sequence: InsertionSequence?) {
        self.connection = connection
        self.namespace = namespace
        self.sequence = sequence
    }

    /// Searches. A writing transaction's first search travels with the collection's lock check. A reading one
    /// asks only when its first search finds nothing (unlocked matches show the collection unlocked, locked
    /// ones fail the search), so a locked collection is `interactionNotAllowed`, never an empty result.
    private mutating func search(_ queries: [[String: String]], session: Bool = false) throws(SecureStoreError) -> [String] {
        let writing = sequence != nil
        let paths = try connection.search(queries, checkingLock: writing && !lockChecked, session: session)
        if !lockChecked, !writing, paths.isEmpty { _ = try connection.search([], checkingLock: true, session: false) }
        lockChecked = true
        return paths
    }

    /// Before the first write: the collection must be unlocked (writing to a locked one would prompt).
    private mutating func willWrite() throws(SecureStoreError) {
        if !lockChecked { _ = try search([]) }
        wrote = true
    }

    public mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        // No class in the searches: items of mapping v3 and v4 carry it packed (the core checks it).
        let base = Mapping.scope(namespace: namespace)
        // The plain service/account attributes the query names as non-empty text (an item without the
        // attribute matches only the empty default, so narrowing by them cannot miss an item).
        // An add's (or a one-item update's) uniqueness search: the new record's own values.
        let given = filter.uniquenessOf.map { record in { (name: AttributeName) in record[name] } }
            ?? { filter.equalities[$0] }
        var plain = base
        for (name, key) in [(AttributeName.service, Mapping.plainService), (AttributeName.account, Mapping.plainAccount)] {
            if let text = Mapping.plainText(given(name)), !text.isEmpty { plain[key] = text }
        }
        let narrowed = plain.count > base.count
        var searches: [[String: String]] = []
        if let ref = filter.persistentRef {
            searches = Mapping.refSearches(namespace: namespace, ref: ref)
        } else if let keys = filter.uniqueKeys {
            // A v4 generic password with a non-empty plain service or account has no key attribute
            // (`Mapping.needsKeyAttribute`): it is found by those plain attributes, which every item of every
            // mapping carries, so a search narrowed by them finds every item with these keys. Without them,
            // such a password can have one of these keys only if the filter does not say its service and
            // account (the core gives an add's search the new record); then the whole namespace is read.
            let keyless = filter.itemClass == nil || filter.itemClass == .genericPassword
            let complete = filter.itemClass == .genericPassword
                && (filter.uniquenessOf != nil || filter.equalities[.service] != nil && filter.equalities[.account] != nil)
            if narrowed, keyless || keys.count > 1 {
                searches = [plain]
            } else if !keyless || complete {
                // Each key in both forms: hashed (v3, v4) and raw (items of v1 and v2), all in one batch.
                for key in Set(keys) {
                    for value in [Mapping.uniqueKeyAttribute(key), Mapping.legacyUniqueKeyAttribute(key)] {
                        var q = base
                        q[Mapping.uniqueKeyKey] = value
                        searches.append(q)
                    }
                }
            } else {
                searches = [base]
            }
        } else {
            searches = [plain]
        }
        // A read that returns no secrets (a listing, attributes, references) makes no GetSecrets call.
        let secrets = filter.needsData || sequence != nil
        let records = try load(try search(searches, session: secrets), secrets: secrets)
        if secrets { for known in records { self.known[known.record.persistentRef] = known } }
        return records.map(\.record)
    }

    /// Attributes (and secrets when `secrets`: one bulk GetSecrets, the attribute reads with it) of these items,
    /// in insertion order. Without secrets, each record's data is nil.
    private func load(_ paths: [String], secrets: Bool) throws(SecureStoreError) -> [Known] {
        guard !paths.isEmpty else { return [] }
        let items = try connection.load(paths, secrets: secrets)
        var out: [Known] = []
        out.reserveCapacity(paths.count)
        for (path, item) in zip(paths, items) {
            guard secrets else {
                var known = try Self.decode(item.attributes, Data(), path: path)
                let r = known.record
                known.record = ItemRecord(persistentRef: r.persistentRef, itemClass: r.itemClass, ordered: r.entries, data: nil)
                out.append(known)
                continue
            }
            guard let data = item.secret else {
                throw SecureStoreError(.io, "Secret Service returned no secret for item \(path).")
            }
            out.append(try Self.decode(item.attributes, data, path: path))
        }
        out.sort { ($0.sequence, $0.path) < ($1.sequence, $1.path) }
        return out
    }

    static func decode(_ attributes: [String: String], _ data: Data, path: String) throws(SecureStoreError) -> Known {
        do throws(Mapping.DecodeFailure) {
            let (record, sequence) = try Mapping.record(from: attributes, data: data)
            return Known(path: path, record: record, sequence: sequence)
        } catch {
            let what: String = switch error {
            case .missing(let key): "lacks attribute \(key)"
            case .malformed(let key): "has a malformed attribute \(key)"
            }
            throw SecureStoreError(.decode, "The Secret Service item \(path) \(what); it was not written by this "
                + "version of SecureStore or was changed by another program. Delete it with your keyring manager.")
        }
    }

    private mutating func locate(_ ref: PersistentRef) throws(SecureStoreError) -> Known? {
        if let k = known[ref] { return k }
        _ = try find(RecordFilter(persistentRef: ref))
        return known[ref]
    }

    private func create(_ record: ItemRecord, sequence: UInt64) throws(SecureStoreError) -> String {
        try connection.create(label: Mapping.label(of: record),
                              attributes: Mapping.attributes(of: record, namespace: namespace, sequence: sequence),
                              secret: record.data ?? Data())   // no secret: empty, marked in the packed record
    }

    public mutating func insert(_ record: ItemRecord) throws(SecureStoreError) {
        guard let sequence else {
            throw SecureStoreError(.internalError, "An insert was attempted in a reading transaction.")
        }
        try willWrite()
        let number = try sequence.next(connection: connection, namespace: namespace)
        let path = try create(record, sequence: number)
        undo.append(.inserted(path: path))
        known[record.persistentRef] = Known(path: path, record: record, sequence: number)
    }

    /// Rewrites `old`'s item as `record` (keeping its sequence), sending the label and secret only when they
    /// change. Upgrades an item of an earlier mapping to v4.
    private func rewrite(_ old: Known, to record: ItemRecord) throws(SecureStoreError) {
        let label = Mapping.label(of: record)
        try connection.update(path: old.path,
                              attributes: Mapping.attributes(of: record, namespace: namespace, sequence: old.sequence),
                              label: label == Mapping.label(of: old.record) ? nil : label,
                              secret: record.data == old.record.data ? nil : record.data ?? Data())
    }

    public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
        guard let old = try locate(record.persistentRef) else {
            throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
        }
        try willWrite()
        undo.append(.replaced(old))
        try rewrite(old, to: record)
        known[record.persistentRef] = Known(path: old.path, record: record, sequence: old.sequence)
    }

    public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
        var doomed: [Known] = []
        for ref in refs {
            guard let old = try locate(ref) else { continue }
            doomed.append(old)
        }
        guard !doomed.isEmpty else { return }
        try willWrite()
        // Logged before the deletes: undoing a delete that did not happen re-creates nothing new (the
        // item is found by its reference first).
        for old in doomed { undo.append(.removed(old)) }
        try connection.delete(doomed.map(\.path))
        for old in doomed { known[old.record.persistentRef] = nil }
    }

    public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
        var paths = try search([Mapping.scope(namespace: namespace)])
        if classes != Set(ItemClass.allCases), !paths.isEmpty {
            // The class is packed in the item (v3, v4): read the attributes to pick the items of these classes.
            let items = try connection.load(paths, secrets: false)
            paths = zip(paths, items).compactMap { path, item in
                Mapping.itemClass(from: item.attributes).map(classes.contains) == true ? path : nil
            }
        }
        try willWrite()
        try connection.delete(paths)
        known = [:]
        return paths.count
    }

    /// Best effort: undoes this transaction's writes in reverse order (a removed item that is gone is
    /// re-created with its attributes, sequence and secret, so it keeps its place). Returns how many writes
    /// could not be undone (a failed step is skipped). Nothing is attempted once the daemon stopped answering.
    mutating func rollBack() -> Int {
        defer { undo = [] }
        guard !connection.timedOut else { return undo.count }
        var failed = 0
        for step in undo.reversed() {
            do throws(SecureStoreError) {
                switch step {
                case .inserted(let path):
                    try connection.delete([path])
                case .replaced(let old):
                    try connection.update(path: old.path,
                                          attributes: Mapping.attributes(of: old.record, namespace: namespace,
                                                                         sequence: old.sequence),
                                          label: Mapping.label(of: old.record), secret: old.record.data ?? Data())
                case .removed(let old):
                    let probes = Mapping.refSearches(namespace: namespace, ref: old.record.persistentRef)
                    if try connection.search(probes, checkingLock: false, session: false).isEmpty {
                        _ = try create(old.record, sequence: old.sequence)
                    }
                }
            } catch {
                failed += 1
                continue
            }
        }
        return failed
    }
}
