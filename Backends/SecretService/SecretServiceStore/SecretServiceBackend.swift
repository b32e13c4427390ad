public import SecureStore
import Foundation
internal import CSecret

/// Stores records as items of one Secret Service collection. The only file that touches libsecret/GLib.
///
/// One `SecretService` connection (with an open transfer session) per backend, reused by every call; it is
/// dropped after a D-Bus failure and reopened by the next transaction. Transactions of one backend are
/// serialized by a mutex. Every D-Bus wait is bounded by ``callTimeoutMilliseconds``.
public final class SecretServiceBackend: StorageBackend {
    /// The bound on every D-Bus call.
    public static let callTimeoutMilliseconds: Int32 = 5000

    public let collection: String
    public let namespace: String
    private let state: Locked<Connection?>
    /// Serializes this namespace's writers across the processes of this machine (held for a writing transaction).
    private let writerLock: WriterLock

    /// Connects at once, so a missing Secret Service is reported here.
    public init(collection: String = "default", namespace: String) throws(SecureStoreError) {
        guard !namespace.isEmpty, Mapping.isSafe(namespace) else {
            throw .param("namespace", "The Secret Service namespace must be non-empty text without NUL characters.")
        }
        guard !collection.isEmpty, Mapping.isSafe(collection) else {
            throw .param("collection", "The Secret Service collection must be a non-empty alias or name.")
        }
        self.collection = collection
        self.namespace = namespace
        writerLock = WriterLock(collection: collection, namespace: namespace)
        let connection = try Connection.open(collection: collection, activate: true)
        state = Locked(connection)
    }

    public var backendDescription: String { "secret-service collection \(collection) namespace \(namespace)" }

    /// The Secret Service has no transactions: a failure midway is undone best effort; writers of this
    /// package are serialized by the writer lock, readers are not isolated; durability is the daemon's.
    public static let guarantees = StorageGuarantees(atomicWrites: false, acrossProcesses: .writersSerialized,
                                                     acrossMachines: .notShared, durableOnReturn: false,
                                                     insertionOrder: .lockedCounter)

    public func withTransaction<T>(writing: Bool, _ body: (inout SecretServiceTransaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        let outcome: Box<Result<T, SecureStoreError>> = state.withLock { slot in
            guard writing else { return run(&slot, body) }
            // Writers of this namespace in other processes of this machine wait for this one (uniqueness).
            let locked = Result { () throws(SecureStoreError) in try writerLock.withLock { run(&slot, body) } }
            switch locked {
            case .success(let box): return box
            case .failure(let error): return Box(.failure(error))
            }
        }
        return try outcome.value.get()
    }

    /// One transaction on the connection in `slot` (opened when there is none), once more on a new
    /// connection when a reused one turned out stale.
    private func run<T>(_ slot: inout Connection?, _ body: (inout SecretServiceTransaction) throws(SecureStoreError) -> T)
        -> Box<Result<T, SecureStoreError>>
    {
        // A reused connection may be stale (the daemon was restarted: libsecret's proxy still addresses
        // the old daemon's unique name). Then the transaction (rolled back) runs once more on a new one.
        var attempt = 0
        var timedOut = false   // a daemon that did not answer gets no second wait
        while true {
            attempt += 1
            let reused = slot != nil
            do throws(SecureStoreError) {
                let connection: Connection
                if let existing = slot {
                    connection = existing
                } else {
                    connection = try Connection.open(collection: collection, activate: false)
                    slot = connection
                }
                do throws(SecureStoreError) {
                    try connection.checkUnlocked()
                    var txn = SecretServiceTransaction(connection: connection, namespace: namespace)
                    do throws(SecureStoreError) {
                        return Box(.success(try body(&txn)))
                    } catch {
                        txn.rollBack()
                        throw error
                    }
                } catch {
                    if connection.broken {   // reconnect on the next try / transaction
                        slot = nil
                        timedOut = connection.timedOut
                    }
                    throw error
                }
            } catch {
                if reused, slot == nil, attempt == 1, !timedOut, error.code == .notAvailable { continue }
                return Box(.failure(error))
            }
        }
    }
}

/// One transaction on a ``SecretServiceBackend`` (runs under the backend's mutex).
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
    /// Records this transaction has seen, by reference (for replace/remove and for undo).
    var known: [PersistentRef: Known] = [:]
    var undo: [Undo] = []

