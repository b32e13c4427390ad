import SecureStore
import Foundation
internal import CSecret

/// The connection to the Secret Service: a `SecretService` proxy, the transfer session (our own,
/// ``TransferSession``; libsecret's only when the daemon refuses ours), and the collection's object path. The
/// only file of the backend that calls libsecret, GDBus or GLib; no pointer, GError or return code leaves it.
///
/// Calls that do not depend on each other are started together and awaited together (``batch``): the
/// first search travels with the collection alias's `ReadAlias` and the transfer session's `OpenSession`
/// (whose key exchange the client computes while the daemon searches), a writing transaction's first
/// search with the collection's `Locked` check, and the attributes of items not in ``AttributeCache`` with
/// the bulk `GetSecrets`. Opening makes only the round trips libsecret needs for the proxy, so a one-shot
/// lookup makes one round trip fewer than `secret-tool lookup` (which opens the session before searching).
/// Used only under the backend's mutex.
final class Connection: @unchecked Sendable {   // used by one thread at a time (the backend's mutex)
    /// The bound on every D-Bus call.
    static let timeout = SecretServiceBackend.callTimeoutMilliseconds
    /// At most this many reads of one batch are in flight at once (each has its own timeout).
    static let readWindow = 128
    /// At most this many writes of one batch: the daemon rewrites its file for each (tens of milliseconds in a
    /// big keyring), and a call's timeout runs from when it is sent, so writes are not queued up at the daemon.
    static let writeWindow = 2

    private let service: UnsafeMutablePointer<SecretService>
    /// The alias or name the connection was opened for.
    let collection: String
    /// The collection's object path, known after the first batch that needed it (``resolve()``).
    private var resolvedPath: String?
    /// Follows the collection's item changes for ``cache`` (see ``AttributeCache``); started before the first
    /// read or write whose attributes are remembered.
    private var watch: UnsafeMutablePointer<SSWatch>?
    private var cache = AttributeCache()
    /// Set after a D-Bus failure; the backend then opens a new connection for the next transaction.
    private(set) var broken = false
    /// Set when the failure was a call that got no answer in time.
    private(set) var timedOut = false
    /// Our transfer session (TransferSession.swift) once OpenSession answered, and the key pair of one in flight.
    private var transfer: TransferSession?
    private var pendingTransfer: TransferSession?
    /// Set when the daemon refused our algorithm (or libgcrypt is missing): libsecret's session from then on.
    private(set) var usesLibsecretSession = false
    /// The algorithm our OpenSession asks for (a test asks for one the daemon refuses, to reach the fallback).
    var transferAlgorithm = TransferSession.algorithm

    private init(service: UnsafeMutablePointer<SecretService>, collection: String) {
        self.service = service
        self.collection = collection
    }

    deinit {
        if let watch { ss_watch_free(watch) }
        ss_unref(UnsafeMutableRawPointer(service))
    }

    /// The collection's path (resolved by every batch of ``search(_:checkingLock:)``, which comes first in every
    /// transaction); a placeholder only in messages about a connection that never searched.
    var collectionPath: String { resolvedPath ?? collection }

    /// The epoch of the change watch, started first when it is not yet (its match rules are sent before any
    /// later call of this connection, so they are in force for every reply read after).
    private func watchEpoch() throws(SecureStoreError) -> UInt64 {
        if let watch { return ss_watch_epoch(watch) }
        let started = ss_watch_new(service, try resolve())
        watch = started
        return ss_watch_epoch(started)
    }

    /// Whether the daemon announced a change of the item at `path` after `epoch` (or went away).
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

