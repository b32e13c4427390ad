public import SecureStoreCore
import Foundation

/// Stores records as items of one Secret Service collection (`MAPPING.md`).
///
/// Three layers, one file each: this backend (the connection slot, the reconnect-once rule, the writer lock
/// and insertion sequence), ``SecretServiceTransaction`` (filters to searches, records to items, the undo
/// log) and `Connection` (the only caller of libsecret and GDBus).
///
/// One connection (with an open transfer session) per backend, reused by every call; it is dropped after a
/// D-Bus failure and reopened by the next transaction. Transactions of one backend are serialized by a mutex.
/// Every D-Bus wait is bounded by ``callTimeoutMilliseconds``.
public final class SecretServiceBackend: StorageBackend {
    /// The bound on every D-Bus call.
    public static let callTimeoutMilliseconds: Int32 = 5000

    public let collection: String
    public let namespace: String
    private let state: Locked<Connection?>
    private let sequence: InsertionSequence
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
        sequence = InsertionSequence(lock: writerLock)
        let connection = try Connection.open(collection: collection, activate: true)
        state = Locked(connection)
    }

    public var backendDescription: String { "secret-service collection \(collection) namespace \(namespace)" }

    /// A call waits for the daemon: each D-Bus round trip is bounded by ``callTimeoutMilliseconds`` (independent
    /// calls of one step are sent together); a writer also waits for the machine's writer lock of its namespace.
    public var blocking: Blocking {
        .upTo(max(.milliseconds(Int(Self.callTimeoutMilliseconds)), WriterLock.wait),
              waitingFor: "the Secret Service daemon over D-Bus (each round trip up to \(Self.callTimeoutMilliseconds) ms; "
              + "a lookup makes a few, update, delete and clear a few per batch of items) and, for a writer, another "
              + "process's writer lock of the namespace (up to \(WriterLock.wait))")
    }

    /// One: every transaction of this backend runs on its one connection under a mutex, so threads on the
    /// synchronous API run one at a time too, and the async API gives this store one thread. (Several
    /// connections would let readers run at once; the daemon itself answers one message at a time.)
    public var concurrency: Int { 1 }

    /// The Secret Service has no transactions: a failure midway is undone best effort; writers of this
    /// package are serialized by the writer lock, readers are not isolated; durability is the daemon's.
    public static let guarantees = StorageGuarantees(atomicWrites: false, acrossProcesses: .writersSerialized,
                                                     acrossMachines: .notShared, durableOnReturn: false,
                                                     insertionOrder: .lockedCounter)

    public func withTransaction<T>(writing: Bool, _ body: (inout SecretServiceTransaction) throws(SecureStoreError) -> T)
        throws(SecureStoreError) -> T
    {
        try state.withLock { (slot: inout Connection?) throws(SecureStoreError) -> T in
            guard writing else { return try run(&slot, sequence: nil, body) }
            // Writers of this namespace in other processes of this machine wait for this one (uniqueness, and
            // the insertion sequence).
            return try writerLock.withLock { () throws(SecureStoreError) -> T in try run(&slot, sequence: sequence, body) }
        }
    }

    /// One transaction on the connection in `slot` (opened when there is none); once more on a new connection
    /// when a reused one turned out stale before anything was written (``Reconnect``).
    private func run<T>(_ slot: inout Connection?, sequence: InsertionSequence?,
                        _ body: (inout SecretServiceTransaction) throws(SecureStoreError) -> T) throws(SecureStoreError) -> T
    {
        try Reconnect.once { (attempt: inout Reconnect.Attempt) throws(SecureStoreError) -> T in
            let connection: Connection
            if let existing = slot {
                connection = existing
                attempt.reusedConnection = true
            } else {
                connection = try Connection.open(collection: collection, activate: false)
                slot = connection
            }
            var txn = SecretServiceTransaction(connection: connection, namespace: namespace, sequence: sequence)
            do throws(SecureStoreError) {
                return try body(&txn)
            } catch {
                // A daemon that did not answer gets no second wait; a transaction that wrote is not repeated.
                if txn.wrote || connection.timedOut { attempt.retryable = false }
                let left = txn.rollBack()
                if connection.broken { slot = nil }   // reconnect on the retry or the next transaction
                guard left > 0, error.code != .outcomeUnknown else { throw error }
                // Changes made before the failure that could not be undone: the call was done in part.
                throw SecureStoreError(.outcomeUnknown, error.message + " This call had already made \(left) change"
                    + (left == 1 ? "" : "s") + " that could not be undone, so \(left == 1 ? "it" : "they") may remain. "
                    + "Run it again once the keyring answers: an import or migrate recognises the items it already stored.")
            }
        }
    }
}

/// Insertion sequence numbers: the last number handed out in this namespace plus one, taken while holding
/// the namespace's writer lock, so two writers (threads or processes of this machine) never get the same
/// number and numbers never go backwards, whatever the clock does.
///
/// The last number lives in the writer lock file. When the file has none (first use, or the runtime folder
/// was emptied by a reboot) or holds anything but a number, it is recovered as the largest sequence of the
/// namespace's items (one search and one attribute read per item, once).
final class InsertionSequence: @unchecked Sendable {   // used only under the backend's mutex and writer lock
    private let lock: WriterLock

    init(lock: WriterLock) { self.lock = lock }

    /// The next number, recorded in the lock file before it is used (a crash after creating the item can
    /// then not hand the number out again).
    func next(connection: Connection, namespace: String) throws(SecureStoreError) -> UInt64 {
        let last: UInt64
        if let stored = lock.storedCounter() {
            last = stored
        } else {
            last = try largest(connection: connection, namespace: namespace)
        }
        guard last < UInt64.max else {
            throw SecureStoreError(.io, "The insertion sequence of this Secret Service namespace is exhausted.")
        }
        try lock.storeCounter(last + 1)
        return last + 1
    }

    /// The largest sequence of the namespace's items (0 when it has none).
    private func largest(connection: Connection, namespace: String) throws(SecureStoreError) -> UInt64 {
        let paths = try connection.search([Mapping.scope(namespace: namespace)], checkingLock: false, session: false)
        var largest: UInt64 = 0
        for (path, item) in zip(paths, try connection.load(paths, secrets: false)) {
            largest = max(largest, try SecretServiceTransaction.decode(item.attributes, Data(), path: path).sequence)
        }
        return largest
    }
}