    init(connection: Connection, namespace: String) {
        self.connection = connection
        self.namespace = namespace
    }

    public mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        var base = Mapping.scope(namespace: namespace)
        if let c = filter.itemClass { base[Mapping.classKey] = c.rawValue }
        var searches: [[String: String]] = []
        if let ref = filter.persistentRef {
            base[Mapping.refKey] = Mapping.refAttribute(ref)
            searches = [base]
        } else if let keys = filter.uniqueKeys {
            for key in Set(keys) {
                var q = base
                q[Mapping.uniqueKeyKey] = Mapping.uniqueKeyAttribute(key)
                searches.append(q)
            }
        } else {
            // Narrow by the plain service/account attributes when the query names non-empty text (an item
            // without the attribute matches only the empty default, so it cannot be missed).
            for (name, plain) in [(AttributeName.service, Mapping.plainService), (AttributeName.account, Mapping.plainAccount)] {
                if let value = filter.equalities[name], let text = Mapping.exactText(value), !text.isEmpty,
                   Mapping.isSafe(text) {
                    base[plain] = text
                }
            }
            searches = [base]
        }
        var paths: [String] = []
        var seen = Set<String>()
        for query in searches {
            for path in try connection.search(query) where seen.insert(path).inserted {
                paths.append(path)
            }
        }
        let records = try load(paths)
        for known in records { self.known[known.record.persistentRef] = known }
        return records.map(\.record)
    }

    /// Attributes and secrets of these items (one bulk GetSecrets), in insertion order.
    private func load(_ paths: [String]) throws(SecureStoreError) -> [Known] {
        guard !paths.isEmpty else { return [] }
        let secrets = try connection.secrets(paths)
        var out: [Known] = []
        out.reserveCapacity(paths.count)
        for path in paths {
            let attributes = try connection.attributes(of: path)
            guard let data = secrets[path] else {
                throw SecureStoreError(.io, "Secret Service returned no secret for item \(path).")
            }
            do throws(Mapping.DecodeFailure) {
                let (record, sequence) = try Mapping.record(from: attributes, data: data)
                out.append(Known(path: path, record: record, sequence: sequence))
            } catch {
                let what: String = switch error {
                case .missing(let key): "lacks attribute \(key)"
                case .malformed(let key): "has a malformed attribute \(key)"
                }
                throw SecureStoreError(.decode, "The Secret Service item \(path) \(what); see MAPPING.md.")
            }
        }
        out.sort { ($0.sequence, $0.path) < ($1.sequence, $1.path) }
        return out
    }

    private mutating func locate(_ ref: PersistentRef) throws(SecureStoreError) -> Known? {
        if let k = known[ref] { return k }
        _ = try find(RecordFilter(persistentRef: ref))
        return known[ref]
    }

    public mutating func insert(_ record: ItemRecord) throws(SecureStoreError) {
        let sequence = InsertionSequence.next()
        let path = try connection.create(record, attributes: Mapping.attributes(of: record, namespace: namespace,
                                                                                  sequence: sequence))
        undo.append(.inserted(path: path))
        known[record.persistentRef] = Known(path: path, record: record, sequence: sequence)
    }

    public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
        guard let old = try locate(record.persistentRef) else {
            throw SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
        }
        undo.append(.replaced(old))
        try connection.update(path: old.path, from: old.record, to: record,
                              attributes: Mapping.attributes(of: record, namespace: namespace, sequence: old.sequence))
        known[record.persistentRef] = Known(path: old.path, record: record, sequence: old.sequence)
    }

    public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
        for ref in refs {
            guard let old = try locate(ref) else { continue }
            try connection.delete(path: old.path)
            undo.append(.removed(old))
            known[ref] = nil
        }
    }

    public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
        var queries: [[String: String]] = []
        if classes == Set(ItemClass.allCases) {
            queries = [Mapping.scope(namespace: namespace)]
        } else {
            for c in classes.sorted(by: { $0.rawValue < $1.rawValue }) {
                var q = Mapping.scope(namespace: namespace)
                q[Mapping.classKey] = c.rawValue
                queries.append(q)
            }
        }
        var count = 0
        for query in queries {
            for path in try connection.search(query) {
                try connection.delete(path: path)
                count += 1
            }
        }
        known = [:]
        return count
    }

    /// Best effort: undoes this transaction's writes in reverse order (a removed item is re-created with its
    /// attributes, sequence and secret, so it keeps its place). Failures here are ignored.
    mutating func rollBack() {
        for step in undo.reversed() {
            do throws(SecureStoreError) {
                switch step {
                case .inserted(let path):
                    try connection.delete(path: path)
                case .replaced(let old):
                    let attributes = Mapping.attributes(of: old.record, namespace: namespace, sequence: old.sequence)
                    try connection.update(path: old.path, from: nil, to: old.record, attributes: attributes)
                case .removed(let old):
                    let attributes = Mapping.attributes(of: old.record, namespace: namespace, sequence: old.sequence)
                    _ = try connection.create(old.record, attributes: attributes)
                }
            } catch {
                continue
            }
        }
        undo = []
    }
}