    /// Whether the transfer session is open (it is opened with the first search, or here before a call that
    /// sends or reads a secret without a search before it).
    private var hasSession: Bool { transfer != nil || ss_has_session(service) != 0 }
    private func openSession() throws(SecureStoreError) {
        guard !hasSession else { return }
        let ours = !usesLibsecretSession
        try batch(count: 1, doing: { _ in Self.sessionStep }, start: { (_, call) throws(SecureStoreError) in
            try startSession(call)
        }, finish: { (_, call) throws(SecureStoreError) in try finishSession(call) })
        if ours, usesLibsecretSession, !hasSession { try openSession() }   // ours refused: libsecret's session
    }
    private func noteAlias(_ call: UnsafeMutablePointer<SSCall>) throws(SecureStoreError) {
        let path = ss_call_object_path(call).map { String(cString: $0) } ?? "/"
        guard path == "/" else {
            resolvedPath = path
            return
        }
        let named = "/org/freedesktop/secrets/collection/" + collection
        // A name that cannot be an object path element names no collection (and no call may be sent to it).
        guard ss_is_object_path(named) != 0 else {
            broken = true   // the next transaction asks again (an alias may have been made since)
            throw SecureStoreError(.notAvailable, "Secret Service not available: no alias or collection is named "
                + "\(collection) (a collection's name has only letters, digits and _); \(Self.hint).")
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
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout))) {
            timer.cancel()
        }
        let opened = ss_open(timeout, 0, cancellable, &error)   // the session opens with the first search
        ss_unref(UnsafeMutableRawPointer(cancellable))
        guard let service = opened else {
            var why = String(cString: ss_error_message(error))
            if ss_error_is_cancelled(error) != 0 {
                why = "no answer within \(timeout) ms"
            }
            ss_error_free(error)
            throw SecureStoreError(.notAvailable, "Secret Service not available: \(why); \(hint).")
        }
        // The alias and the collection's lock state are read by the first transaction, with its first search
        // (a locked collection is then `interactionNotAllowed`, never an empty result).
        return Connection(service: service, collection: collection)
    }

    // MARK: Errors

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
                "The Secret Service collection is locked (\(what)); unlocking needs a prompt, which is not allowed. "
                + "Unlock your keyring (e.g. log in, or open it once in your keyring manager) and retry.")
        }
        if ss_error_is_timeout(error) != 0 {
            return SecureStoreError(.notAvailable,
                "Secret Service not available: no answer within \(timeout) ms while \(what); \(hint).")
        }
        if ss_error_is_service_gone(error) != 0 || ss_error_is_no_such_object(error) != 0
            || remote.hasPrefix("org.freedesktop.DBus.Error.") || remote == "org.freedesktop.Secret.Error.NoSuchObject"
            || remote == "org.freedesktop.Secret.Error.NoSession"   // the daemon restarted since we connected
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

    private func lockedError() -> SecureStoreError {
        SecureStoreError(.interactionNotAllowed,
            "The Secret Service collection \(collectionPath) is locked; unlocking needs a prompt, which is not "
            + "allowed. Unlock your keyring (e.g. log in, or open it once in your keyring manager) and retry.")
    }

    // MARK: Batches

    /// D-Bus calls in flight together: `start` begins call `i`, `finish` reads it after it completed. At most
    /// `window` calls are outstanding; every started call is awaited before this returns, so no reply
    /// arrives after. The first failure (in call order) is thrown after all are done.
    private func batch(count: Int, window: Int = Connection.readWindow, doing what: (Int) -> String,
                       start: (Int, UnsafeMutablePointer<SSCall>) throws(SecureStoreError) -> Void,
                       finish: (Int, UnsafeMutablePointer<SSCall>) throws(SecureStoreError) -> Void)
        throws(SecureStoreError)
    {
        guard count > 0 else { return }
        let context = ss_batch_begin()
        var calls: [UnsafeMutablePointer<SSCall>] = []
        calls.reserveCapacity(count)
        var failure: SecureStoreError? = nil
        var started = 0
        func startNext() {
            let call: UnsafeMutablePointer<SSCall> = ss_call_new()
            calls.append(call)
            let index = started
            started += 1
            do throws(SecureStoreError) { try start(index, call) } catch {
                if failure == nil { failure = error }
                call.pointee.done = 1   // never started: nothing to wait for
            }
        }
        while started < min(count, window) { startNext() }
        for i in 0..<count {
            ss_call_wait(context, calls[i])
            if started < count { startNext() }
        }
        ss_batch_end(context)
        defer { for call in calls { ss_call_free(call) } }
        if let failure { throw failure }
        for i in 0..<count {
            guard ss_call_ok(calls[i]) != 0 else { throw fail(ss_call_take_error(calls[i]), doing: what(i)) }
            try finish(i, calls[i])
        }
    }

    private static func table(_ attributes: [String: String]) -> OpaquePointer? {
        let t = ss_strings_new()
        for (k, v) in attributes { ss_strings_put(t, k, v) }
        return t
    }

    // MARK: Reading

    /// SearchItems for each query, together (and with the collection's `Locked` check when `checkingLock`, and
    /// the alias's `ReadAlias` when it is not yet resolved): the paths in this collection matching any query,
    /// each once, in query order. A locked collection or locked matches → `interactionNotAllowed` (we never
    /// prompt).
    func search(_ queries: [[String: String]], checkingLock: Bool) throws(SecureStoreError) -> [String] {
        // The lock check names the collection's path: resolved first, on its own, only when a writer's first
        // search needs it before any other search resolved it.
        if checkingLock { _ = try resolve() }
        var paths: [String] = []
        var seen = Set<String>()
        var lockedMatch = false
        let aliasCall = resolvedPath == nil ? 1 : 0
        let lockCall = checkingLock ? 1 : 0
        let first = aliasCall + lockCall   // the searches follow the alias and lock calls
        let last = first + queries.count   // and the session set-up follows them (its key pair is made when started)
        let sessionCall = hasSession ? 0 : 1
        try batch(count: last + sessionCall, doing: { i in
            i < aliasCall ? aliasStep
                : i < first ? "checking whether collection \(collectionPath) is locked"
                : i < last ? "searching items" : Self.sessionStep
        }, start: { (i, call) throws(SecureStoreError) in
            if i < aliasCall {
                ss_start_read_alias(service, collection, Self.timeout, call)
            } else if i < first {
                ss_start_get_locked(service, collectionPath, Self.timeout, call)
            } else if i == last {
                try startSession(call)
            } else {
                let t = Self.table(queries[i - first])
                ss_start_search(service, t, Self.timeout, call)
                ss_table_unref(t)
            }
        }, finish: { (i, call) throws(SecureStoreError) in
            if i < aliasCall { return try noteAlias(call) }   // finished in call order: before the searches are read
            if i == last { return try finishSession(call) }
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
        if sessionCall == 1 { try openSession() }   // only when the daemon refused our algorithm (libsecret's then)
        if lockedMatch {
            throw SecureStoreError(.interactionNotAllowed,
                "Matching items in \(collectionPath) are locked; unlocking needs a prompt, which is not allowed.")
        }
        return paths
    }

    /// The attributes of these items, and their secrets when `secrets`: one bulk `GetSecrets` and one
    /// `Properties.Get(Attributes)` per item not in ``cache``, all in flight together.
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
                cPaths.withUnsafeBufferPointer { paths in
                    if let session = transfer?.path {   // our session
                        ss_start_get_secrets_in(service, paths.baseAddress, session, Self.timeout, call)
                    } else {
                        ss_start_get_secrets(service, paths.baseAddress, Self.timeout, call)
                    }
                }
            } else {
                ss_start_get_attributes(service, paths[missing[i - extra]], Self.timeout, call)
            }
        }, finish: { (i, call) throws(SecureStoreError) in
            if i < extra {
                for j in 0..<ss_call_secret_count(call) {
                    let (path, secret) = try secret(at: j, of: call)
                    values[path] = secret
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

    private static func value(_ data: Data) -> OpaquePointer? {
        data.withUnsafeBytes { raw in ss_value_new(raw.baseAddress, raw.count) }
    }

    /// CreateItem in the collection (label, attributes, secret); returns the new item's path.
    func create(label: String, attributes: [String: String], secret: Data) throws(SecureStoreError) -> String {
        let t = Self.table(attributes)
        let properties = ss_item_properties(label, t)
        let value = Self.value(secret)
        defer { ss_table_unref(t); ss_table_unref(properties); ss_value_unref(value) }
        var error: UnsafeMutablePointer<GError>? = nil
        try openSession()
        let epoch = try watchEpoch()
        let collectionPath = try resolve()
        let made: UnsafeMutablePointer<gchar>?
        if let encoded = try encodedSecret(secret) {   // with our session; libsecret encodes for its own
            made = ss_create_item_encoded(service, collectionPath, label, t, encoded, Self.timeout, &error)
        } else {
            made = secret_service_create_item_dbus_path_sync(service, collectionPath, properties, value,
                                                             SECRET_ITEM_CREATE_NONE, nil, &error)
        }
        guard let path = made else {
            throw fail(error, doing: "creating an item")
        }
        defer { ss_free(path) }
        let created = String(cString: path)
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
                if let encoded = try self.encodedSecret(secret) {   // with our session
                    return ss_start_set_encoded_secret(self.service, path, encoded, Self.timeout, call)
                }
                let value = Self.value(secret)
                defer { ss_value_unref(value) }
                guard ss_start_set_secret(self.service, path, value, Self.timeout, call) != 0 else {
                    throw SecureStoreError(.io, "Could not encode the secret for the Secret Service session.")
                }
            }))
        }
        try batch(count: steps.count, doing: { steps[$0].0 }, start: { (i, call) throws(SecureStoreError) in
            try steps[i].1(call)
        }, finish: { _, _ in })
    }

    /// Deletes these items, the calls in flight together. An item that needs a prompt to be deleted →
    /// `interactionNotAllowed`.
    func delete(_ paths: [String]) throws(SecureStoreError) {
        for path in paths { cache.forget(path) }
        try batch(count: paths.count, window: Self.writeWindow, doing: { "deleting \(paths[$0])" }, start: { (i, call) throws(SecureStoreError) in
            ss_start_delete(service, paths[i], Self.timeout, call)
        }, finish: { (i, call) throws(SecureStoreError) in
            if ss_call_no_prompt(call) == 0 {
                throw SecureStoreError(.interactionNotAllowed,
                    "Deleting \(paths[i]) needs a prompt, which is not allowed; unlock your keyring and retry.")
            }
        })
    }
}

