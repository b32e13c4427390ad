public import SecureStoreCore
import Foundation

/// A value bound to a statement or read from a row of a sealed table.
package enum TableValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case blob([UInt8])
    case text(String)
}

/// What a SQL backend supplies to the sealed-table layer: it runs one statement with parameters, inside the
/// transaction the backend opened, and gives back the rows (the layer never begins or ends a transaction).
package protocol SealedTableExecutor {
    /// The rows `sql` returns.
    func rows(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) -> [[TableValue]]
    /// Runs `sql`; returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) -> Int
    /// Runs a write whose answer nothing waits for (an insert, a delete by reference). An executor may hold
    /// it and send it with its next statement or with COMMIT, in one round trip; its failure then surfaces
    /// there, and the transaction rolls back as for any failure.
    func write(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError)
    /// Runs a write that must change exactly one row (a replace of a row this transaction found, by its id or
    /// reference); any other count fails with ``SealedTable/replacedRowVanished`` and nothing of the
    /// transaction is committed. An executor may hold it like ``write(_:_:)`` when the statement it sends
    /// fails by itself on another count, before anything commits.
    func writeOne(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError)
    /// Calls `body` with each `id, cls, ref, ukey, blob, secret, mdat` row `sql` returns, in order.
    func forEachRecordRow(_ sql: String, _ parameters: [TableValue],
                          _ body: (RowColumns) throws(SecureStoreError) -> Void) throws(SecureStoreError)
}

extension SealedTableExecutor {
    package func write(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) {
        try run(sql, parameters)
    }

    /// Runs it now and checks the count.
    package func writeOne(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) {
        guard try run(sql, parameters) == 1 else { throw SealedTable.replacedRowVanished }
    }

    /// Calls `body` with each `id, cls, ref, ukey, blob, secret, mdat` row of `sql`, in order. This default goes
    /// through ``rows(_:_:)``; an executor that can lend its driver's column memory (SQLite) does so instead,
    /// so a lookup copies no column and builds no row arrays.
    package func forEachRecordRow(_ sql: String, _ parameters: [TableValue],
                                  _ body: (RowColumns) throws(SecureStoreError) -> Void) throws(SecureStoreError) {
        for row in try rows(sql, parameters) { try RowColumns.with(row, body) }
    }
}

/// The columns `id, cls, ref, ukey, blob, secret, mdat` of one stored row, read in place: the buffers are the
/// driver's (or an array's) memory and are valid only during the call that lends them.
package struct RowColumns {
    package let id: Int64
    package let cls: Int64
    package let ref: UnsafeRawBufferPointer
    package let ukey: UnsafeRawBufferPointer
    package let blob: UnsafeRawBufferPointer
    /// nil: the column is NULL (a format 3 row without a secret, or a row of an older schema).
    package let secret: UnsafeRawBufferPointer?
    /// The sealed modification date; nil (NULL) for a row of format 3 or older.
    package let mdat: UnsafeRawBufferPointer?

    package init(id: Int64, cls: Int64, ref: UnsafeRawBufferPointer, ukey: UnsafeRawBufferPointer,
                 blob: UnsafeRawBufferPointer, secret: UnsafeRawBufferPointer?, mdat: UnsafeRawBufferPointer?) {
        (self.id, self.cls, self.ref, self.ukey, self.blob, self.secret, self.mdat) = (id, cls, ref, ukey, blob, secret, mdat)
    }

    /// Lends the columns of a row given as values; `decode` when it does not have the shape of a stored row.
    package static func with(_ row: [TableValue], _ body: (RowColumns) throws(SecureStoreError) -> Void)
        throws(SecureStoreError) {
        guard row.count == 7, case .integer(let id) = row[0], case .integer(let cls) = row[1],
              case .blob(let ref) = row[2], case .blob(let ukey) = row[3], case .blob(let blob) = row[4]
        else { throw damagedRow }
        func optional(_ value: TableValue) throws(SecureStoreError) -> [UInt8]? {
            switch value {
            case .null: return nil
            case .blob(let b): return b
            default: throw damagedSecret(id)
            }
        }
        let secret = try optional(row[5]), mdat = try optional(row[6])
        let outcome: Result<Void, SecureStoreError> = ref.withUnsafeBytes { ref in
            ukey.withUnsafeBytes { ukey in
                blob.withUnsafeBytes { blob in
                    func call(_ secret: UnsafeRawBufferPointer?, _ mdat: UnsafeRawBufferPointer?) -> Result<Void, SecureStoreError> {
                        Result { () throws(SecureStoreError) in
                            try body(RowColumns(id: id, cls: cls, ref: ref, ukey: ukey, blob: blob, secret: secret, mdat: mdat))
                        }
                    }
                    switch (secret, mdat) {
                    case (nil, nil): return call(nil, nil)
                    case (let s?, nil): return s.withUnsafeBytes { call($0, nil) }
                    case (nil, let m?): return m.withUnsafeBytes { call(nil, $0) }
                    case (let s?, let m?): return s.withUnsafeBytes { s in m.withUnsafeBytes { call(s, $0) } }
                    }
                }
            }
        }
        try outcome.get()
    }

    package static var damagedRow: SecureStoreError {
        SecureStoreError(.decode, "A stored item has a damaged row: the store was altered or corrupted.")
    }

    package static func damagedSecret(_ id: Int64) -> SecureStoreError {
        SecureStoreError(.decode, "Stored item #\(id) has a damaged secret: the store was altered.")
    }
}