/// Insertion sequence numbers: nanoseconds since 1970, strictly increasing within this process.
enum InsertionSequence {
    private static let last = Locked<UInt64>(0)
    static func next() -> UInt64 {
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1_000_000_000))
        return last.withLock { last in
            last = max(now, last + 1)
            return last
        }
    }
}

/// The connection: a SecretService proxy with an open session, and the collection's object path.
/// Used only under the backend's mutex.
final class Connection: @unchecked Sendable {
    private let service: UnsafeMutablePointer<SecretService>
    let collectionPath: String
    /// Set after a D-Bus failure; the backend then opens a new connection for the next transaction.
    private(set) var broken = false
    /// Set when the failure was a call that got no answer in time.
    private(set) var timedOut = false

    private init(service: UnsafeMutablePointer<SecretService>, collectionPath: String) {
        self.service = service
        self.collectionPath = collectionPath
    }

    deinit { ss_unref(UnsafeMutableRawPointer(service)) }

    static let hint = "start one with `dbus-run-session` and `gnome-keyring-daemon --unlock --components=secrets`, "
        + "or run under scripts/with-keyring.sh"

    /// - Parameter activate: whether D-Bus may start a Secret Service by activation (first open only; a
    ///   reconnect after a failure never starts one, as an activated daemon cannot unlock without a prompt).
    static func open(collection: String, activate: Bool) throws(SecureStoreError) -> Connection {
        var error: UnsafeMutablePointer<GError>? = nil
        if !activate {
            let running = ss_service_running(SecretServiceBackend.callTimeoutMilliseconds, &error)
            if running < 0 {
                let why = String(cString: ss_error_message(error))
                ss_error_free(error)
                throw SecureStoreError(.notAvailable, "Secret Service not available: \(why); \(hint).")
            }
            if running == 0 {
                throw SecureStoreError(.notAvailable,
                    "Secret Service not available: no process owns org.freedesktop.secrets on the session bus; \(hint).")
            }
        }
        // Bound the set-up too: a timer cancels it after the call timeout (the cancellable stays alive until
        // both the timer and this function are done with it).
        let cancellable = ss_cancellable_new()
        let timer = CancellableRef(cancellable)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(SecretServiceBackend.callTimeoutMilliseconds))) {
            timer.cancel()
        }
        let opened = ss_open(SecretServiceBackend.callTimeoutMilliseconds, cancellable, &error)
        ss_unref(UnsafeMutableRawPointer(cancellable))
        guard let service = opened else {
            var why = String(cString: ss_error_message(error))
            if ss_error_is_cancelled(error) != 0 {
                why = "no answer within \(SecretServiceBackend.callTimeoutMilliseconds) ms"
            }
            ss_error_free(error)
            throw SecureStoreError(.notAvailable, "Secret Service not available: \(why); \(hint).")
        }
        var aliasError: UnsafeMutablePointer<GError>? = nil
        let aliasPath = secret_service_read_alias_dbus_path_sync(service, collection, nil, &aliasError)
        if let aliasError {
            let failure = describe(aliasError, doing: "reading the collection alias \(collection)")
            ss_error_free(aliasError)
            ss_unref(UnsafeMutableRawPointer(service))
            throw failure
        }
        let path: String
        if let aliasPath {
            path = String(cString: aliasPath)
            ss_free(aliasPath)
        } else {
            path = "/org/freedesktop/secrets/collection/" + collection
        }
        let connection = Connection(service: service, collectionPath: path)
        try connection.checkUnlocked()
        return connection
    }

    /// Maps a GError to a SecureStoreError. Messages carry D-Bus facts only, never secrets.
    private static func describe(_ error: UnsafeMutablePointer<GError>, doing what: String) -> SecureStoreError {
        let message = String(cString: ss_error_message(error))
        var remote = ""
        if let name = ss_error_remote_name(error) {
            remote = String(cString: name)
            ss_free(name)
        }
        if ss_error_is_locked(error) != 0 || remote == "org.freedesktop.Secret.Error.IsLocked" {
            return SecureStoreError(.interactionNotAllowed,
                "The Secret Service collection is locked (\(what)); unlocking needs a prompt, which is not allowed.")
        }
        if ss_error_is_timeout(error) != 0 {
            return SecureStoreError(.notAvailable,
                "Secret Service not available: no answer within \(SecretServiceBackend.callTimeoutMilliseconds) ms "
                + "while \(what); \(hint).")
        }
        if ss_error_is_service_gone(error) != 0 || ss_error_is_no_such_object(error) != 0
            || remote.hasPrefix("org.freedesktop.DBus.Error.") || remote == "org.freedesktop.Secret.Error.NoSuchObject"
        {
            return SecureStoreError(.notAvailable,
                "Secret Service not available: \(message) (while \(what)); \(hint).")
        }
        return SecureStoreError(.io, "Secret Service call failed while \(what): \(message)")
    }

    /// Consumes `error`, marks the connection broken and returns the mapped error.
    private func fail(_ error: UnsafeMutablePointer<GError>?, doing what: String) -> SecureStoreError {
        guard let error else {
            broken = true
            return SecureStoreError(.io, "Secret Service call failed while \(what) (no reason given).")
        }
        let mapped = Self.describe(error, doing: what)
        if ss_error_is_timeout(error) != 0 { timedOut = true }
        ss_error_free(error)
        if mapped.code != .interactionNotAllowed { broken = true }
        return mapped
    }

    /// Throws `interactionNotAllowed` when the collection is locked (we never prompt).
    func checkUnlocked() throws(SecureStoreError) {
        var error: UnsafeMutablePointer<GError>? = nil
        let locked = ss_get_locked(service, collectionPath, "org.freedesktop.Secret.Collection",
                                   SecretServiceBackend.callTimeoutMilliseconds, &error)
        if locked < 0 { throw fail(error, doing: "checking whether collection \(collectionPath) is locked") }
        if locked == 1 {
            throw SecureStoreError(.interactionNotAllowed,
                "The Secret Service collection \(collectionPath) is locked; unlocking needs a prompt, which is not "
                + "allowed. Unlock it (e.g. log in, or restart gnome-keyring-daemon with --unlock) and retry.")
        }
    }

    private static func table(_ attributes: [String: String]) -> OpaquePointer? {
        let t = ss_strings_new()
        for (k, v) in attributes { ss_strings_put(t, k, v) }
        return t
    }

    /// SearchItems: paths of matching items in this collection. Locked matches → interactionNotAllowed.
    func search(_ attributes: [String: String]) throws(SecureStoreError) -> [String] {
        let t = Self.table(attributes)
        defer { ss_table_unref(t) }
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? = nil
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? = nil
        var error: UnsafeMutablePointer<GError>? = nil
        guard ss_search(service, t, &unlocked, &locked, &error) != 0 else {
            throw fail(error, doing: "searching items")
        }
        defer { ss_strv_free(unlocked); ss_strv_free(locked) }
        let prefix = collectionPath + "/"
        if !Self.strings(locked).filter({ $0.hasPrefix(prefix) }).isEmpty {
            throw SecureStoreError(.interactionNotAllowed,
                "Matching items in \(collectionPath) are locked; unlocking needs a prompt, which is not allowed.")
        }
        return Self.strings(unlocked).filter { $0.hasPrefix(prefix) }
    }

    private static func strings(_ v: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        guard let v else { return [] }
        var out: [String] = []
        var i = 0
        while let p = v[i] {
            out.append(String(cString: p))
            i += 1
        }
        return out
    }

    /// One bulk GetSecrets for all paths.
    func secrets(_ paths: [String]) throws(SecureStoreError) -> [String: Data] {
        var cPaths: [UnsafeMutablePointer<CChar>?] = paths.map { strdup($0) }
        cPaths.append(nil)
        defer { for p in cPaths { free(p) } }
        var error: UnsafeMutablePointer<GError>? = nil
        let table = cPaths.withUnsafeMutableBufferPointer { buffer in
            ss_get_secrets(service, buffer.baseAddress, &error)
        }
        guard let table else { throw fail(error, doing: "reading secrets") }
        defer { ss_table_unref(table) }
        var out: [String: Data] = [:]
        for path in paths {
            guard let value = ss_secrets_lookup(table, path) else { continue }
            var length = 0
            if let bytes = ss_value_bytes(value, &length), length > 0 {
                out[path] = Data(bytes: bytes, count: length)
            } else {
                out[path] = Data()
            }
        }
        return out
    }

    /// The item's attributes (Properties.Get, one round trip).
    func attributes(of path: String) throws(SecureStoreError) -> [String: String] {
        var error: UnsafeMutablePointer<GError>? = nil
        guard let v = ss_get_item_attributes(service, path, SecretServiceBackend.callTimeoutMilliseconds, &error) else {
            throw fail(error, doing: "reading the attributes of \(path)")
        }
        defer { ss_variant_unref(v) }
        var out: [String: String] = [:]
        let n = ss_variant_count(v)
        for i in 0..<n {
            var k: UnsafePointer<CChar>? = nil
            var val: UnsafePointer<CChar>? = nil
            ss_variant_entry(v, i, &k, &val)
            if let k, let val { out[String(cString: k)] = String(cString: val) }
        }
        return out
    }

    private static func value(_ data: Data) -> OpaquePointer? {
        data.withUnsafeBytes { raw in ss_value_new(raw.baseAddress, raw.count) }
    }

    /// CreateItem in the collection; returns the new item's path.
    func create(_ record: ItemRecord, attributes: [String: String]) throws(SecureStoreError) -> String {
        let t = Self.table(attributes)
        let properties = ss_item_properties(Mapping.label(of: record), t)
        let value = Self.value(record.data ?? Data())   // no secret: empty, marked by Mapping.noDataKey
        defer { ss_table_unref(t); ss_table_unref(properties); ss_value_unref(value) }
        var error: UnsafeMutablePointer<GError>? = nil
        guard let path = secret_service_create_item_dbus_path_sync(service, collectionPath, properties, value,
                                                                  SECRET_ITEM_CREATE_NONE, nil, &error) else {
            throw fail(error, doing: "creating an item")
        }
        defer { ss_free(path) }
        return String(cString: path)
    }

    /// Rewrites an item in place: attributes always, label and secret when they changed.
    func update(path: String, from old: ItemRecord?, to record: ItemRecord, attributes: [String: String])
        throws(SecureStoreError)
    {
        let timeout = SecretServiceBackend.callTimeoutMilliseconds
        var error: UnsafeMutablePointer<GError>? = nil
        let t = Self.table(attributes)
        defer { ss_table_unref(t) }
        guard ss_set_item_attributes(service, path, t, timeout, &error) != 0 else {
            throw fail(error, doing: "setting the attributes of \(path)")
        }
        let label = Mapping.label(of: record)
        if old.map({ Mapping.label(of: $0) }) != label {
            guard ss_set_item_label(service, path, label, timeout, &error) != 0 else {
                throw fail(error, doing: "setting the label of \(path)")
            }
        }
        if old?.data != record.data {
            let value = Self.value(record.data ?? Data())
            defer { ss_value_unref(value) }
            guard ss_set_item_secret(service, path, value, timeout, &error) != 0 else {
                throw fail(error, doing: "setting the secret of \(path)")
            }
        }
    }

    func delete(path: String) throws(SecureStoreError) {
        var error: UnsafeMutablePointer<GError>? = nil
        guard secret_service_delete_item_dbus_path_sync(service, path, nil, &error) != 0 else {
            throw fail(error, doing: "deleting \(path)")
        }
    }
}

/// A reference on a GCancellable for the timer that cancels it; released after cancelling.
private final class CancellableRef: @unchecked Sendable {   // g_cancellable_cancel is thread-safe
    private let pointer: UnsafeMutablePointer<GCancellable>?
    init(_ pointer: UnsafeMutablePointer<GCancellable>?) {
        self.pointer = pointer
        _ = g_object_ref(UnsafeMutableRawPointer(pointer))
    }
    func cancel() {
        ss_cancel(pointer)
        ss_unref(UnsafeMutableRawPointer(pointer))
    }
}

private struct Box<Value>: @unchecked Sendable {   // crosses the lock boundary only; never shared
    let value: Value
    init(_ value: Value) { self.value = value }
}
