import SecureStoreCore
import Foundation
internal import CSecret

/// The connection to the Secret Service: a libsecret `SecretService` proxy with libsecret's transfer session,
/// and the collection's object path. With Connection+Calls.swift, the only code of the backend that calls
/// libsecret, GDBus or GLib; no pointer, GError or return code leaves them.
///
/// Calls that do not depend on each other are started together and awaited together (``batch``): the first
/// search travels with the collection alias's `ReadAlias` and `OpenSession`, a writer's first search with the
/// collection's `Locked` check, the attribute reads of items not in ``AttributeCache`` with the bulk
/// `GetSecrets`. Used only under the backend's mutex.
final class Connection: @unchecked Sendable {   // used by one thread at a time (the backend's mutex)
    /// The bound on waiting for one answer; an operation stops at the first call that gets none in time.
    static let timeout = SecretServiceBackend.callTimeoutMilliseconds
    /// At most this many reads of one batch are in flight at once.
    static let readWindow = 128
    /// At most this many writes of one batch: the daemon rewrites its file for each (tens of milliseconds in a
    /// big keyring), and a call's timeout runs from when it is sent, so writes are not queued up at the daemon.
    static let writeWindow = 2

    let service: UnsafeMutablePointer<SecretService>
    /// The alias or name the connection was opened for.
    let collection: String
    /// The collection's object path, known after the first batch that needed it (``resolve()``).
    private var resolvedPath: String?
    /// Follows the collection's item changes for ``cache`` (see ``AttributeCache``).
    private var watch: UnsafeMutablePointer<SSWatch>?
    private var cache = AttributeCache()
    /// Set after a D-Bus failure; the backend then opens a new connection for the next transaction.
    var broken = false
    /// Set when a call got no answer in time (or none at all): nothing more is sent on this connection.
    var timedOut = false
    /// The main context of the batch whose results are being read (prompts are completed on it).
    var context: OpaquePointer?
    /// The provider named in messages (read from the bus once, when a message first needs it).
    lazy var provider: String = SecretServiceProvider.current()?.description ?? "the Secret Service"

    private init(service: UnsafeMutablePointer<SecretService>, collection: String) {
        self.service = service
        self.collection = collection
    }

    deinit {
        if let watch { ss_watch_free(watch) }
        ss_unref(UnsafeMutableRawPointer(service))
    }

    /// The collection's path; a placeholder only in messages about a connection that never searched.
    var collectionPath: String { resolvedPath ?? collection }

    private func watchEpoch() throws(SecureStoreError) -> UInt64 {
        if let watch { return ss_watch_epoch(watch) }
        let started = ss_watch_new(service, try resolve())
        watch = started
        return ss_watch_epoch(started)
    }

    private func changed(_ path: String, since epoch: UInt64) -> Bool {
        guard let watch else { return true }
        return ss_watch_changed_since(watch, path, epoch) != 0
    }

    /// The collection's object path: `ReadAlias`, with the first search (or alone, when a call needs the path
    /// before any search). An alias naming no collection means `collection` is a collection's name.
    private func resolve() throws(SecureStoreError) -> String {
        if let resolvedPath { return resolvedPath }
        try batch(count: 1, doing: { _ in self.aliasStep }, start: { (_, call) throws(SecureStoreError) in
            ss_start_read_alias(service, collection, Self.timeout, call)
        }, finish: { (_, call) throws(SecureStoreError) in try self.noteAlias(call) })
        return collectionPath
    }
    private var aliasStep: String { "reading the collection alias \(collection)" }
    private static let sessionStep = "opening the transfer session (OpenSession)"