/// The columns a sealed table has, by schema: what a layout reads and writes.
package enum SealedColumns: Sendable {
    /// Schemas 1 and 2 (SQLite): the secret inside the record; read only.
    case recordOnly
    /// Schema 3 (SQLite; PostgreSQL 1 to 4): the `secret` column; read only.
    case withSecret
    /// Schema 4 (SQLite; PostgreSQL 5): `secret` and `mdat`, rows of record format 4 (older rows still read).
    case current
}

/// How one SQL database lays out the sealed records of one store: its table names, its placeholder style and
/// an optional scope column (PostgreSQL's numeric namespace id `ns`, bound as the first parameter of every
/// statement). Every statement the layer runs is built here once.
///
/// Table shape (see Backends/SQLite/FORMAT.md): `items(id, cls, ref, ukey, svc, acct, blob, secret, mdat)` with
/// `id` growing with insertion, and `meta(k, v)` holding the key check (`check`) and passphrase parameters
/// (`kdf`). A table of an older schema has no `mdat` (or no `secret`) column: such a layout reads it.
package final class SealedTableLayout: Sendable {
    /// Every statement a find may run returns its rows `ORDER BY id`, and a find made of several statements
    /// sorts their rows by `id` once: that is the only rule for insertion order.
    package let selectAll: String
    let selectByRef: String
    let selectByClass: String
    let selectByClassService: String
    let selectByClassAccount: String
    let selectByClassServiceAccount: String
    let selectByKeyPrefix: String
    private let selectByFewKeys: [String]
    /// A data lookup by one unique key index (the parameter after the scope): only what opens a format 4 row's
    /// secret part, `id, cls, ref`, the parameter itself for `ukey` (the row's, by the `WHERE`) and the secret
    /// part, with an empty record and no date. Nil for a table of an older schema.
    let selectSecretByKey: String?
    package let insert: String
    /// Every column a replace may change.
    let updateAll: String
    /// A replace that keeps class and indexes, of the row with the given id (found in this transaction): the
    /// modification date, and the record and secret parts in the index's set (``SealedParts/rawValue``: 0 none,
    /// 1 record, 2 secret, 3 both).
    let updateParts: [String]
    let deleteByRef: String
    /// A remove of a row found in this transaction, by its id (no index of the reference to search).
    let deleteById: String
    let deleteByClass: String
    let deleteEverything: String
    let updateRow: String
    package let selectCheck: String
    let selectMeta: String
    let deleteKeyMeta: String
    let insertMeta: String
    let anyItem: String
    let scope: TableValue?
    let numbered: Bool
    package let columns: SealedColumns
    /// Whether every row keeps the room of a sealed modification date (``RecordSealer/noDateApart`` where the
    /// date is inside the record, never NULL), so that a change of secret alone rewrites a row at its size.
    package let reservesDate: Bool

    /// - Parameters:
    ///   - scope: the column and value every row of this store carries (`("ns", .integer(3))`), nil for a
    ///     table that holds one store.
    ///   - numbered: `$1`-style placeholders (PostgreSQL) instead of `?` (SQLite).
    ///   - columns: the table's columns; only a ``SealedColumns/current`` layout writes.
    ///   - reservesDate: rows keep the room of a sealed date (``reservesDate``).
    package init(items: String, meta: String, scope: (column: String, value: TableValue)?, numbered: Bool,
                 columns: SealedColumns = .current, reservesDate: Bool = false) {
        self.scope = scope.map(\.value)
        self.numbered = numbered
        self.columns = columns
        self.reservesDate = reservesDate
        let first = scope == nil ? 1 : 2
        func p(_ n: Int) -> String { numbered ? "$\(n + first - 1)" : "?" }
        // The WHERE clause of a statement whose own conditions are `conditions`.
        func whereClause(_ conditions: [String]) -> String {
            let all = (scope.map { ["\($0.column) = \(numbered ? "$1" : "?")"] } ?? []) + conditions
            return all.isEmpty ? "" : " WHERE " + all.joined(separator: " AND ")
        }
        let secret = columns == .recordOnly ? "NULL" : "secret", mdat = columns == .current ? "mdat" : "NULL"
        let selected = "SELECT id, cls, ref, ukey, blob, \(secret), \(mdat) FROM \(items)"
        selectAll = selected + whereClause([]) + " ORDER BY id"
        selectByRef = selected + whereClause(["ref = \(p(1))"]) + " ORDER BY id"
        selectByClass = selected + whereClause(["cls = \(p(1))"]) + " ORDER BY id"
        selectByClassService = selected + whereClause(["svc = \(p(1))", "cls = \(p(2))"]) + " ORDER BY id"
        selectByClassAccount = selected + whereClause(["acct = \(p(1))", "cls = \(p(2))"]) + " ORDER BY id"
        selectByClassServiceAccount = selected + whereClause(["svc = \(p(1))", "acct = \(p(2))", "cls = \(p(3))"])
            + " ORDER BY id"
        selectByKeyPrefix = selected + whereClause(["ukey IN ("])
        selectByFewKeys = (1...8).map { [selectByKeyPrefix] in
            Self.keysStatement(prefix: selectByKeyPrefix, count: $0, numbered: numbered, first: first)
        }
        // SQLite reads `?NNN` as the same parameter each time; PostgreSQL needs the parameter's and the empty
        // value's types.
        let key = numbered ? "$\(first)::bytea" : "?\(first)", noRecord = numbered ? "''::bytea" : "X''"
        selectSecretByKey = columns == .current
            ? "SELECT id, cls, ref, \(key), \(noRecord), secret, NULL FROM \(items)" + whereClause(["ukey = \(key)"])
            : nil
        let scopeColumn = scope.map { "\($0.column), " } ?? ""
        let scopeParameter = scope == nil ? "" : (numbered ? "$1, " : "?, ")
        insert = "INSERT INTO \(items)(\(scopeColumn)cls, ref, ukey, svc, acct, blob, secret, mdat) VALUES (\(scopeParameter)"
            + (1...8).map(p).joined(separator: ", ") + ")"
        updateAll = "UPDATE \(items) SET cls = \(p(1)), ukey = \(p(2)), svc = \(p(3)), acct = \(p(4)), blob = \(p(5)), "
            + "secret = \(p(6)), mdat = \(p(7))" + whereClause(["ref = \(p(8))"])
        updateParts = (0...3).map { (parts: Int) -> String in
            var set: [String] = []
            if parts & 1 != 0 { set.append("blob = \(p(set.count + 1))") }
            if parts & 2 != 0 { set.append("secret = \(p(set.count + 1))") }
            set.append("mdat = \(p(set.count + 1))")
            return "UPDATE \(items) SET " + set.joined(separator: ", ") + whereClause(["id = \(p(set.count + 1))"])
        }
        deleteByRef = "DELETE FROM \(items)" + whereClause(["ref = \(p(1))"])
        deleteById = "DELETE FROM \(items)" + whereClause(["id = \(p(1))"])
        deleteByClass = "DELETE FROM \(items)" + whereClause(["cls = \(p(1))"])
        deleteEverything = "DELETE FROM \(items)" + whereClause([])
        updateRow = "UPDATE \(items) SET ref = \(p(1)), ukey = \(p(2)), svc = \(p(3)), acct = \(p(4)), blob = \(p(5)), "
            + "secret = \(p(6)), mdat = \(p(7))" + whereClause(["id = \(p(8))"])
        selectCheck = "SELECT v FROM \(meta)" + whereClause(["k = 'check'"])
        selectMeta = "SELECT k, v FROM \(meta)" + whereClause(["k IN ('kdf', 'check')"])
        deleteKeyMeta = "DELETE FROM \(meta)" + whereClause(["k IN ('kdf', 'check')"])
        insertMeta = "INSERT INTO \(meta)(\(scopeColumn)k, v) VALUES (\(scopeParameter)\(p(1)), \(p(2)))"
        anyItem = "SELECT 1 FROM \(items)" + whereClause([]) + " LIMIT 1"
    }

    /// The `mdat` value of a row whose date sealed apart is `mdat` (nil: the date is inside its record): NULL
    /// there, or ``RecordSealer/noDateApart`` in a table that ``reservesDate``.
    func dateValue(_ mdat: [UInt8]?) -> TableValue {
        if let mdat { return .blob(mdat) }
        return reservesDate ? .blob(RecordSealer.noDateApart) : .null
    }

    /// `parameters` after the scope value.
    func bind(_ parameters: [TableValue]) -> [TableValue] {
        guard let scope else { return parameters }
        return [scope] + parameters
    }

    /// A statement finding the rows whose unique key index is one of `count` values (built once for the
    /// usual counts: a lookup names one key per access group and synchronizable value).
    package func selectByKeys(_ count: Int) -> String {
        count >= 1 && count <= selectByFewKeys.count ? selectByFewKeys[count - 1] : Self.keysStatement(
            prefix: selectByKeyPrefix, count: count, numbered: numbered, first: scope == nil ? 1 : 2)
    }

    private static func keysStatement(prefix: String, count: Int, numbered: Bool, first: Int) -> String {
        prefix + (0..<count).map { numbered ? "$\($0 + first)" : "?" }.joined(separator: ", ") + ") ORDER BY id"
    }

    /// The most unique keys one statement binds (SQLite allows 32,766 parameters, PostgreSQL 65,535).
    static let keysPerStatement = 500

    // MARK: Schema version

    /// The one guard of a stored schema version: newer than `supported` is `notAvailable` (upgrade
    /// SecureStore), below 1 is `decode`. `place` names what holds the schema ("store", "database").
    package static func checkSchemaVersion(_ found: Int64, supported: Int64, place: String) throws(SecureStoreError) {
        guard found <= supported else {
            throw SecureStoreError(.notAvailable, "The \(place) was written by a newer SecureStore (schema \(found); "
                + "this one reads up to \(supported)). Upgrade SecureStore.")
        }
        guard found >= 1 else {
            throw SecureStoreError(.decode, "The \(place) has an unknown schema version \(found).")
        }
    }

    // MARK: Key check

    /// The stored key-check value (the key epoch), nil when there is none.
    package func storedCheck(_ executor: some SealedTableExecutor) throws(SecureStoreError) -> [UInt8]? {
        if case .blob(let v)? = try executor.rows(selectCheck, bind([])).first?.first { return v }
        return nil
    }

    /// The sealer of `key` for the store whose key check is in the table, and that check (the key epoch);
    /// nil when the table has no key check yet (a new store, or a namespace not used yet). The key file of an
    /// existing store is never created: a missing one is an error.
    ///
    /// - Throws: `authFailed` when `key` does not open the store.
    package func openKeyCheck(_ executor: some SealedTableExecutor, key: StoreKey, cost: PassphraseCost,
                              slot: KeyringSlot? = nil) throws(SecureStoreError) -> (sealer: RecordSealer, epoch: [UInt8])?
    {
        var kdf: [UInt8]? = nil
        var check: [UInt8]? = nil
        for row in try executor.rows(selectMeta, bind([])) {
            guard row.count == 2, case .text(let k) = row[0], case .blob(let v) = row[1] else { continue }
            if k == "kdf" { kdf = v } else if k == "check" { check = v }
        }
        guard let check else { return nil }
        let sealer = try RecordSealer.open(key, storedKDF: kdf, check: check, cost: cost, slot: slot,
                                           creatingKeyFile: false)
        return (sealer, check)
    }

    /// Makes the sealer of `key` for a new store (a new key file when the key names a missing one) and stores
    /// its key check and passphrase parameters. The caller holds whatever lock keeps a second creator out.
    ///
    /// - Throws: `decode` when the table already holds items of this store (with no key check: altered).
    package func createKeyCheck(_ executor: some SealedTableExecutor, key: StoreKey, cost: PassphraseCost,
                                what: String) throws(SecureStoreError) -> (sealer: RecordSealer, epoch: [UInt8])
    {
        guard try executor.rows(anyItem, bind([])).isEmpty else {
            throw SecureStoreError(.decode, "\(what) holds items but no key check: it was altered.")
        }
        let sealer = try RecordSealer.make(key, storedKDF: nil, cost: cost, creatingKeyFile: true)
        let check = sealer.makeCheck()
        try writeKeyCheck(executor, sealer: sealer, check: check)
        return (sealer, check)
    }

    /// Replaces the stored key check and passphrase parameters (a new store, or a rekey).
    func writeKeyCheck(_ executor: some SealedTableExecutor, sealer: RecordSealer, check: [UInt8])
        throws(SecureStoreError)
    {
        try executor.write(deleteKeyMeta, bind([]))
        if let kdf = sealer.kdfParameters { try executor.write(insertMeta, bind([.text("kdf"), .blob(kdf)])) }
        try executor.write(insertMeta, bind([.text("check"), .blob(check)]))
    }
}

