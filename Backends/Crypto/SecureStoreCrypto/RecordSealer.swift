package import SecureStoreCore
import Foundation

/// One record as an encrypted backend stores it: the class number, keyed blind indexes and the sealed parts
/// (see Backends/SQLite/FORMAT.md). Nothing in it is readable without the store's key.
///
/// Format 4 (written): `blob` is the record without its secret, `secret` the secret part (always there, for an
/// item with or without a secret: whether it has one is inside), `mdat` the modification date a change of
/// secret alone writes (nil: NULL, the record's own date holds). A `blob` or `secret` that a replace leaves as
/// it is stored is nil (see ``SealedParts``); `mdat` is always the value to store.
/// Rows of format 3 and older (tests build them) have no `mdat`, and no `secret` for an item without one.
package struct SealedRecord: Sendable, Hashable {
    package let cls: Int64
    package let ref: [UInt8]
    package let ukey: [UInt8]
    package let svc: [UInt8]
    package let acct: [UInt8]
    package let blob: [UInt8]?
    package let secret: [UInt8]?
    package let mdat: [UInt8]?

    package init(cls: Int64, ref: [UInt8], ukey: [UInt8], svc: [UInt8], acct: [UInt8], blob: [UInt8]?,
                 secret: [UInt8]?, mdat: [UInt8]?) {
        (self.cls, self.ref, self.ukey, self.svc, self.acct) = (cls, ref, ukey, svc, acct)
        (self.blob, self.secret, self.mdat) = (blob, secret, mdat)
    }
}

/// The parts of a format 4 row that a seal writes. Every seal also gives the row's `mdat`: NULL when the
/// record is sealed (its modification date is inside), else the record's new modification date sealed apart.
package struct SealedParts: OptionSet, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The record (`blob`): its attributes changed.
    package static let record = SealedParts(rawValue: 1)
    /// The secret part (`secret`): the secret, or the class or unique key it is bound to, changed.
    package static let secret = SealedParts(rawValue: 2)
    package static let all: SealedParts = [.record, .secret]
}

/// What a read of one row needs from it.
package enum RowRead: Sendable {
    /// Everything: attributes, modification date and secret.
    case whole
    /// Everything but the secret (left sealed; the record's ``ItemRecord/data`` is nil).
    case withoutData
    /// The secret and reference only, for a lookup that `key` decides (the row was found by its unique key
    /// index, and the secret part is bound to that index): the record carries `key` and no attributes. A row
    /// of format 3 or older is read whole.
    case dataOnly(UniqueKey)
    /// The reference only, for a find that `key` decides and that reads neither attributes nor secrets (a
    /// delete by key, a lookup returning nothing or references): the record part is opened (it is bound to the
    /// row's class, reference index and unique-key index) and only its class and reference are read; the date
    /// and secret parts stay sealed. The record carries `key`, no attributes and no secret. A row of format 3 or
    /// older is read as ``withoutData`` is.
    case referenceOnly(UniqueKey)
    /// ``referenceOnly(_:)`` and the modification date, for an update of the secret alone that `key` decides:
    /// the record part's date (its other attributes stepped over, not decoded), or the row's date part when it
    /// has one (opened: it replaces that date). The record carries `key`, the date and no secret. A row of
    /// format 3 or older is read as ``withoutData`` is.
    case referenceAndDate(UniqueKey)
}