// MARK: The transfer session

extension Connection {
    /// Whether secrets travel encrypted with our own session (TransferSession.swift) rather than libsecret's.
    var usesOwnSession: Bool { transfer != nil }

    /// Starts OpenSession: ours with a new key pair (made here, so after the calls before it were sent), or
    /// libsecret's when the daemon refused ours or libgcrypt cannot be loaded.
    private func startSession(_ call: UnsafeMutablePointer<SSCall>) throws(SecureStoreError) {
        pendingTransfer = nil
        if !usesLibsecretSession {
            do throws(SecureStoreError) {
                let session = try TransferSession()
                pendingTransfer = session
                session.publicKey.withUnsafeBytes { key in
                    ss_start_open_dh_session(service, transferAlgorithm, key.baseAddress, key.count, Self.timeout, call)
                }
                return
            } catch where error.code == .notAvailable {   // no libgcrypt: libsecret's session
                usesLibsecretSession = true
            }
        }
        ss_start_open_session(service, call)
    }

    /// Reads OpenSession's answer: the daemon's public key gives our session key. A refused algorithm leaves no
    /// session and switches to libsecret's (the caller opens it).
    private func finishSession(_ call: UnsafeMutablePointer<SSCall>) throws(SecureStoreError) {
        guard let session = pendingTransfer else { return }   // libsecret's session: it read the answer itself
        pendingTransfer = nil
        if ss_call_unsupported(call) != 0 {
            usesLibsecretSession = true
            return
        }
        var path: UnsafePointer<CChar>? = nil
        var key: UnsafeRawPointer? = nil
        var length = 0
        guard let output = ss_call_dh_session(call, &path, &key, &length), let path else {
            throw SecureStoreError(.io, "The Secret Service answered OpenSession without a public key.")
        }
        defer { ss_variant_unref(output) }
        try session.establish(peer: UnsafeRawBufferPointer(start: key, count: length), path: String(cString: path))
        transfer = session
    }