/// The records of one store in a SQL table, inside one transaction the backend opened: the find plan, the
/// row decoding and the writes, the same for every SQL backend.
///
/// Not generic over the executor: the table is reached through ``SealedTransaction``'s existential, where a
/// generic table's methods run unspecialized and look up their type's metadata on every call (~1 k
/// instructions a lookup); an executor existential costs one indirect call per statement.
package struct SealedTable {
    package let layout: SealedTableLayout
    package let executor: any SealedTableExecutor
    package let sealer: RecordSealer
    /// The key-check value `sealer` belongs to (the key epoch).
    package let epoch: [UInt8]
    /// Whether the transaction already compared the stored key epoch with `epoch`. When not, a find that
    /// finds nothing, or a row the key cannot open, checks it: after a rekey by someone else the answer is
    /// `authFailed`, not "not found" or "damaged".
    package let epochChecked: Bool
    /// The records this transaction found, with their rows' ids and indexes, by reference, when the table
    /// keeps them (a writing transaction): a replace writes only the parts of a format 4 row that changed (a
    /// change of secret leaves the sealed record as it is, a change of attributes the sealed secret), to the
    /// row by its id, and compares its blind-index inputs with the found record's instead of writing the index
    /// columns again (SQLite rewrites the entry of every index whose column is in a `SET` list, even for the
    /// same value; PostgreSQL can then update the row without touching an index); a remove deletes it by id.
    private let found: FoundRecords?

    /// - Parameter writingOnlyChangedParts: remember the records `find` returns, and leave the parts that a
    ///   `replace` does not change as they are stored (a writing transaction).
    package init(layout: SealedTableLayout, executor: any SealedTableExecutor, sealer: RecordSealer, epoch: [UInt8],
                 epochChecked: Bool, writingOnlyChangedParts: Bool = false) {
        self.layout = layout
        self.executor = executor
        self.sealer = sealer
        self.epoch = epoch
        self.epochChecked = epochChecked
        found = writingOnlyChangedParts ? FoundRecords() : nil
    }

    /// What the table holds now for the references this transaction found (with or without their secrets),
    /// in format 4 rows, kept current by every replace that keeps a row's indexes (so a second replace of one
    /// item in a transaction compares with what the first one wrote). A row of an older format is not kept,
    /// nor one inserted or given other indexes in this transaction: its replace writes every part.
    private final class FoundRecords {
        /// A record as its row holds it; `secretKnown` false when it was read without its secret,
        /// `attributesKnown` false when by its reference alone (a replace then writes the row whole). `id` and
        /// `indexes` are the row's: its id, and its reference index followed by its unique-key index (both
        /// authenticated by the sealed record that opened), so a replace neither searches the row again by
        /// its reference index nor computes the two keyed hashes again.
        struct Known {
            let record: ItemRecord
            let secretKnown: Bool
            let attributesKnown: Bool
            let id: Int64
            let indexes: [UInt8]
            let refCount: Int

            init(record: ItemRecord, secretKnown: Bool, attributesKnown: Bool, row: RowColumns) {
                (self.record, self.secretKnown, self.attributesKnown, id, refCount) =
                    (record, secretKnown, attributesKnown, row.id, row.ref.count)
                let (ref, ukey) = (row.ref, row.ukey)
                indexes = [UInt8](unsafeUninitializedCapacity: ref.count + ukey.count) { buffer, count in
                    let raw = UnsafeMutableRawBufferPointer(buffer)
                    raw.copyMemory(from: ref)
                    UnsafeMutableRawBufferPointer(rebasing: raw[ref.count...]).copyMemory(from: ukey)
                    count = ref.count + ukey.count
                }
            }

            /// The same row holding `record` now.
            init(_ old: Known, now record: ItemRecord) {
                (self.record, secretKnown, attributesKnown, id, indexes, refCount) =
                    (record, true, !record.attributesOmitted, old.id, old.indexes, old.refCount)
            }

            /// Lends the row's reference and unique-key indexes.
            func withIndexes<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> R) -> R {
                indexes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<refCount]),
                                               UnsafeRawBufferPointer(rebasing: $0[refCount...])) }
            }
        }
        var byRef: [PersistentRef: Known] = [:]
        /// The unique key this transaction last searched for alone, and its blind index: an add searches for
        /// the key of the record it then inserts, and an update that changes an item's key searches for the new
        /// one before writing it; the row needs the same index (one keyed hash, 2.3k of a SQLite add's 113k
        /// instructions, not computed twice).
        var searchedKey: (key: UniqueKey, index: [UInt8])?

        /// Whether `data` is the secret `old` holds (compared in constant time for equal lengths); false when
        /// that secret was not read.
        static func sameSecret(_ old: Known, _ data: Data?) -> Bool {
            guard old.secretKnown else { return false }
            switch (old.record.data, data) {
            case (nil, nil): return true
            case (let a?, let b?): return a.count == b.count && Sodium.equal(a, b)
            default: return false
            }
        }

        /// Whether `new`'s row has the class and blind indexes `old`'s has: the inputs of each index are equal
        /// (class, unique key, service, account; an index is a keyed hash of its input, so equal inputs give
        /// equal indexes). A difference the indexes would not show (`nil` against a default value) only makes
        /// the update write every column.
        static func sameIndexes(_ old: ItemRecord, _ new: ItemRecord) -> Bool {
            old.itemClass == new.itemClass && old.uniqueKey == new.uniqueKey
                && old[.service] == new[.service]
                && old[.account] == new[.account]
        }
    }

    /// Fails with `authFailed` unless the stored key epoch is still `epoch`.
    package func requireSameEpoch() throws(SecureStoreError) {
        try RecordSealer.requireSameEpoch(stored: try layout.storedCheck(executor), opened: epoch)
    }

    // MARK: Find

    /// The statements that find the candidates of `filter`: by reference, else by unique keys (whose blind
    /// indexes are `keyIndexes` when the caller computed them), else by class with service and account,
    /// service, or account (with the service index of every row of a class that defines no service: the
    /// default's, so an internet password's account is found under it), else by class, else every record.
    package func plan(_ filter: RecordFilter, keyIndexes: [[UInt8]]? = nil) -> [(sql: String, parameters: [TableValue])] {
        let l = layout
        if let ref = filter.persistentRef {
            return [(l.selectByRef, l.bind([.blob(sealer.refIndex(ref))]))]
        }
        if let uniqueKeys = filter.uniqueKeys {
            let indexes = keyIndexes ?? Self.distinct(uniqueKeys).map(sealer.uniqueKeyIndex)
            if indexes.count == 1 { return [(l.selectByKeys(1), l.bind([.blob(indexes[0])]))] }
            return stride(from: 0, to: indexes.count, by: SealedTableLayout.keysPerStatement).map { start in
                let chunk = indexes[start..<min(start + SealedTableLayout.keysPerStatement, indexes.count)]
                return (l.selectByKeys(chunk.count), l.bind(chunk.map { .blob($0) }))
            }
        }
        if let cls = filter.itemClass {
            let number = TableValue.integer(RecordSealer.classNumber(cls))
            let service = filter.equalities[.service]
            if let account = filter.equalities[.account] {
                let accountIndex = TableValue.blob(sealer.attributeIndex(.account, account))
                // A class without a service (internet passwords): its rows all hold the default's index.
                guard let service = service ?? (cls.defines(.service) ? nil : .string("")) else {
                    return [(l.selectByClassAccount, l.bind([accountIndex, number]))]
                }
                return [(l.selectByClassServiceAccount,
                         l.bind([.blob(sealer.attributeIndex(.service, service)), accountIndex, number]))]
            }
            if let service {
                return [(l.selectByClassService, l.bind([.blob(sealer.attributeIndex(.service, service)), number]))]
            }
            return [(l.selectByClass, l.bind([number]))]
        }
        return [(l.selectAll, l.bind([]))]
    }

    /// `keys` without repeats, in their order.
    private static func distinct(_ keys: [UniqueKey]) -> [UniqueKey] {
        guard keys.count > 1 else { return keys }
        var seen = Set<UniqueKey>()
        return keys.filter { seen.insert($0).inserted }
    }

    /// How `filter`'s rows are read, and the plan that finds them: a find the key decides that reads no
    /// attributes opens only the secret parts of the rows found by their unique key index (each bound to that
    /// index) when it reads data, else only their record parts' class and reference (bound to it as well), and
    /// knows which of the filter's keys each row has by the index.
    private func readPlan(_ filter: RecordFilter) -> (statements: [(sql: String, parameters: [TableValue])], read: Read) {
        let whole: Read = filter.needsData ? .whole : .withoutData
        guard filter.persistentRef == nil, let keys = filter.uniqueKeys, !keys.isEmpty else { return (plan(filter), whole) }
        let distinct = Self.distinct(keys)
        let indexes = distinct.map(sealer.uniqueKeyIndex)
        if distinct.count == 1, let found { found.searchedKey = (distinct[0], indexes[0]) }
        let statements = plan(filter, keyIndexes: indexes)
        guard !filter.needsAttributes else { return (statements, whole) }
        return (statements, .byKey(keys: distinct, indexes: indexes, data: filter.needsData, date: filter.needsModificationDate))
    }

    /// The statements a find of `filter` runs first (a data lookup of one key: the narrow one), for tests of
    /// their query plans.
    package func readStatements(_ filter: RecordFilter) -> [(sql: String, parameters: [TableValue])] {
        if let lookup = secretPartLookup(filter) {
            return [(lookup.sql, layout.bind([.blob(sealer.uniqueKeyIndex(lookup.key))]))]
        }
        return readPlan(filter).statements
    }

    /// The key and statement of a data lookup of one key that returns no attributes, read by
    /// ``findSecretPart(_:)``; nil for every other find, and in a table of an older schema.
    private func secretPartLookup(_ filter: RecordFilter) -> (key: UniqueKey, sql: String)? {
        guard !filter.needsAttributes, filter.needsData, filter.persistentRef == nil, let sql = layout.selectSecretByKey,
              let keys = filter.uniqueKeys, keys.count == 1 else { return nil }
        return (keys[0], sql)
    }

    /// How the rows of one find are opened.
    private enum Read {
        case whole, withoutData
        /// Secret parts only (`data`), or the class and reference of record parts only (and their modification
        /// dates: `date`); the key of a row is the one whose index it has.
        case byKey(keys: [UniqueKey], indexes: [[UInt8]], data: Bool, date: Bool)
    }

    /// The records `filter` may match (a superset), in insertion order.
    package func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        if let lookup = secretPartLookup(filter) { return try findSecretPart(lookup) }
        let (statements, read) = readPlan(filter)
        guard statements.count == 1 else { return try rows(statements, read).map(\.record) }
        return try find(statements[0], read)
    }

    /// ``find(_:)`` when its plan is one statement (every find but one of more than 500 keys), else `nil`
    /// without running any: for a caller that reads outside a transaction, where one statement is its own
    /// consistent snapshot and several would not be.
    package func findInOneStatement(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord]? {
        if let lookup = secretPartLookup(filter) { return try findSecretPart(lookup) }
        let (statements, read) = readPlan(filter)
        guard statements.count == 1 else { return nil }
        return try find(statements[0], read)
    }

    /// The rows of one statement, in id order already.
    private func find(_ statement: (sql: String, parameters: [TableValue]), _ read: Read) throws(SecureStoreError)
        -> [ItemRecord]
    {
        var found: [ItemRecord] = []
        try executor.forEachRecordRow(statement.sql, statement.parameters) { (row) throws(SecureStoreError) in
            let opened = try decode(row, read)
            found.append(opened.record)
            note(opened, read, row)
        }
        if found.isEmpty, !epochChecked { try requireSameEpoch() }
        return found
    }

    /// A data lookup of one key: the secret part of the row its index finds (the unique index: at most one),
    /// without the record and date columns, which a key-decided lookup does not open; a row whose secret part
    /// does not open alone (format 3 or older, or damaged) is read again whole, by the statement of a lookup of
    /// several keys, and opened as ``RowRead/dataOnly(_:)`` does. (Outside a transaction that second statement is
    /// a snapshot of its own: its answer is the row as it is then.)
    private func findSecretPart(_ lookup: (key: UniqueKey, sql: String)) throws(SecureStoreError) -> [ItemRecord] {
        let key = lookup.key, index = sealer.uniqueKeyIndex(key)
        var found: ItemRecord? = nil, unopened = false
        try executor.forEachRecordRow(lookup.sql, layout.bind([.blob(index)])) { (row) throws(SecureStoreError) in
            guard found == nil, !unopened else { throw RowColumns.damagedRow }   // a unique index finds one row
            if let record = sealer.openSecretPart(row, key: key) { found = record } else { unopened = true }
        }
        if let found { return [found] }
        if unopened {
            let whole = (layout.selectByKeys(1), layout.bind([.blob(index)]))
            return try find(whole, .byKey(keys: [key], indexes: [index], data: true, date: false))
        }
        if !epochChecked { try requireSameEpoch() }
        return []
    }

    /// Remembers a record found in a format 4 row: with its attributes, a replace compares with it; by its
    /// reference alone, a remove deletes its row by id.
    private func note(_ opened: (record: ItemRecord, current: Bool), _ read: Read, _ row: RowColumns) {
        guard let known = self.found else { return }
        let record = opened.record
        let secretKnown: Bool, attributesKnown: Bool
        switch read {
        case .whole: (secretKnown, attributesKnown) = (true, true)
        case .withoutData: (secretKnown, attributesKnown) = (false, true)
        case .byKey(_, _, let data, _):
            guard !data else { return }
            (secretKnown, attributesKnown) = (false, false)
        }
        if opened.current {
            known.byRef[record.persistentRef] = FoundRecords.Known(record: record, secretKnown: secretKnown,
                                                                   attributesKnown: attributesKnown, row: row)
        } else {
            known.byRef.removeValue(forKey: record.persistentRef)
        }
    }

    /// Every record with its row id, in insertion order (for a rekey).
    package func all() throws(SecureStoreError) -> [(id: Int64, record: ItemRecord)] {
        try rows(plan(RecordFilter()), .whole)
    }

    private func rows(_ statements: [(sql: String, parameters: [TableValue])], _ read: Read) throws(SecureStoreError)
        -> [(id: Int64, record: ItemRecord)]
    {
        var found: [(id: Int64, record: ItemRecord)] = []
        for statement in statements {
            try executor.forEachRecordRow(statement.sql, statement.parameters) { (row) throws(SecureStoreError) in
                let opened = try decode(row, read)
                found.append((row.id, opened.record))
                note(opened, read, row)
            }
        }
        if found.isEmpty, !epochChecked { try requireSameEpoch() }
        // Each statement returns its rows by id; several statements' rows are put in id order once.
        if statements.count > 1 { found.sort { $0.id < $1.id } }
        return found
    }

    /// Opens one row as `read` asks; whether it is of format 4.
    private func decode(_ row: RowColumns, _ read: Read) throws(SecureStoreError) -> (record: ItemRecord, current: Bool) {
        do throws(SecureStoreError) {
            switch read {
            case .whole: return try sealer.openRow(row, .whole)
            case .withoutData: return try sealer.openRow(row, .withoutData)
            case .byKey(let keys, let indexes, let data, let date):
                // The row was found by one of these indexes; its secret and record parts are bound to its own.
                guard let at = indexes.firstIndex(where: { $0.withUnsafeBytes { $0.elementsEqual(row.ukey) } }) else {
                    throw RowColumns.damagedRow
                }
                let key = keys[at]
                return try sealer.openRow(row, data ? .dataOnly(key) : date ? .referenceAndDate(key) : .referenceOnly(key))
            }
        } catch {
            // A row this key cannot open: after a rekey by someone else that is the key, not damage.
            if !epochChecked { try requireSameEpoch() }
            throw error
        }
    }

    // MARK: Writes

    package func insert(_ record: ItemRecord) throws(SecureStoreError) {
        guard !record.attributesOmitted else { throw Self.withoutAttributes }
        let row = sealer.seal(record, uniqueKeyIndex: searchedIndex(of: record))
        try executor.write(layout.insert, layout.bind([.integer(row.cls), .blob(row.ref), .blob(row.ukey),
                                                     .blob(row.svc), .blob(row.acct), Self.value(row.blob),
                                                     Self.value(row.secret), layout.dateValue(row.mdat)]))
    }

    /// Replaces the record with the same reference in place (its id, so its insertion order, stays). A format
    /// 4 row found in this transaction with the same class and index inputs gets only the parts that changed,
    /// and its `mdat` (NULL when the record is sealed again, else the new date sealed apart); any other row
    /// gets every column, in format 4.
    package func replace(_ record: ItemRecord) throws(SecureStoreError) {
        let old = found?.byRef[record.persistentRef]
        if record.attributesOmitted {
            // A change of secret alone to a row this transaction found by its key without reading its attributes
            // (``RowRead/referenceAndDate(_:)``): its secret part and its date apart, the sealed record as stored.
            guard let old, !old.attributesKnown, old.record.itemClass == record.itemClass,
                  old.record.uniqueKey == record.uniqueKey, RecordCodec.modificationDate(of: record) != nil
            else { throw Self.withoutAttributes }
            try writeParts(record, .secret, of: old)
        } else if let old, old.attributesKnown, FoundRecords.sameIndexes(old.record, record) {
            var parts: SealedParts = []
            if !RecordCodec.sameRecordApartFromDate(old.record, record) { parts.insert(.record) }
            if !FoundRecords.sameSecret(old, record.data) { parts.insert(.secret) }
            try writeParts(record, parts, of: old)
        } else {
            let row = sealer.seal(record, uniqueKeyIndex: searchedIndex(of: record))
            try executor.writeOne(layout.updateAll, layout.bind([
                .integer(row.cls), .blob(row.ukey), .blob(row.svc), .blob(row.acct), Self.value(row.blob),
                Self.value(row.secret), layout.dateValue(row.mdat), .blob(row.ref)]))
            // Its indexes changed (or it was not found here): a second replace in this transaction writes it whole.
            found?.byRef.removeValue(forKey: record.persistentRef)
        }
    }

    /// The unique-key index of `record` when this transaction's last search of one key was for its key (an
    /// add's uniqueness probe; an update's check that its new key is free), else nil.
    private func searchedIndex(of record: ItemRecord) -> [UInt8]? {
        guard let searched = found?.searchedKey, searched.key == record.uniqueKey else { return nil }
        return searched.index
    }

    /// Writes `parts` of `record` (and its `mdat`) into the row `old` found, by id, and remembers what it holds now.
    private func writeParts(_ record: ItemRecord, _ parts: SealedParts, of old: FoundRecords.Known) throws(SecureStoreError) {
        let (blob, secret, mdat) = old.withIndexes { ref, ukey in sealer.sealParts(record, parts, ref: ref, ukey: ukey) }
        var values: [TableValue] = []
        values.reserveCapacity(4)   // one allocation, not one per growth
        if let blob { values.append(.blob(blob)) }
        if let secret { values.append(.blob(secret)) }
        values.append(layout.dateValue(mdat))
        values.append(.integer(old.id))
        try executor.writeOne(layout.updateParts[Int(parts.rawValue)], layout.bind(values))
        found?.byRef[record.persistentRef] = FoundRecords.Known(old, now: record)
    }

    /// A record read without its attributes, given to be stored as a whole: never written.
    private static var withoutAttributes: SecureStoreError {
        SecureStoreError(.internalError, "An item read without its attributes cannot be stored whole.")
    }

    private static func value(_ bytes: [UInt8]?) -> TableValue {
        bytes.map { .blob($0) } ?? .null
    }

    /// A replaced row that was not there (changed by a writer outside this library's locks).
    package static var replacedRowVanished: SecureStoreError {
        SecureStoreError(.internalError, "The item to replace vanished inside a transaction; nothing was changed.")
    }

    package func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
        for ref in refs {
            if let known = found?.byRef.removeValue(forKey: ref) {
                try executor.write(layout.deleteById, layout.bind([.integer(known.id)]))
            } else {
                try executor.write(layout.deleteByRef, layout.bind([.blob(sealer.refIndex(ref))]))
            }
        }
    }

    package func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
        found?.byRef.removeAll()
        // Every class: one statement without a class condition (SQLite truncates the table and its indexes).
        if classes == Set(ItemClass.allCases) { return try executor.run(layout.deleteEverything, layout.bind([])) }
        var removed = 0
        for cls in classes.sorted(by: { $0.rawValue < $1.rawValue }) {
            removed += try executor.run(layout.deleteByClass, layout.bind([.integer(RecordSealer.classNumber(cls))]))
        }
        return removed
    }

    /// Re-seals every record under `newSealer` in place and stores its key check `newCheck` (the caller's
    /// transaction makes it all or nothing).
    package func rekey(to newSealer: RecordSealer, check newCheck: [UInt8]) throws(SecureStoreError) {
        try reseal(into: layout, with: newSealer)
        try layout.writeKeyCheck(executor, sealer: newSealer, check: newCheck)
    }

    /// Reads every record through this table's layout and writes it back in place, sealed by `newSealer` in
    /// the current record format, through `target` (the same table in a newer layout, or this one).
    package func reseal(into target: SealedTableLayout, with newSealer: RecordSealer) throws(SecureStoreError) {
        found?.byRef.removeAll()
        for (id, record) in try all() {
            let new = newSealer.seal(record)
            try executor.writeOne(target.updateRow, target.bind([.blob(new.ref), .blob(new.ukey), .blob(new.svc),
                                                            .blob(new.acct), Self.value(new.blob), Self.value(new.secret),
                                                            target.dateValue(new.mdat), .integer(id)]))
        }
    }
}

