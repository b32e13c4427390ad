/// Moving whole records between stores (export, import, migrate) with everything kept: attributes, dates,
/// persistent references and insertion order.
public protocol RecordTransfer: SecureStore {
    /// Every record of the store, in insertion order.
    func exportRecords() throws(SecureStoreError) -> [ItemRecord]
    /// Adds `records` in one transaction: all or nothing where ``SecureStore/guarantees`` has
    /// ``StorageGuarantees/atomicWrites``; elsewhere a failure midway is undone best effort
    /// (``StorageGuarantees/transferPromise`` says it in words). A record the store already holds exactly (same
    /// reference, class, attributes and secret: an earlier import of the same records that was interrupted,
    /// on a store that could not undo it) is recognised and left as it is, so running an import again
    /// finishes the job.
    /// - Returns: how many records were added (the rest were already there).
    /// - Throws: `duplicateItem` if a record's uniqueness key or persistent reference is taken by another item
    ///   (or taken twice among `records`); `missingEntitlement` for an access group this store was not given.
    @discardableResult
    func importRecords(_ records: [ItemRecord]) throws(SecureStoreError) -> Int
}

extension Keychain: RecordTransfer {
    public func exportRecords() throws(SecureStoreError) -> [ItemRecord] {
        try backend.read { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            try txn.find(RecordFilter())
        }
    }

    @discardableResult
    public func importRecords(_ records: [ItemRecord]) throws(SecureStoreError) -> Int {
        var keys = Set<UniqueKey>()
        var refs = Set<PersistentRef>()
        for record in records {
            guard let group = record[.accessGroup]?.text, configuration.accessGroups.contains(group) else {
                throw SecureStoreError(.missingEntitlement,
                    "An item belongs to access group \(record[.accessGroup].map { "\($0)" } ?? "none"), "
                    + "which this store was not given; configure the target store with it.", parameter: "agrp")
            }
            guard keys.insert(record.uniqueKey).inserted, refs.insert(record.persistentRef).inserted else {
                throw SecureStoreError(.duplicateItem, "Two items to import have the same uniqueness key or reference.")
            }
        }
        return try backend.write { (txn: inout Backend.Transaction) throws(SecureStoreError) in
            let byRef = Dictionary(records.map { ($0.persistentRef, $0) }, uniquingKeysWith: { a, _ in a })
            var present = Set<PersistentRef>()
            for clash in try txn.find(RecordFilter(uniqueKeys: Array(keys))) where keys.contains(clash.uniqueKey) {
                if byRef[clash.persistentRef] == clash {   // this very record, stored by an earlier import
                    present.insert(clash.persistentRef)
                    continue
                }
                throw SecureStoreError(.duplicateItem,
                    "The target already has \(clash.itemClass.withArticle) with the same uniqueness key as an item to import; "
                    + "nothing was imported.")
            }
            for record in records where !present.contains(record.persistentRef) {
                if try !txn.find(RecordFilter(persistentRef: record.persistentRef)).isEmpty {
                    throw SecureStoreError(.duplicateItem, "The target already holds an item to import; nothing was imported.")
                }
                try txn.insert(record)
            }
            return records.count - present.count
        }
    }
}