    /// `data` as a Secret (oayays) encrypted with our session (floating: the call that sends it takes it), or nil
    /// when libsecret's session is used.
    private func encodedSecret(_ data: Data) throws(SecureStoreError) -> OpaquePointer? {
        guard let transfer, let session = transfer.path else { return nil }
        let (iv, ciphertext) = try transfer.encrypt(data)
        return ss_secret_new(session, iv, iv.count, ciphertext, ciphertext.count)
    }

    /// The item path and the secret of the j-th entry of a finished GetSecrets, decrypted with the session.
    private func secret(at j: Int, of call: UnsafeMutablePointer<SSCall>) throws(SecureStoreError) -> (String, Data) {
        var path: UnsafePointer<CChar>? = nil
        guard let transfer, let session = transfer.path else {
            guard let value = ss_call_secret_at(service, call, j, &path), let path else {
                throw SecureStoreError(.io, "The Secret Service returned a secret this session cannot decode.")
            }
            defer { ss_value_unref(value) }
            var length = 0
            guard let bytes = ss_value_bytes(value, &length), length > 0 else { return (String(cString: path), Data()) }
            return (String(cString: path), Data(bytes: bytes, count: length))
        }
        guard let secret = ss_call_secret_struct_at(call, j, &path), let path else {
            throw SecureStoreError(.io, "The Secret Service returned a secret this session cannot decode.")
        }
        defer { ss_variant_unref(secret) }
        guard let owner = ss_secret_session(secret), String(cString: owner) == session else {
            throw SecureStoreError(.io, "The Secret Service returned a secret encoded for another session.")
        }
        var iv: UnsafeRawPointer? = nil
        var ivLength = 0
        var value: UnsafeRawPointer? = nil
        var valueLength = 0
        let ivField = ss_secret_bytes(secret, 1, &iv, &ivLength)
        let valueField = ss_secret_bytes(secret, 2, &value, &valueLength)
        defer { ss_variant_unref(ivField); ss_variant_unref(valueField) }
        let plain = try transfer.decrypt(iv: UnsafeRawBufferPointer(start: iv, count: ivLength),
                                         ciphertext: UnsafeRawBufferPointer(start: value, count: valueLength))
        return (String(cString: path), plain)
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

// MARK: libsecret, loaded at first use

/// libsecret (with the GLib, GObject and GIO it depends on), opened when a connection is first opened
/// (``LibSecret/require()``) rather than linked: a program that never uses the Secret Service never maps
/// them. A missing libsecret is the backend's `notAvailable` error. shim.h calls every GLib and libsecret
/// function through `securestore_glib()` (CSecret/glib-subset.h); the three functions below have libsecret's
/// and GObject's names and types, so the calls in this file read as plain calls.
enum LibSecret {
    /// The library file opened, and the Debian package that installs it.
    static let soname = "libsecret-1.so.0"
    static let debianPackage = "libsecret-1-0"

    private static let loaded = load(soname: soname)

    /// Opens `soname` and looks up every function shim.h and this file call, in it or the libraries it depends on (tests pass a missing name).
    static func load(soname: String) -> LoadedFunctions<ss_glib> {
        LoadedFunctions(soname: soname, for: "secret-service", debianPackage: debianPackage, count: ss_glib_count(),
                        name: { String(cString: ss_glib_name($0)) })
    }

    /// Loads the library once; its `notAvailable` error (every time) when it cannot be loaded.
    static func require() throws(SecureStoreError) {
        try loaded.require()
    }

    /// The looked-up functions; only reached after ``require()`` succeeded.
    fileprivate static var functions: UnsafePointer<ss_glib> { loaded.functions }
}

/// The table shim.h calls through (declared in CSecret/glib-subset.h).
@_cdecl("securestore_glib")
func secureStoreGLib() -> UnsafePointer<ss_glib> { LibSecret.functions }

private func secret_service_create_item_dbus_path_sync(
    _ self: UnsafeMutablePointer<SecretService>!, _ collection_path: UnsafePointer<gchar>!, _ properties: OpaquePointer!,
    _ value: OpaquePointer!, _ flags: SecretItemCreateFlags, _ cancellable: UnsafeMutablePointer<GCancellable>!,
    _ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>!) -> UnsafeMutablePointer<gchar>!
{
    LibSecret.functions.pointee.secret_service_create_item_dbus_path_sync(self, collection_path, properties, value, flags,
                                                                          cancellable, error)
}

@discardableResult
private func g_object_ref(_ object: gpointer!) -> gpointer! { LibSecret.functions.pointee.g_object_ref(object) }
