/// What a backend promises about its transactions, declared in code so that callers (`migrate`, `import`,
/// the conformance suite, `securestore backends`) can read it instead of assuming the strongest contract.
///
/// Every backend declares one (``StorageBackend/guarantees``); a store exposes its backend's through
/// ``SecureStore/guarantees``.
public struct StorageGuarantees: Sendable, Hashable, CustomStringConvertible {
    /// How transactions are kept apart from those of other processes (or machines) sharing the storage.
    public enum Isolation: String, Sendable, Hashable {
        /// The storage cannot be reached from there (a process's memory from another process).
        case notShared = "not shared"
        /// Writers wait for each other (so uniqueness holds), but a reader may see a writing transaction's
        /// changes half applied, and programs outside this package are not held back.
        case writersSerialized = "writers serialized"
        /// Every transaction sees and leaves a consistent state (serializable writers, snapshot readers).
        case full
    }

    /// Where insertion order (`find`'s order, kept by `replace`) comes from.
    public enum InsertionOrder: String, Sendable, Hashable {
        /// A counter in this process's memory (the storage lives and dies with the process).
        case processCounter = "process counter"
        /// A sequence kept by the storage itself (an auto-increment key), shared by every writer.
        case storageSequence = "storage sequence"
        /// A sequence number each writer takes as the last one plus one while holding the writers' lock.
        case lockedCounter = "locked counter"
    }

    /// All of a writing transaction's changes happen or none do, also when the storage fails midway. When
    /// false, a failure midway is undone best effort (see the backend's documentation for what can remain).
    public var atomicWrites: Bool
    /// Isolation from other processes of this machine.
    public var acrossProcesses: Isolation
    /// Isolation from processes on other machines.
    public var acrossMachines: Isolation
    /// A write that returned survives a crash of this process and of the machine.
    public var durableOnReturn: Bool
    public var insertionOrder: InsertionOrder

    public init(atomicWrites: Bool, acrossProcesses: Isolation, acrossMachines: Isolation, durableOnReturn: Bool,
                insertionOrder: InsertionOrder) {
        self.atomicWrites = atomicWrites
        self.acrossProcesses = acrossProcesses
        self.acrossMachines = acrossMachines
        self.durableOnReturn = durableOnReturn
        self.insertionOrder = insertionOrder
    }

    /// One line: `atomic writes, processes: full, machines: not shared, durable, order: storage sequence`.
    public var description: String {
        [atomicWrites ? "atomic writes" : "best-effort rollback",
         "processes: \(acrossProcesses.rawValue)",
         "machines: \(acrossMachines.rawValue)",
         durableOnReturn ? "durable on return" : "not durable on return",
         "order: \(insertionOrder.rawValue)"].joined(separator: ", ")
    }

    /// What a copy of many records into this storage (`import`, `migrate`) can promise, in one sentence.
    public var transferPromise: String {
        atomicWrites
            ? "all items are copied or none are"
            : "items are copied one by one; on a failure midway the copies made so far are removed again, best "
              + "effort, so some may remain"
    }
}

extension Keychain {
    /// The guarantees of this store's backend.
    public var guarantees: StorageGuarantees { Backend.guarantees }
}