    private var hasSession: Bool { ss_has_session(service) != 0 }
    private func openSession() throws(SecureStoreError) {
        guard !hasSession else { return }
        try batch(count: 1, doing: { _ in Self.sessionStep }, start: { (_, call) throws(SecureStoreError) in
            ss_start_open_session(service, call)
        }, finish: { _, _ in })
    }
    private func noteAlias(_ call: UnsafeMutablePointer<SSCall>) throws(SecureStoreError) {
        let path = String(cString: ss_call_path(call, 0))
        guard path == "/" else {
            resolvedPath = path
            return
        }
        let named = "/org/freedesktop/secrets/collection/" + collection
        // A name that cannot be an object path element names no collection (and no call may be sent to it).
        guard ss_is_object_path(named) != 0 else {
            broken = true   // the next transaction asks again (an alias may have been made since)
            throw SecureStoreError(.notAvailable, "Secret Service not available: \(provider) has no alias or collection "
                + "named \(collection) (a collection's name has only letters, digits and _); \(Self.hint).")
        }
        resolvedPath = named
    }

    /// What a user can do when no Secret Service answers.
    static let hint = "the Secret Service is the desktop keyring: log in to a desktop session that runs one (GNOME "
        + "Keyring, KeePassXC), or start one in this session with `gnome-keyring-daemon --unlock --components=secrets` "
        + "(inside `dbus-run-session` when there is no session bus), or choose another backend (`--backend sqlite`)"

    // MARK: Opening