/// The keys of one open store and everything done with them: blind indexes, sealing and opening records,
/// the key-check value. Shared by every encrypted backend, so their records are byte-compatible.
///
/// Key material lives in libsodium guarded memory and is zeroed when the sealer is released.
package final class RecordSealer: @unchecked Sendable {   // immutable after init; SecretKey memory is read-only
    private let encryption: SecretKey
    /// The index subkey, keyed into one BLAKE2b state per blind-index domain (1 ref, 2 unique key,
    /// 3 service, 4 other attributes) once per store.
    private let index: BlindIndexKey
    /// The subkey of whole-file seals (an export sealed as a whole: ``wholeSeal(kdf:check:rows:)``).
    private let whole: SecretKey
    /// The master key, kept only when it was stretched from a passphrase (or loaded from the kernel keyring),
    /// so ``unlock(_:check:seconds:)`` can cache it without a second Argon2id run.
    private let master: SecretKey?
    /// The Argon2id parameters to persist (alg ‖ ops ‖ mem ‖ salt) when the master key came from a passphrase.
    package let kdfParameters: [UInt8]?

    static let checkPlaintext = Array("SecureStore key check v1".utf8)
    static let checkAD = Array("check".utf8)

    /// The sealer of `master`; `kdfParameters` when it came from a passphrase (the master is then kept).
    private init(master: SecretKey, kdfParameters: [UInt8]?) throws(SecureStoreError) {
        encryption = try Sodium.derive(master, id: 1, context: "SSencryp")
        index = try BlindIndexKey(try Sodium.derive(master, id: 2, context: "SSindex_"), domains: 1...4)
        whole = try Sodium.derive(master, id: 3, context: "SSwhole_")
        self.master = kdfParameters == nil ? nil : master
        self.kdfParameters = kdfParameters
    }

    /// The sealer for `key`; a passphrase uses the stored salt and costs when there are some, else new ones
    /// (`cost`). An ``StoreKey/unlocked(orPassphrase:)`` key is stretched from the passphrase it gives (the
    /// kernel keyring is consulted by ``open(_:storedKDF:check:cost:slot:creatingKeyFile:)`` only). A missing
    /// key file is created only when `creatingKeyFile` (a new store).
    package static func make(_ key: StoreKey, storedKDF: [UInt8]?, cost: PassphraseCost, creatingKeyFile: Bool = true)
        throws(SecureStoreError) -> RecordSealer
    {
        try Sodium.ready()
        switch key {
        case .passphrase(let passphrase):
            return try stretched(passphrase, storedKDF: storedKDF, cost: cost)
        case .unlocked(let orPassphrase):
            return try stretched(try orPassphrase(storedKDF == nil), storedKDF: storedKDF, cost: cost)
        case .keyFile, .raw, .defaultKeyFile:
            if storedKDF != nil {
                throw SecureStoreError(.authFailed, "This store is opened with a passphrase, not a key.")
            }
            var bytes = try key.keyBytes(creating: creatingKeyFile)
            defer { Sodium.zero(&bytes) }
            return try RecordSealer(master: try SecretKey(copying: bytes), kdfParameters: nil)
        }
    }

    /// The sealer of an existing store whose stored KDF parameters and key-check value are `storedKDF` and
    /// `check`, verified against `check` (`authFailed` otherwise). For an ``StoreKey/unlocked(orPassphrase:)``
    /// key, the master key cached in `slot` is tried first (no Argon2id); one that does not open the store is
    /// ignored and the passphrase is asked for.
    package static func open(_ key: StoreKey, storedKDF: [UInt8]?, check: [UInt8]?, cost: PassphraseCost,
                             slot: KeyringSlot?, creatingKeyFile: Bool = true) throws(SecureStoreError) -> RecordSealer
    {
        if case .unlocked = key, let slot, let storedKDF {
            try Sodium.ready()
            if let cached = slot.load(binding: KeyringSlot.binding(kdf: storedKDF, check: check)),
               let sealer = try? RecordSealer(master: cached, kdfParameters: storedKDF),
               case .success = Result(catching: { () throws(SecureStoreError) in try sealer.verify(check: check) })
            {
                return sealer
            }
        }
        let sealer = try make(key, storedKDF: storedKDF, cost: cost, creatingKeyFile: creatingKeyFile)
        try sealer.verify(check: check)
        return sealer
    }

    /// Keeps this sealer's master key in `slot` for `seconds`, bound to the store's current key generation
    /// (`check` is the key-check value stored now). `param` when the key did not come from a passphrase.
    package func unlock(_ slot: KeyringSlot, check: [UInt8]?, seconds: UInt32) throws(SecureStoreError) {
        guard let master, let kdfParameters else {
            throw .param("key", "Only a passphrase store can be unlocked; a key-file or raw key needs no unlock.")
        }
        try verify(check: check)
        try slot.save(master, binding: KeyringSlot.binding(kdf: kdfParameters, check: check), seconds: seconds)
    }

    /// Argon2id over `passphrase` with the stored parameters, or new ones of `cost`.
    private static func stretched(_ passphrase: Data, storedKDF: [UInt8]?, cost: PassphraseCost)
        throws(SecureStoreError) -> RecordSealer
    {
        var salt: [UInt8], ops: UInt64, mem: UInt64
        let kdf: [UInt8]
        if let stored = storedKDF {
            // alg (1) ‖ ops (8) ‖ mem (8) ‖ salt (16)
            guard stored.count == 17 + Sodium.saltBytes, stored[0] == 1 else {
                throw SecureStoreError(.decode, "The store's passphrase parameters are damaged.")
            }
            ops = stored[1..<9].reduce(0) { $0 << 8 | UInt64($1) }
            mem = stored[9..<17].reduce(0) { $0 << 8 | UInt64($1) }
            // The costs come from the file: a hostile one must not make us allocate or spin without bound.
            if let problem = PassphraseCost(operations: ops, memoryBytes: mem).problem {
                throw SecureStoreError(.decode, "The store's passphrase parameters demand \(problem); the file was "
                    + "altered or is not a SecureStore store. Refusing to open it.")
            }
            salt = Array(stored[17...])
            kdf = stored
        } else {
            if let problem = cost.problem {
                throw .param("passphraseCost", "The passphrase cost is \(problem).")
            }
            salt = Sodium.random(Sodium.saltBytes)
            ops = cost.operations
            mem = cost.memoryBytes
            var encoded: [UInt8] = [1]
            withUnsafeBytes(of: ops.bigEndian) { encoded.append(contentsOf: $0) }
            withUnsafeBytes(of: mem.bigEndian) { encoded.append(contentsOf: $0) }
            kdf = encoded + salt
        }
        var bytes = Array(passphrase)
        defer { Sodium.zero(&bytes) }
        return try RecordSealer(master: try Sodium.stretch(bytes, salt: salt, ops: ops, mem: mem), kdfParameters: kdf)
    }

    // MARK: Key check

    /// A value that only this key opens; store it once, check it with ``verify(check:)`` on open.
    package func makeCheck() -> [UInt8] {
        Sodium.seal(Self.checkPlaintext, ad: Self.checkAD, key: encryption)
    }

    /// Throws `authFailed` unless `check` was made by the same key.
    package func verify(check: [UInt8]?) throws(SecureStoreError) {
        guard let check, Sodium.open(check, ad: Self.checkAD, key: encryption) == Self.checkPlaintext else {
            throw SecureStoreError(.authFailed, "The key or passphrase does not open this store.")
        }
    }

    /// The key epoch guard, run inside every writing transaction after the write lock is held: `stored` is the
    /// key-check value in the store now, `opened` the one this sealer saw (or wrote) when the store was opened.
    /// A rekey by another process or store object replaces the key-check value (a new key and a new nonce),
    /// so a writer holding the old key fails here, before it seals a row the new key cannot read.
    package static func requireSameEpoch(stored: [UInt8]?, opened: [UInt8]) throws(SecureStoreError) {
        guard let stored, stored == opened else {
            throw SecureStoreError(.authFailed, "The store was re-keyed by another process or store object since "
                + "it was opened; nothing was written. Open the store again with its current key.")
        }
    }

    // MARK: Whole-file seal

    /// The seal of a whole file (an export): keyed BLAKE2b-256 with the `whole` subkey over
    /// `"SecureStore whole seal v1" ‖ 0`, the stored KDF parameters and key check (each `u32 length ‖ bytes`,
    /// length 0xFFFFFFFF for none), the row count (u64) and every row in the order given (its columns as
    /// FORMAT.md says). A missing, added, changed, reordered or replayed row, or other key parameters, give
    /// another seal; only the key's holder can make one.
    package func wholeSeal(kdf: [UInt8]?, check: [UInt8]?, rows: [[TableValue]]) throws(SecureStoreError) -> [UInt8] {
        let hash = try KeyedHash(key: whole)
        hash.update(Array("SecureStore whole seal v1".utf8) + [0])
        func field(_ bytes: [UInt8]?) {
            guard let bytes else { hash.update(bigEndian: UInt32.max); return }
            hash.update(bigEndian: UInt32(truncatingIfNeeded: bytes.count))
            hash.update(bytes)
        }
        field(kdf)
        field(check)
        hash.update(bigEndian: UInt64(rows.count))
        for row in rows {
            hash.update(bigEndian: UInt32(truncatingIfNeeded: row.count))
            for value in row {
                switch value {
                case .null: hash.update([0])
                case .integer(let n): hash.update([1]); hash.update(bigEndian: n)
                case .blob(let b): hash.update([2]); field(b)
                case .text(let t): hash.update([3]); field(Array(t.utf8))
                }
            }
        }
        return hash.finish()
    }

    /// Whether `stored` is the seal ``wholeSeal(kdf:check:rows:)`` gives (constant time).
    package static func sameSeal(_ stored: [UInt8], _ computed: [UInt8]) -> Bool {
        stored.count == computed.count && stored.withUnsafeBufferPointer { a in
            computed.withUnsafeBufferPointer { b in
                guard let a = a.baseAddress, let b = b.baseAddress else { return false }
                return Sodium.equal(a, b, count: computed.count)
            }
        }
    }

    // MARK: Indexes

    package static func classNumber(_ cls: ItemClass) -> Int64 {
        switch cls {
        case .genericPassword: 1
        case .internetPassword: 2
        case .certificate: 3
        case .key: 4
        case .identity: 5
        }
    }

    package func refIndex(_ ref: PersistentRef) -> [UInt8] {
        ref.withUnsafeBytes { index.index(domain: 1, $0) }
    }

    package func uniqueKeyIndex(_ key: UniqueKey) -> [UInt8] {
        key.withUnsafeBytes { index.index(domain: 2, $0) }
    }

    /// The blind index of a service (domain 3) or of any other attribute (domain 4; used for account): over
    /// the value's bytes (text as UTF-8), none for a value that is neither text nor data.
    package func attributeIndex(_ name: AttributeName, _ value: AttributeValue?) -> [UInt8] {
        let domain: UInt8 = name == .service ? 3 : 4
        switch value ?? name.defaultValue {
        case .string(let s)?:
            var s = s
            return s.withUTF8 { index.index(domain: domain, UnsafeRawBufferPointer($0)) }
        case .data(let d)?:
            return d.withUnsafeBytes { index.index(domain: domain, $0) }
        default:
            return index.index(domain: domain, UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    // MARK: Records

    private static let rowADPrefix = Array("SSrow1".utf8)
    private static let secretADPrefix3 = Array("SSsec3".utf8)
    private static let secretADPrefix = Array("SSsec4".utf8)
    private static let dateADPrefix = Array("SSmdt4".utf8)

    /// The `mdat` of a row whose modification date is inside its record, in a table whose rows keep the room
    /// of a sealed date (SQLite schema 5; elsewhere NULL): as long as a sealed date (nonce, 8 bytes, tag), all
    /// zero. A change of secret alone then writes its date over it and the row keeps its size, so SQLite
    /// rewrites it in place (its overflow pages too: 8 KiB of log for a 4 KiB secret, 16 KiB when the row
    /// grows). No sealed date is all zero (a random nonce, an authenticating tag).
    package static let noDateApart = [UInt8](repeating: 0, count: Sodium.nonceBytes + 8 + Sodium.tagBytes)

    /// Whether a row's `mdat` is ``noDateApart``.
    static func isNoDateApart(_ mdat: UnsafeRawBufferPointer) -> Bool {
        mdat.count == noDateApart.count && !mdat.contains { $0 != 0 }
    }

    /// The class of a stored class number, nil for none.
    package static func itemClass(number: Int64) -> ItemClass? {
        switch number {
        case 1: .genericPassword
        case 2: .internetPassword
        case 3: .certificate
        case 4: .key
        case 5: .identity
        default: nil
        }
    }

    /// The row of `record` in format 4, sealing the record and secret parts in `parts`. With fewer than all
    /// parts (a replace that keeps the row's index columns), `svc` and `acct` are left empty: only a row with
    /// every part sealed is inserted or has its indexes written.
    ///
    /// Each part is encoded straight into the buffer it is sealed in (and encrypted there, so its plaintext is
    /// nowhere else), and the associated data is built on the stack:
    /// - record (`blob`): `"SSrow1" ‖ cls ‖ ref index ‖ ukey index`;
    /// - secret part: `"SSsec4" ‖ cls ‖ ref index ‖ ukey index`, so a secret opens only in its row, for its
    ///   class and unique key: a lookup decided by the key can open it alone;
    /// - modification date (only when the record is not sealed): `"SSmdt4" ‖ ref index`.
    ///
    /// `uniqueKeyIndex` is the record's unique-key index when the caller has it already (computed by this
    /// sealer for this record's key).
    package func seal(_ record: ItemRecord, parts: SealedParts = .all, uniqueKeyIndex known: [UInt8]? = nil) -> SealedRecord {
        let cls = Self.classNumber(record.itemClass)
        let ref = record.persistentRef.withUnsafeBytes { index.index(domain: 1, $0) }
        let ukey = known ?? uniqueKeyIndex(record.uniqueKey)
        let (blob, secret, mdat) = ref.withUnsafeBytes { refBytes in
            ukey.withUnsafeBytes { ukeyBytes in sealParts(record, parts, ref: refBytes, ukey: ukeyBytes) }
        }
        let whole = parts == .all
        return SealedRecord(cls: cls, ref: ref, ukey: ukey,
                            svc: whole ? attributeIndex(.service, record[.service]) : [],
                            acct: whole ? attributeIndex(.account, record[.account]) : [],
                            blob: blob, secret: secret, mdat: mdat)
    }

    /// The `parts` of `record` (and its `mdat`, as ``seal(_:parts:)`` gives it) for the row whose reference
    /// and unique-key indexes are `ref` and `ukey`: a replace passes those of the row it found (which the row's
    /// sealed record authenticated) instead of computing both keyed hashes again.
    package func sealParts(_ record: ItemRecord, _ parts: SealedParts, ref: UnsafeRawBufferPointer,
                           ukey: UnsafeRawBufferPointer) -> (blob: [UInt8]?, secret: [UInt8]?, mdat: [UInt8]?) {
        let clsByte = UInt8(truncatingIfNeeded: Self.classNumber(record.itemClass))
        let blob = parts.contains(.record) ? Self.withAssociatedData(
            prefix: Self.rowADPrefix, cls: clsByte, ref, ukey) { ad in
            let fields = RecordCodec.Fields(record)
            return Sodium.seal(count: fields.count, ad: ad, key: encryption) { fields.write(into: $0) }
        } : nil
        let secret = parts.contains(.secret) ? Self.withAssociatedData(
            prefix: Self.secretADPrefix, cls: clsByte, ref, ukey) { ad in
            Sodium.seal(count: RecordCodec.secretCount(record), ad: ad, key: encryption) {
                RecordCodec.writeSecret(record, into: $0)
            }
        } : nil
        let mdat = parts.contains(.record) ? nil : RecordCodec.modificationDate(of: record).map { date in
            Self.withAssociatedData(prefix: Self.dateADPrefix, cls: nil, ref, nil) { ad in
                RecordCodec.encodeDate(date).withUnsafeBytes { plain in
                    Sodium.seal(count: plain.count, ad: ad, key: encryption) { $0.copyMemory(from: plain) }
                }
            }
        }
        return (blob, secret, mdat)
    }

    /// Test hook: the row an older store held for `record`, so tests can build old stores of any size to
    /// upgrade: `format` 3 (schema 3: the record without its secret, the secret sealed apart and bound to the
    /// reference index only, no date column) or 2 (schemas 1 and 2: the secret inside the record, no `secret`
    /// column).
    package func sealForTesting(_ record: ItemRecord, format: UInt8) -> SealedRecord {
        precondition(format == 2 || format == 3, "formats 2 and 3 are the older ones written")
        let cls = Self.classNumber(record.itemClass)
        let ref = refIndex(record.persistentRef)
        let ukey = uniqueKeyIndex(record.uniqueKey)
        var plain = format == 3 ? RecordCodec.encodeFormat3(record) : RecordCodec.encodeWithSecret(record)
        defer { Sodium.zero(&plain) }
        let secret = format == 3 ? record.data.map { Sodium.seal(Array($0), ad: Self.secretADPrefix3 + ref, key: encryption) } : nil
        return SealedRecord(cls: cls, ref: ref, ukey: ukey,
                            svc: attributeIndex(.service, record[.service]),
                            acct: attributeIndex(.account, record[.account]),
                            blob: Sodium.seal(plain, ad: Self.associatedData(cls: cls, ref: ref, ukey: ukey), key: encryption),
                            secret: secret, mdat: nil)
    }

    private static func associatedData(cls: Int64, ref: [UInt8], ukey: [UInt8]) -> [UInt8] {
        rowADPrefix + [UInt8(truncatingIfNeeded: cls)] + ref + ukey
    }

    /// The record in one stored row read in place (the statement's column memory), opening only what `read`
    /// needs: no copy of a column, the associated data built on the stack, the record's plaintext in one
    /// buffer (zeroed after decoding) and the secret opened straight into the `Data` the record holds.
    package func open(_ row: RowColumns, _ read: RowRead = .whole) throws(SecureStoreError) -> ItemRecord {
        try openRow(row, read).record
    }

    /// ``open(_:_:)``, and whether the row is of format 4 (`current`; a replace may then write only the parts
    /// that changed).
    ///
    /// The record's first byte says its format. For ``RowRead/dataOnly(_:)``, the secret part is opened first,
    /// alone, under format 4's associated data; when that fails (a row of format 3 or older, whose secret is
    /// bound to its reference only, or a damaged one) the row is read whole, which gives the record or the
    /// error. A part left sealed must still be there: a format 4 row without its secret part, a date part in a
    /// row of an older format, or a format 3 record whose flag and `secret` column disagree, is damage either
    /// way.
    package func openRow(_ row: RowColumns, _ read: RowRead = .whole) throws(SecureStoreError)
        -> (record: ItemRecord, current: Bool)
    {
        if case .dataOnly(let key) = read, let record = openSecretPart(row, key: key) { return (record, true) }
        let clsByte = UInt8(truncatingIfNeeded: row.cls)
        var plain = try openRecord(row)
        defer { Sodium.zero(&plain) }
        let withoutData: Bool
        switch read {
        case .withoutData, .referenceOnly, .referenceAndDate: withoutData = true
        case .whole, .dataOnly: withoutData = false
        }
        guard RecordCodec.format(plain) == RecordCodec.version else {
            guard row.mdat == nil else { throw Self.undecodable(row.id) }   // no older row has a date part
            return (try openFormat3(row, plain, secret: !withoutData), false)
        }
        guard let sealedSecret = row.secret else { throw Self.damagedSecret(row.id) }   // every format 4 row has one
        switch read {
        case .referenceOnly(let key):
            guard let opened = RecordCodec.classAndReference(format4: plain), Self.classNumber(opened.itemClass) == row.cls
            else { throw Self.undecodable(row.id) }
            return (ItemRecord(persistentRef: opened.ref, itemClass: opened.itemClass, foundByKey: key, data: nil), true)
        case .referenceAndDate(let key):
            guard let opened = RecordCodec.classReferenceAndDate(format4: plain, apart: try openDatePart(row)),
                  Self.classNumber(opened.itemClass) == row.cls
            else { throw Self.undecodable(row.id) }
            return (ItemRecord(persistentRef: opened.ref, itemClass: opened.itemClass, foundByKey: key, data: nil,
                               modified: opened.modified), true)
        case .whole, .withoutData, .dataOnly:
            break
        }
        var part: (ref: PersistentRef, data: Data?)? = nil
        if !withoutData {
            guard let opened = openSecret(sealedSecret, cls: clsByte, row: row) else { throw Self.damagedSecret(row.id) }
            part = opened
        }
        let modified = try openDatePart(row)
        guard let record = RecordCodec.decode(format4: plain, modified: modified, data: part?.data),
              Self.classNumber(record.itemClass) == row.cls, part.map({ $0.ref == record.persistentRef }) ?? true
        else { throw Self.undecodable(row.id) }
        return (record, true)
    }

    /// The date in a format 4 row's date part (`mdat`), nil when the row has no date apart.
    private func openDatePart(_ row: RowColumns) throws(SecureStoreError) -> Date? {
        guard let sealedDate = row.mdat, !Self.isNoDateApart(sealedDate) else { return nil }
        let count = sealedDate.count - Sodium.nonceBytes - Sodium.tagBytes
        let date: Date? = count == 8 ? withUnsafeTemporaryAllocation(byteCount: 8, alignment: 8) { out in
            let opened = Self.withAssociatedData(prefix: Self.dateADPrefix, cls: nil, row.ref, nil) { ad in
                Sodium.open(sealedDate, ad: ad, key: encryption, into: out)
            }
            return opened ? RecordCodec.decodeDate(UnsafeRawBufferPointer(out)) : nil
        } : nil
        guard let date else {
            throw SecureStoreError(.decode, "The modification date of stored item #\(row.id) cannot be decrypted: "
                + "the data was altered or corrupted.")
        }
        return date
    }

    /// The record of a row found by the index of `key` (the row's `ukey`), from its format 4 secret part alone:
    /// reference and secret, no attributes (``RowRead/dataOnly(_:)``). Nil when the part is missing or does not
    /// open under format 4's associated data, or the class is unknown: the caller then reads the whole row,
    /// which gives the record or the error (a row of format 3 or older, or a damaged one).
    package func openSecretPart(_ row: RowColumns, key: UniqueKey) -> ItemRecord? {
        guard let sealed = row.secret, let cls = Self.itemClass(number: row.cls),
              let part = openSecret(sealed, cls: UInt8(truncatingIfNeeded: row.cls), row: row)
        else { return nil }
        return ItemRecord(persistentRef: part.ref, itemClass: cls, foundByKey: key, data: part.data)
    }

    /// The plaintext of a row's sealed record (the caller zeroes it).
    private func openRecord(_ row: RowColumns) throws(SecureStoreError) -> [UInt8] {
        let plainCount = row.blob.count - Sodium.nonceBytes - Sodium.tagBytes
        guard plainCount >= 0 else { throw Self.undecryptable(row.id) }
        var opened = true
        let plain = [UInt8](unsafeUninitializedCapacity: plainCount) { buffer, count in
            count = plainCount
            opened = Self.withAssociatedData(prefix: Self.rowADPrefix, cls: UInt8(truncatingIfNeeded: row.cls),
                                             row.ref, row.ukey) { ad in
                Sodium.open(row.blob, ad: ad, key: encryption, into: UnsafeMutableRawBufferPointer(buffer))
            }
            if !opened { buffer.initialize(repeating: 0) }
        }
        guard opened else { throw Self.undecryptable(row.id) }
        return plain
    }

    /// A format 4 secret part, opened into a temporary buffer (zeroed after) whose leading secret bytes become
    /// the record's `Data` in one copy; the trailer (reference, its length, the "has a secret" byte) follows
    /// them. Nil when it does not open under format 4's associated data or is not a secret part.
    ///
    /// Not opened into a `Data` and cut to length: Foundation's `Data` checks exclusive access to its storage
    /// dynamically on each such call (`withUnsafeMutableBytes`, the `count` setter), and this way costs 1.3k
    /// fewer of a SQLite lookup's 39.1k instructions (Benchmarks/results/2026-12-07-write-path.md).
    private func openSecret(_ sealed: UnsafeRawBufferPointer, cls: UInt8, row: RowColumns)
        -> (ref: PersistentRef, data: Data?)?
    {
        let count = sealed.count - Sodium.nonceBytes - Sodium.tagBytes
        guard count >= 5 else { return nil }
        return withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { plain in
            defer { Sodium.zero(plain) }
            let ok = Self.withAssociatedData(prefix: Self.secretADPrefix, cls: cls, row.ref, row.ukey) { ad in
                Sodium.open(sealed, ad: ad, key: encryption, into: plain)
            }
            guard ok, let trailer = RecordCodec.decodeSecretTrailer(UnsafeRawBufferPointer(plain)) else { return nil }
            guard trailer.present else { return (trailer.ref, nil) }
            return (trailer.ref, Data(UnsafeRawBufferPointer(rebasing: plain[..<trailer.dataCount])))
        }
    }

    /// A format 3 (or older) row whose record is `plain`: the record, and its secret sealed apart when `secret`.
    private func openFormat3(_ row: RowColumns, _ plain: [UInt8], secret openingSecret: Bool)
        throws(SecureStoreError) -> ItemRecord
    {
        var secret: Data? = nil
        if let sealed = row.secret, openingSecret {
            let count = sealed.count - Sodium.nonceBytes - Sodium.tagBytes
            var data = Data(count: max(count, 0))
            let ok = count >= 0 && data.withUnsafeMutableBytes { out in
                Self.withAssociatedData(prefix: Self.secretADPrefix3, cls: nil, row.ref, nil) { ad in
                    Sodium.open(sealed, ad: ad, key: encryption, into: out)
                }
            }
            guard ok else { throw Self.damagedSecret(row.id) }
            secret = data
        }
        let decoded = openingSecret ? RecordCodec.decode(plain, secretData: secret)
            : RecordCodec.decode(plain, secretSealed: row.secret != nil)
        guard let record = decoded, Self.classNumber(record.itemClass) == row.cls else { throw Self.undecodable(row.id) }
        return record
    }

    private static func undecryptable(_ id: Int64) -> SecureStoreError {
        SecureStoreError(.decode, "Stored item #\(id) cannot be decrypted: the data was altered or corrupted.")
    }

    private static func undecodable(_ id: Int64) -> SecureStoreError {
        SecureStoreError(.decode, "Stored item #\(id) cannot be decoded: the data was altered or corrupted.")
    }

    private static func damagedSecret(_ id: Int64) -> SecureStoreError {
        SecureStoreError(.decode, "The secret of stored item #\(id) cannot be decrypted: the data was altered or corrupted.")
    }

    /// Calls `body` with `prefix ‖ cls ‖ first ‖ second` in stack memory: the associated data of a row's part.
    private static func withAssociatedData<Result>(prefix: [UInt8], cls: UInt8?, _ first: UnsafeRawBufferPointer,
                                                   _ second: UnsafeRawBufferPointer?,
                                                   _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let count = prefix.count + (cls == nil ? 0 : 1) + first.count + (second?.count ?? 0)
        return withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { ad in
            // Plain offsets (a nested function appending to a captured offset costs a boxed variable and an
            // exclusivity check per call).
            var at = prefix.withUnsafeBytes { Self.copy($0, into: ad, at: 0) }
            if let cls { ad[at] = cls; at += 1 }
            at = Self.copy(first, into: ad, at: at)
            if let second { at = Self.copy(second, into: ad, at: at) }
            return body(UnsafeRawBufferPointer(ad))
        }
    }

    /// Copies `bytes` into `buffer` at `at`; the offset after them.
    @inline(__always)
    private static func copy(_ bytes: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer, at: Int) -> Int {
        if let source = bytes.baseAddress, bytes.count > 0, let target = buffer.baseAddress {
            (target + at).copyMemory(from: source, byteCount: bytes.count)
        }
        return at + bytes.count
    }

    /// The record in one sealed row given as arrays (tests; `id` only names it in errors): the same checks as
    /// ``open(_:_:)``.
    package func open(_ sealed: SealedRecord, id: Int64, _ read: RowRead = .whole) throws(SecureStoreError) -> ItemRecord {
        guard let blob = sealed.blob else { throw Self.undecryptable(id) }
        var outcome: Result<ItemRecord, SecureStoreError> = .failure(Self.undecryptable(id))
        sealed.ref.withUnsafeBytes { ref in
            sealed.ukey.withUnsafeBytes { ukey in
                blob.withUnsafeBytes { blob in
                    func call(_ secret: UnsafeRawBufferPointer?, _ mdat: UnsafeRawBufferPointer?) {
                        outcome = Result { () throws(SecureStoreError) in
                            try open(RowColumns(id: id, cls: sealed.cls, ref: ref, ukey: ukey, blob: blob, secret: secret,
                                                mdat: mdat), read)
                        }
                    }
                    switch (sealed.secret, sealed.mdat) {
                    case (nil, nil): call(nil, nil)
                    case (let s?, nil): s.withUnsafeBytes { call($0, nil) }
                    case (nil, let m?): m.withUnsafeBytes { call(nil, $0) }
                    case (let s?, let m?): s.withUnsafeBytes { s in m.withUnsafeBytes { call(s, $0) } }
                    }
                }
            }
        }
        return try outcome.get()
    }
}
