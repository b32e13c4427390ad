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
    /// Calls `body` with each `id, cls, ref, ukey, blob, secret` row `sql` returns, in order.
    func forEachRecordRow(_ sql: String, _ parameters: [TableValue],
                          _ body: (RowColumns) throws(SecureStoreError) -> Void) throws(SecureStoreError)
}

extension SealedTableExecutor {
    package func write(_ sql: String, _ parameters: [TableValue]) throws(SecureStoreError) {
        try run(sql, parameters)
    }

    /// Calls `body` with each `id, cls, ref, ukey, blob, secret` row of `sql`, in order. This default goes
    /// through ``rows(_:_:)``; an executor that can lend its driver's column memory (SQLite) does so instead,
    /// so a lookup copies no column and builds no row arrays.
    package func forEachRecordRow(_ sql: String, _ parameters: [TableValue],
                                  _ body: (RowColumns) throws(SecureStoreError) -> Void) throws(SecureStoreError) {
        for row in try rows(sql, parameters) { try RowColumns.with(row, body) }
    }
}

/// The columns `id, cls, ref, ukey, blob, secret` of one stored row, read in place: the buffers are the
/// driver's (or an array's) memory and are valid only during the call that lends them.
package struct RowColumns {
    package let id: Int64
    package let cls: Int64
    package let ref: UnsafeRawBufferPointer
    package let ukey: UnsafeRawBufferPointer
    package let blob: UnsafeRawBufferPointer
    /// nil: the column is NULL (no secret, or a row of an older schema).
    package let secret: UnsafeRawBufferPointer?

    package init(id: Int64, cls: Int64, ref: UnsafeRawBufferPointer, ukey: UnsafeRawBufferPointer,
                 blob: UnsafeRawBufferPointer, secret: UnsafeRawBufferPointer?) {
        (self.id, self.cls, self.ref, self.ukey, self.blob, self.secret) = (id, cls, ref, ukey, blob, secret)
    }

    /// Lends the columns of a row given as values; `decode` when it does not have the shape of a stored row.
    static func with(_ row: [TableValue], _ body: (RowColumns) throws(SecureStoreError) -> Void)
        throws(SecureStoreError) {
        guard row.count == 6, case .integer(let id) = row[0], case .integer(let cls) = row[1],
              case .blob(let ref) = row[2], case .blob(let ukey) = row[3], case .blob(let blob) = row[4]
        else { throw damagedRow }
        let secret: [UInt8]?
        switch row[5] {
        case .null: secret = nil
        case .blob(let b): secret = b
        default: throw damagedSecret(id)
        }
        let outcome: Result<Void, SecureStoreError> = ref.withUnsafeBytes { ref in
            ukey.withUnsafeBytes { ukey in
                blob.withUnsafeBytes { blob in
                    func call(_ secret: UnsafeRawBufferPointer?) -> Result<Void, SecureStoreError> {
                        Result { () throws(SecureStoreError) in
                            try body(RowColumns(id: id, cls: cls, ref: ref, ukey: ukey, blob: blob, secret: secret))
                        }
                    }
                    guard let secret else { return call(nil) }
                    return secret.withUnsafeBytes { call($0) }
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

/// How one SQL database lays out the sealed records of one store: its table names, its placeholder style and
/// an optional scope column (PostgreSQL's numeric namespace id `ns`, bound as the first parameter of every statement). Every
/// statement the layer runs is built here once.
///
/// Table shape (see Backends/SQLite/FORMAT.md): `items(id, cls, ref, ukey, svc, acct, blob, secret)` with `id`
/// growing with insertion, and `meta(k, v)` holding the key check (`check`) and passphrase parameters (`kdf`).
/// A table of an older schema has no `secret` column (its records hold their secret): such a layout reads it.
package final class SealedTableLayout: Sendable {
    /// Every statement a find may run returns its rows `ORDER BY id`, and a find made of several statements
    /// sorts their rows by `id` once: that is the only rule for insertion order.
    package let selectAll: String
    let selectByRef: String
    let selectByClass: String
    let selectByClassService: String
    let selectByClassAccount: String
    let selectByKeyPrefix: String
    private let selectByFewKeys: [String]
    package let insert: String
    let updateBlob: String
    let updateAll: String
    /// The same two updates leaving the sealed secret as it is (an attribute-only change).
    let updateRecordOnly: String
    let updateAllButSecret: String
    let selectIndexes: String
    let deleteByRef: String
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
    /// Whether an update names only the columns whose blind index changed (SQLite rewrites the entry of every
    /// index whose column is in the SET list, even for the same value; PostgreSQL rewrites the row anyway and
    /// would pay a round trip to learn what changed).
    let updatesOnlyChangedIndexes: Bool

    /// - Parameters:
    ///   - scope: the column and value every row of this store carries (`("ns", .integer(3))`), nil for a
    ///     table that holds one store.
    ///   - numbered: `$1`-style placeholders (PostgreSQL) instead of `?` (SQLite).
    ///   - secretColumn: whether the table has the `secret` column (schema 3); without it the layout only reads.
    package init(items: String, meta: String, scope: (column: String, value: TableValue)?, numbered: Bool,
                 updatesOnlyChangedIndexes: Bool, secretColumn: Bool = true) {
        self.scope = scope.map(\.value)
        self.numbered = numbered
        self.updatesOnlyChangedIndexes = updatesOnlyChangedIndexes
        let first = scope == nil ? 1 : 2
        func p(_ n: Int) -> String { numbered ? "$\(n + first - 1)" : "?" }
        // The WHERE clause of a statement whose own conditions are `conditions`.
        func whereClause(_ conditions: [String]) -> String {
            let all = (scope.map { ["\($0.column) = \(numbered ? "$1" : "?")"] } ?? []) + conditions
            return all.isEmpty ? "" : " WHERE " + all.joined(separator: " AND ")
        }
        let columns = "SELECT id, cls, ref, ukey, blob, \(secretColumn ? "secret" : "NULL") FROM \(items)"
        selectAll = columns + whereClause([]) + " ORDER BY id"
        selectByRef = columns + whereClause(["ref = \(p(1))"]) + " ORDER BY id"
        selectByClass = columns + whereClause(["cls = \(p(1))"]) + " ORDER BY id"
        selectByClassService = columns + whereClause(["svc = \(p(1))", "cls = \(p(2))"]) + " ORDER BY id"
        selectByClassAccount = columns + whereClause(["acct = \(p(1))", "cls = \(p(2))"]) + " ORDER BY id"
        selectByKeyPrefix = columns + whereClause(["ukey IN ("])
        selectByFewKeys = (1...8).map { [selectByKeyPrefix] in
            Self.keysStatement(prefix: selectByKeyPrefix, count: $0, numbered: numbered, first: first)
        }
        let scopeColumn = scope.map { "\($0.column), " } ?? ""
        let scopeParameter = scope == nil ? "" : (numbered ? "$1, " : "?, ")
        insert = "INSERT INTO \(items)(\(scopeColumn)cls, ref, ukey, svc, acct, blob, secret) VALUES (\(scopeParameter)"
            + (1...7).map(p).joined(separator: ", ") + ")"
        updateBlob = "UPDATE \(items) SET blob = \(p(1)), secret = \(p(2))" + whereClause(["ref = \(p(3))"])
        updateRecordOnly = "UPDATE \(items) SET blob = \(p(1))" + whereClause(["ref = \(p(2))"])
        updateAllButSecret = "UPDATE \(items) SET cls = \(p(1)), ukey = \(p(2)), svc = \(p(3)), acct = \(p(4)), "
            + "blob = \(p(5))" + whereClause(["ref = \(p(6))"])
        updateAll = "UPDATE \(items) SET cls = \(p(1)), ukey = \(p(2)), svc = \(p(3)), acct = \(p(4)), blob = \(p(5)), "
            + "secret = \(p(6))" + whereClause(["ref = \(p(7))"])
        selectIndexes = "SELECT cls, ukey, svc, acct FROM \(items)" + whereClause(["ref = \(p(1))"])
        deleteByRef = "DELETE FROM \(items)" + whereClause(["ref = \(p(1))"])
        deleteByClass = "DELETE FROM \(items)" + whereClause(["cls = \(p(1))"])
        deleteEverything = "DELETE FROM \(items)" + whereClause([])
        updateRow = "UPDATE \(items) SET ref = \(p(1)), ukey = \(p(2)), svc = \(p(3)), acct = \(p(4)), blob = \(p(5)), "
            + "secret = \(p(6))" + whereClause(["id = \(p(7))"])
        selectCheck = "SELECT v FROM \(meta)" + whereClause(["k = 'check'"])
        selectMeta = "SELECT k, v FROM \(meta)" + whereClause(["k IN ('kdf', 'check')"])
        deleteKeyMeta = "DELETE FROM \(meta)" + whereClause(["k IN ('kdf', 'check')"])
        insertMeta = "INSERT INTO \(meta)(\(scopeColumn)k, v) VALUES (\(scopeParameter)\(p(1)), \(p(2)))"
        anyItem = "SELECT 1 FROM \(items)" + whereClause([]) + " LIMIT 1"
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
        try executor.run(deleteKeyMeta, bind([]))
        if let kdf = sealer.kdfParameters { try executor.run(insertMeta, bind([.text("kdf"), .blob(kdf)])) }
        try executor.run(insertMeta, bind([.text("check"), .blob(check)]))
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
    /// The records this transaction found or wrote, by reference, when the table keeps them (a writing SQLite
    /// transaction): a replace whose secret is the one found leaves the sealed secret as it is (an
    /// attribute-only update re-seals and writes only the record), and a replace compares its blind-index
    /// inputs with the found record's instead of reading the row's index columns again.
    private let found: FoundRecords?

    /// - Parameter keepingUnchangedSecrets: remember the records `find` returns, and leave a secret that a
    ///   `replace` does not change as it is stored (only for a layout that names changed columns only).
    package init(layout: SealedTableLayout, executor: any SealedTableExecutor, sealer: RecordSealer, epoch: [UInt8],
                 epochChecked: Bool, keepingUnchangedSecrets: Bool = false) {
        self.layout = layout
        self.executor = executor
        self.sealer = sealer
        self.epoch = epoch
        self.epochChecked = epochChecked
        found = keepingUnchangedSecrets && layout.updatesOnlyChangedIndexes ? FoundRecords() : nil
    }

    /// What the table holds now for the references this transaction found or wrote (kept current by every
    /// write, so a second replace of one item in a transaction compares with what the first one wrote).
    private final class FoundRecords {
        var byRef: [PersistentRef: ItemRecord] = [:]

        /// Whether `data` is the secret `old` holds (compared in constant time for equal lengths).
        static func sameSecret(_ old: ItemRecord, _ data: Data?) -> Bool {
            switch (old.data, data) {
            case (nil, nil): return true
            case (let a?, let b?): return a.count == b.count && Sodium.equal(a, b)
            default: return false
            }
        }

        /// Whether `new`'s row has the blind indexes `old`'s has: the inputs of each index are equal (class,
        /// unique key, service, account; an index is a keyed hash of its input, so equal inputs give equal
        /// indexes). A difference the indexes would not show (`nil` against a default value) only makes the
        /// update write those columns too.
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

    /// The statements that find the candidates of `filter`: by reference, else by unique keys, else by class
    /// and service, class and account, class, else every record.
    package func plan(_ filter: RecordFilter) -> [(sql: String, parameters: [TableValue])] {
        let l = layout
        if let ref = filter.persistentRef {
            return [(l.selectByRef, l.bind([.blob(sealer.refIndex(ref))]))]
        }
        if let uniqueKeys = filter.uniqueKeys {
            if uniqueKeys.count == 1 { return [(l.selectByKeys(1), l.bind([.blob(sealer.uniqueKeyIndex(uniqueKeys[0]))]))] }
            var seen = Set<UniqueKey>()
            let keys = uniqueKeys.filter { seen.insert($0).inserted }
            return stride(from: 0, to: keys.count, by: SealedTableLayout.keysPerStatement).map { start in
                let chunk = keys[start..<min(start + SealedTableLayout.keysPerStatement, keys.count)]
                return (l.selectByKeys(chunk.count), l.bind(chunk.map { .blob(sealer.uniqueKeyIndex($0)) }))
            }
        }
        if let cls = filter.itemClass {
            let number = TableValue.integer(RecordSealer.classNumber(cls))
            if let service = filter.equalities[.service] {
                return [(l.selectByClassService, l.bind([.blob(sealer.attributeIndex(.service, service)), number]))]
            }
            if let account = filter.equalities[.account] {
                return [(l.selectByClassAccount, l.bind([.blob(sealer.attributeIndex(.account, account)), number]))]
            }
            return [(l.selectByClass, l.bind([number]))]
        }
        return [(l.selectAll, l.bind([]))]
    }

    /// The records `filter` may match (a superset), in insertion order.
    package func find(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord] {
        let statements = plan(filter)
        guard statements.count == 1 else { return try rows(statements, secrets: filter.needsData).map(\.record) }
        return try find(statements[0], secrets: filter.needsData)
    }

    /// ``find(_:)`` when its plan is one statement (every find but one of more than 500 keys), else `nil`
    /// without running any: for a caller that reads outside a transaction, where one statement is its own
    /// consistent snapshot and several would not be.
    package func findInOneStatement(_ filter: RecordFilter) throws(SecureStoreError) -> [ItemRecord]? {
        let statements = plan(filter)
        guard statements.count == 1 else { return nil }
        return try find(statements[0], secrets: filter.needsData)
    }

    /// The rows of one statement, in id order already. `secrets`: whether the caller reads the records'
    /// secrets (``RecordFilter/needsData``); when not, no sealed secret is opened and the records have none.
    private func find(_ statement: (sql: String, parameters: [TableValue]), secrets: Bool) throws(SecureStoreError)
        -> [ItemRecord]
    {
        var found: [ItemRecord] = []
        try executor.forEachRecordRow(statement.sql, statement.parameters) { (row) throws(SecureStoreError) in
            found.append(try decode(row, secret: secrets))
        }
        try noted(found, whole: secrets)
        return found
    }

    /// After a find: the key epoch check of an empty answer (unless done), and the records to remember (only
    /// whole ones: a replace compares the secret it writes with the one found).
    private func noted(_ found: [ItemRecord], whole: Bool) throws(SecureStoreError) {
        if found.isEmpty, !epochChecked { try requireSameEpoch() }
        if whole, let known = self.found {
            for record in found { known.byRef[record.persistentRef] = record }
        }
    }

    /// Every record with its row id, in insertion order (for a rekey).
    package func all() throws(SecureStoreError) -> [(id: Int64, record: ItemRecord)] {
        try rows(plan(RecordFilter()), secrets: true)
    }

    private func rows(_ statements: [(sql: String, parameters: [TableValue])], secrets: Bool) throws(SecureStoreError)
        -> [(id: Int64, record: ItemRecord)]
    {
        var found: [(id: Int64, record: ItemRecord)] = []
        for statement in statements {
            try executor.forEachRecordRow(statement.sql, statement.parameters) { (row) throws(SecureStoreError) in
                found.append((row.id, try decode(row, secret: secrets)))
            }
        }
        try noted(found.map(\.record), whole: secrets)
        // Each statement returns its rows by id; several statements' rows are put in id order once.
        if statements.count > 1 { found.sort { $0.id < $1.id } }
        return found
    }

    /// Opens one `id, cls, ref, ukey, blob, secret` row (its sealed secret only when `secret`).
    private func decode(_ row: RowColumns, secret: Bool) throws(SecureStoreError) -> ItemRecord {
        do throws(SecureStoreError) {
            return try sealer.open(row, secret: secret)
        } catch {
            // A row this key cannot open: after a rekey by someone else that is the key, not damage.
            if !epochChecked { try requireSameEpoch() }
            throw error
        }
    }

    // MARK: Writes

    package func insert(_ record: ItemRecord) throws(SecureStoreError) {
        let row = sealer.seal(record)
        try executor.write(layout.insert, layout.bind([.integer(row.cls), .blob(row.ref), .blob(row.ukey),
                                                     .blob(row.svc), .blob(row.acct), .blob(row.blob), Self.secret(row)]))
        found?.byRef[record.persistentRef] = record
    }

    /// Replaces the record with the same reference in place (its id, so its insertion order, stays).
    package func replace(_ record: ItemRecord) throws(SecureStoreError) {
        let old = found?.byRef[record.persistentRef]
        let keepSecret = old.map { FoundRecords.sameSecret($0, record.data) } ?? false
        let row = sealer.seal(record, sealingSecret: !keepSecret)
        let changed: Int
        if layout.updatesOnlyChangedIndexes {
            let sameIndexes: Bool
            if let old {
                sameIndexes = FoundRecords.sameIndexes(old, record)
            } else {   // not found in this transaction: the row's index columns say
                let current = try executor.rows(layout.selectIndexes, layout.bind([.blob(row.ref)]))
                guard current.count == 1, current[0].count == 4 else { throw Self.vanished }
                let stored = current[0]
                sameIndexes = stored[0] == .integer(row.cls) && stored[1] == .blob(row.ukey)
                    && stored[2] == .blob(row.svc) && stored[3] == .blob(row.acct)
            }
            switch (sameIndexes, keepSecret) {
            case (true, true):
                changed = try executor.run(layout.updateRecordOnly, layout.bind([.blob(row.blob), .blob(row.ref)]))
            case (true, false):
                changed = try executor.run(layout.updateBlob, layout.bind([.blob(row.blob), Self.secret(row), .blob(row.ref)]))
            case (false, true):
                changed = try executor.run(layout.updateAllButSecret, layout.bind([
                    .integer(row.cls), .blob(row.ukey), .blob(row.svc), .blob(row.acct), .blob(row.blob), .blob(row.ref)]))
            case (false, false):
                changed = try executor.run(layout.updateAll, layout.bind([
                    .integer(row.cls), .blob(row.ukey), .blob(row.svc), .blob(row.acct), .blob(row.blob), Self.secret(row),
                    .blob(row.ref)]))
            }
        } else {
            changed = try executor.run(layout.updateAll, layout.bind([
                .integer(row.cls), .blob(row.ukey), .blob(row.svc), .blob(row.acct), .blob(row.blob), Self.secret(row),
                .blob(row.ref)]))
        }
        guard changed == 1 else { throw Self.vanished }
        found?.byRef[record.persistentRef] = record
    }

    private static func secret(_ row: SealedRecord) -> TableValue {
        row.secret.map { .blob($0) } ?? .null
    }

    private static var vanished: SecureStoreError {
        SecureStoreError(.internalError, "The item to replace vanished inside a transaction.")
    }

    package func remove(_ refs: [PersistentRef]) throws(SecureStoreError) {
        for ref in refs {
            try executor.write(layout.deleteByRef, layout.bind([.blob(sealer.refIndex(ref))]))
            found?.byRef.removeValue(forKey: ref)
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
        for (id, record) in try all() {
            let new = newSealer.seal(record)
            try executor.run(target.updateRow, target.bind([.blob(new.ref), .blob(new.ukey), .blob(new.svc),
                                                            .blob(new.acct), .blob(new.blob), Self.secret(new),
                                                            .integer(id)]))
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