    /// - Parameter activate: whether D-Bus may start a Secret Service by activation (first open only; a
    ///   reconnect after a failure never starts one, as an activated daemon cannot unlock without a prompt).
    static func open(collection: String, activate: Bool) throws(SecureStoreError) -> Connection {
        try LibSecret.require()
        var error: UnsafeMutablePointer<GError>? = nil
        if !activate {
            let running = ss_service_running(timeout, &error)
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
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout))) { timer.cancel() }
        let opened = ss_open(timeout, 0, cancellable, &error)   // the session opens with the first search
        ss_unref(UnsafeMutableRawPointer(cancellable))
        guard let service = opened else {
            var why = String(cString: ss_error_message(error))
            if ss_error_is_cancelled(error) != 0 { why = "no answer within \(timeout) ms" }
            ss_error_free(error)
            let who = SecretServiceProvider.current()?.description ?? "the Secret Service"
            throw SecureStoreError(.notAvailable, "Secret Service not available: \(why) (\(who)); \(hint).")
        }
        return Connection(service: service, collection: collection)
    }

    // MARK: Reading

    /// SearchItems for each query, together (and with the collection's `Locked` check when `checkingLock`, the
    /// alias's `ReadAlias` when not yet resolved, and OpenSession when `session` and none is open): the paths in
    /// this collection matching any query, each once, in query order. A locked collection or locked matches →
    /// `interactionNotAllowed` (we never prompt to unlock).
    func search(_ queries: [[String: String]], checkingLock: Bool, session: Bool = true) throws(SecureStoreError) -> [String] {
        // The lock check names the collection's path: resolved first, on its own, only when a writer's first
        // search needs it before any other search resolved it.
        if checkingLock { _ = try resolve() }
        var paths: [String] = []
        var seen = Set<String>()
        var lockedMatch = false
        let aliasCall = resolvedPath == nil ? 1 : 0
        let first = aliasCall + (checkingLock ? 1 : 0)   // the searches follow the alias and lock calls
        let last = first + queries.count                 // and the session set-up follows them
        let sessionCall = session && !hasSession ? 1 : 0
        try batch(count: last + sessionCall, doing: { i in
            i < aliasCall ? aliasStep : i < first ? "checking whether collection \(collectionPath) is locked"
                : i < last ? "searching items" : Self.sessionStep
        }, start: { (i, call) throws(SecureStoreError) in
            if i < aliasCall {
                ss_start_read_alias(service, collection, Self.timeout, call)
            } else if i < first {
                ss_start_get_locked(service, collectionPath, Self.timeout, call)
            } else if i == last {
                ss_start_open_session(service, call)
            } else {
                let t = Self.table(queries[i - first])
                ss_start_search(service, t, Self.timeout, call)
                ss_table_unref(t)
            }
        }, finish: { (i, call) throws(SecureStoreError) in
            if i < aliasCall { return try noteAlias(call) }   // finished in call order: before the searches are read
            if i == last { return }
            if i < first {
                if ss_call_locked(call) == 1 { throw lockedError() }
                return
            }
            let prefix = collectionPath + "/"
            for j in 0..<ss_call_path_count(call, 1) where String(cString: ss_call_path_at(call, 1, j)).hasPrefix(prefix) {
                lockedMatch = true
            }
            for j in 0..<ss_call_path_count(call, 0) {
                let path = String(cString: ss_call_path_at(call, 0, j))
                if path.hasPrefix(prefix), seen.insert(path).inserted { paths.append(path) }
            }
        })
        if lockedMatch {
            throw SecureStoreError(.interactionNotAllowed, "Matching items in \(collectionPath) are locked in \(provider); "
                + "unlocking needs a prompt, which is not allowed.")
        }
        return paths
    }

    /// The attributes of these items, and their secrets when `secrets` (only then is `GetSecrets` called): one
    /// bulk `GetSecrets` and one `Properties.Get(Attributes)` per item not in ``cache``, all in flight together.
    func load(_ paths: [String], secrets: Bool) throws(SecureStoreError) -> [(attributes: [String: String], secret: Data?)] {
        var attributes = [[String: String]](repeating: [:], count: paths.count)
        var missing: [Int] = []
        for (i, path) in paths.enumerated() {
            if let known = cache.attributes(of: path, changedSince: changed) { attributes[i] = known } else { missing.append(i) }
        }
        if secrets { try openSession() }
        let epoch = try watchEpoch()
        var values: [String: Data] = [:]
        let extra = secrets ? 1 : 0
        try batch(count: missing.count + extra, doing: { i in
            i < extra ? "reading secrets" : "reading the attributes of \(paths[missing[i - extra]])"
        }, start: { (i, call) throws(SecureStoreError) in
            if i < extra {
                var cPaths: [UnsafePointer<CChar>?] = paths.map { UnsafePointer(strdup($0)) }
                cPaths.append(nil)
                defer { for p in cPaths { free(UnsafeMutablePointer(mutating: p)) } }
                cPaths.withUnsafeBufferPointer { ss_start_get_secrets(service, $0.baseAddress, Self.timeout, call) }
            } else {
                ss_start_get_attributes(service, paths[missing[i - extra]], Self.timeout, call)
            }
        }, finish: { (i, call) throws(SecureStoreError) in
            if i < extra {
                for j in 0..<ss_call_secret_count(call) {
                    var path: UnsafePointer<CChar>? = nil
                    guard let value = ss_call_secret_at(service, call, j, &path), let path else {
                        throw SecureStoreError(.io, "\(provider) returned a secret this session cannot decode.")
                    }
                    defer { ss_value_unref(value) }
                    var length = 0
                    let bytes = ss_value_bytes(value, &length)
                    values[String(cString: path)] = bytes.map { Data(bytes: $0, count: length) } ?? Data()
                }
                return
            }
            let index = missing[i - extra]
            guard let v = ss_call_attributes(call) else {
                throw SecureStoreError(.io, "The Attributes property of \(paths[index]) is not a string map.")
            }
            defer { ss_variant_unref(v) }
            var out: [String: String] = [:]
            for j in 0..<ss_variant_count(v) {
                var k: UnsafePointer<CChar>? = nil
                var val: UnsafePointer<CChar>? = nil
                ss_variant_entry(v, j, &k, &val)
                if let k, let val { out[String(cString: k)] = String(cString: val) }
            }
            attributes[index] = out
            cache.remember(out, of: paths[index], epoch: epoch)
        })
        return paths.indices.map { (attributes[$0], secrets ? values[paths[$0]] : nil) }
    }

    // MARK: Writing

    static func table(_ attributes: [String: String]) -> OpaquePointer? {
        let t = ss_strings_new()
        for (k, v) in attributes { ss_strings_put(t, k, v) }
        return t
    }

    private static func value(_ data: Data) -> OpaquePointer? {
        data.withUnsafeBytes { raw in ss_value_new(raw.baseAddress, raw.count) }
    }

    /// CreateItem in the collection (label, attributes, secret), completing the prompt a provider may answer
    /// with; returns the new item's path.
    func create(label: String, attributes: [String: String], secret: Data) throws(SecureStoreError) -> String {
        try openSession()
        let epoch = try watchEpoch()
        let collectionPath = try resolve()
        let t = Self.table(attributes)
        let value = Self.value(secret)
        defer { ss_table_unref(t); ss_value_unref(value) }
        var created = ""
        try batch(count: 1, writes: true, doing: { _ in "creating an item (CreateItem)" }, start: { (_, call) throws(SecureStoreError) in
            guard ss_start_create_item(service, collectionPath, label, t, value, Self.timeout, call) != 0 else {
                throw SecureStoreError(.io, "Could not encode the secret for the Secret Service session.")
            }
        }, finish: { (_, call) throws(SecureStoreError) in
            created = String(cString: ss_call_path(call, 0))
            let prompt = String(cString: ss_call_path(call, 1))
            if created == "/" {
                created = try complete(prompt: prompt, doing: "creating an item") ?? "/"
            }
        })
        guard created != "/" else {
            throw SecureStoreError(.io, "\(provider) answered CreateItem without an item or a prompt.")
        }
        cache.remember(attributes, of: created, epoch: epoch)
        return created
    }

    /// Rewrites an item in place, together: attributes always, the label and the secret when given.
    func update(path: String, attributes: [String: String], label: String?, secret: Data?) throws(SecureStoreError) {
        if secret != nil { try openSession() }
        cache.forget(path)
        var steps: [(String, (UnsafeMutablePointer<SSCall>) throws(SecureStoreError) -> Void)] = []
        steps.append(("setting the attributes of \(path)", { call throws(SecureStoreError) in
            let t = Self.table(attributes)
            ss_start_set_attributes(self.service, path, t, Self.timeout, call)
            ss_table_unref(t)
        }))
        if let label {
            steps.append(("setting the label of \(path)", { call throws(SecureStoreError) in
                ss_start_set_label(self.service, path, label, Self.timeout, call)
            }))
        }
        if let secret {
            steps.append(("setting the secret of \(path)", { call throws(SecureStoreError) in
                let value = Self.value(secret)
                defer { ss_value_unref(value) }
                guard ss_start_set_secret(self.service, path, value, Self.timeout, call) != 0 else {
                    throw SecureStoreError(.io, "Could not encode the secret for the Secret Service session.")
                }
            }))
        }
        try batch(count: steps.count, writes: true, doing: { steps[$0].0 }, start: { (i, call) throws(SecureStoreError) in
            try steps[i].1(call)
        }, finish: { _, _ in })
    }

    /// Deletes these items, the calls in flight together, completing the prompts a provider may answer with.
    func delete(_ paths: [String]) throws(SecureStoreError) {
        for path in paths { cache.forget(path) }
        try batch(count: paths.count, window: Self.writeWindow, writes: true, doing: { "deleting \(paths[$0])" },
                  start: { (i, call) throws(SecureStoreError) in
            ss_start_delete(service, paths[i], Self.timeout, call)
        }, finish: { (i, call) throws(SecureStoreError) in
            let prompt = String(cString: ss_call_path(call, 0))
            if prompt != "/" { _ = try complete(prompt: prompt, doing: "deleting \(paths[i])") }
        })
    }
}

/// A reference on a GCancellable for the timer that cancels it; released after cancelling.
final class CancellableRef: @unchecked Sendable {   // g_cancellable_cancel is thread-safe
    private let pointer: UnsafeMutablePointer<GCancellable>?
    init(_ pointer: UnsafeMutablePointer<GCancellable>?) {
        self.pointer = pointer
        ss_ref(UnsafeMutableRawPointer(pointer))
    }
    func cancel() {
        ss_cancel(pointer)
        ss_unref(UnsafeMutableRawPointer(pointer))
    }
}