extension Duration {
    /// The duration in whole milliseconds (rounded down; clamped to `Int`).
    package var wholeMilliseconds: Int {
        Int(clamping: components.seconds.multipliedReportingOverflow(by: 1000).overflow
            ? Int64.max : components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }
}

/// The operations a sealed table offers a transaction, whatever its executor.
package protocol SealedTableOperations {
    func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord]
    func insert(_ record: ItemRecord) throws(SecureStoreError)
    func replace(_ record: ItemRecord) throws(SecureStoreError)
    func remove(_ refs: [PersistentRef]) throws(SecureStoreError)
    func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int
}

extension SealedTable: SealedTableOperations {}

/// The transaction every encrypted backend (SQLite, PostgreSQL) hands the core: its rows through the sealed-table
/// layer over that backend's executor. One type, so the backends supply only an executor.
public struct SealedTransaction: StorageTransaction {
    private let table: any SealedTableOperations

    package init(_ table: SealedTable) { self.table = table }

    public mutating func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        try table.find(filter)
    }

    public mutating func insert(_ record: ItemRecord) throws(SecureStoreError) {
        try table.insert(record)
    }

    public mutating func replace(_ record: ItemRecord) throws(SecureStoreError) {
        try table.replace(record)
    }

    public mutating func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
        try table.remove(refs)
    }

    public mutating func removeAll(of classes: Set<ItemClass>) throws(SecureStoreError) -> Int {
        try table.removeAll(of: classes)
    }
}
