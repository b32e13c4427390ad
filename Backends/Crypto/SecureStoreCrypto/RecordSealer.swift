package import SecureStoreCore
import Foundation

/// One record as an encrypted backend stores it: the class number, keyed blind indexes, the sealed record
/// (`blob`, everything but the secret) and the sealed secret (nil: the item has none). Nothing in it is
/// readable without the store's key (see Backends/SQLite/FORMAT.md).
package struct SealedRecord: Sendable, Hashable {
    package let cls: Int64
    package let ref: [UInt8]
    package let ukey: [UInt8]
    package let svc: [UInt8]
    package let acct: [UInt8]
    package let blob: [UInt8]
    package let secret: [UInt8]?
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
    private static let secretADPrefix = Array("SSsec3".utf8)

    /// The associated data of a sealed secret: its row's reference index, so a secret opens only in its row.
    private static func secretAssociatedData(ref: [UInt8]) -> [UInt8] {
        secretADPrefix + ref
    }

    private static func associatedData(cls: Int64, ref: [UInt8], ukey: [UInt8]) -> [UInt8] {
        var ad: [UInt8] = []
        ad.reserveCapacity(7 + ref.count + ukey.count)
        ad.append(contentsOf: rowADPrefix)
        ad.append(UInt8(truncatingIfNeeded: cls))
        ad.append(contentsOf: ref)
        ad.append(contentsOf: ukey)
        return ad
    }

    package func seal(_ record: ItemRecord) -> SealedRecord {
        seal(record, sealingSecret: true)
    }

    /// - Parameter sealingSecret: false when the stored sealed secret stays as it is (its `secret` is then nil
    ///   and must not be written).
    ///
    /// The record is encoded straight into the buffer it is sealed in (and encrypted there, so its plaintext
    /// is nowhere else), the associated data is built on the stack, and the secret is sealed from the record's
    /// `Data` (no copy).
    package func seal(_ record: ItemRecord, sealingSecret: Bool) -> SealedRecord {
        let cls = Self.classNumber(record.itemClass)
        let fields = RecordCodec.Fields(record)
        let ref = record.persistentRef.withUnsafeBytes { index.index(domain: 1, $0) }
        let ukey = uniqueKeyIndex(record.uniqueKey)
        let blob = ref.withUnsafeBytes { refBytes in
            ukey.withUnsafeBytes { ukeyBytes in
                Self.withAssociatedData(prefix: Self.rowADPrefix, cls: UInt8(truncatingIfNeeded: cls), refBytes,
                                        ukeyBytes) { ad in
                    Sodium.seal(count: fields.count, ad: ad, key: encryption) { out in
                        fields.write(version: RecordCodec.version, into: out)
                    }
                }
            }
        }
        return SealedRecord(cls: cls, ref: ref, ukey: ukey,
                            svc: attributeIndex(.service, record[.service]),
                            acct: attributeIndex(.account, record[.account]), blob: blob,
                            secret: sealingSecret ? record.data.map { sealSecret($0, ref: ref) } : nil)
    }

    /// Test hook: the row a schema 1 or 2 store held for `record` (record format 2, the secret inside the
    /// blob, no `secret` column), so tests can build old stores of any size to upgrade.
    package func sealFormat2ForTesting(_ record: ItemRecord) -> SealedRecord {
        let cls = Self.classNumber(record.itemClass)
        let ref = refIndex(record.persistentRef)
        let ukey = uniqueKeyIndex(record.uniqueKey)
        var plain = RecordCodec.encodeWithSecret(record)
        defer { Sodium.zero(&plain) }
        return SealedRecord(cls: cls, ref: ref, ukey: ukey,
                            svc: attributeIndex(.service, record[.service]),
                            acct: attributeIndex(.account, record[.account]),
                            blob: Sodium.seal(plain, ad: Self.associatedData(cls: cls, ref: ref, ukey: ukey), key: encryption),
                            secret: nil)
    }

    /// The sealed form of a secret stored apart, bound to the row whose reference index is `ref`.
    private func sealSecret(_ data: Data, ref: [UInt8]) -> [UInt8] {
        ref.withUnsafeBytes { refBytes in
            Self.withAssociatedData(prefix: Self.secretADPrefix, cls: nil, refBytes, nil) { ad in
                data.withUnsafeBytes { plain in
                    Sodium.seal(count: plain.count, ad: ad, key: encryption) { out in
                        if plain.count > 0 { out.copyMemory(from: plain) }
                    }
                }
            }
        }
    }

    /// The record in one stored row read in place (the statement's column memory): the same checks as
    /// ``open(cls:ref:ukey:blob:secret:id:)``, with no copy of a column, the associated data built on the
    /// stack, the record's plaintext in one buffer (zeroed after decoding) and the secret opened straight
    /// into the `Data` the record holds.
    ///
    /// - Parameter secret: whether to open the sealed secret. When not (a read that returns no data), the
    ///   secret stays sealed and the record has none (``ItemRecord/data`` nil); the record's flag and the
    ///   column must still agree (a secret set to NULL, or given to an item without one, is damage either way).
    package func open(_ row: RowColumns, secret openingSecret: Bool = true) throws(SecureStoreError) -> ItemRecord {
        let plainCount = row.blob.count - Sodium.nonceBytes - Sodium.tagBytes
        guard plainCount >= 0 else { throw Self.undecryptable(row.id) }
        var opened = true
        var plain = [UInt8](unsafeUninitializedCapacity: plainCount) { buffer, count in
            count = plainCount
            opened = Self.withAssociatedData(prefix: Self.rowADPrefix, cls: UInt8(truncatingIfNeeded: row.cls),
                                             row.ref, row.ukey) { ad in
                Sodium.open(row.blob, ad: ad, key: encryption, into: UnsafeMutableRawBufferPointer(buffer))
            }
            if !opened { buffer.initialize(repeating: 0) }
        }
        defer { Sodium.zero(&plain) }
        guard opened else { throw Self.undecryptable(row.id) }
        var secret: Data? = nil
        if let sealed = row.secret, openingSecret {
            let count = sealed.count - Sodium.nonceBytes - Sodium.tagBytes
            var data = Data(count: max(count, 0))
            let ok = count >= 0 && data.withUnsafeMutableBytes { out in
                Self.withAssociatedData(prefix: Self.secretADPrefix, cls: nil, row.ref, nil) { ad in
                    Sodium.open(sealed, ad: ad, key: encryption, into: out)
                }
            }
            guard ok else {
                throw SecureStoreError(.decode,
                    "The secret of stored item #\(row.id) cannot be decrypted: the data was altered or corrupted.")
            }
            secret = data
        }
        let decoded = openingSecret ? RecordCodec.decode(plain, secretData: secret)
            : RecordCodec.decode(plain, secretSealed: row.secret != nil)
        guard let record = decoded, Self.classNumber(record.itemClass) == row.cls
        else {
            throw SecureStoreError(.decode, "Stored item #\(row.id) cannot be decoded: the data was altered or corrupted.")
        }
        return record
    }

    private static func undecryptable(_ id: Int64) -> SecureStoreError {
        SecureStoreError(.decode, "Stored item #\(id) cannot be decrypted: the data was altered or corrupted.")
    }

    /// Calls `body` with `prefix ‖ cls ‖ first ‖ second` in stack memory: the associated data of a row
    /// (``associatedData(cls:ref:ukey:)``) or of a secret (``secretAssociatedData(ref:)``).
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

    /// The record in one stored row (`id` only names it in errors); `decode` when it was altered, moved to
    /// another row or sealed with another key.
    /// `secret` is the sealed secret stored apart (format 3 records), nil for none or for a format 1 or 2
    /// record (whose secret is inside the blob).
    package func open(cls: Int64, ref: [UInt8], ukey: [UInt8], blob: [UInt8], secret: [UInt8]? = nil, id: Int64)
        throws(SecureStoreError) -> ItemRecord
    {
        guard var plain = Sodium.open(blob, ad: Self.associatedData(cls: cls, ref: ref, ukey: ukey), key: encryption)
        else {
            throw SecureStoreError(.decode, "Stored item #\(id) cannot be decrypted: the data was altered or corrupted.")
        }
        defer { Sodium.zero(&plain) }
        var secretPlain: [UInt8]? = nil
        if let secret {
            guard let opened = Sodium.open(secret, ad: Self.secretAssociatedData(ref: ref), key: encryption) else {
                throw SecureStoreError(.decode,
                    "The secret of stored item #\(id) cannot be decrypted: the data was altered or corrupted.")
            }
            secretPlain = opened
        }
        defer { Sodium.zero(&secretPlain) }
        guard let record = RecordCodec.decode(plain, secret: secretPlain), Self.classNumber(record.itemClass) == cls else {
            throw SecureStoreError(.decode, "Stored item #\(id) cannot be decoded: the data was altered or corrupted.")
        }
        return record
    }
}
