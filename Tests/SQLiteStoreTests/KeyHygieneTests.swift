import Testing
import Foundation
import TestSupport
import SecureStoreCore
@testable import SecureStoreSQLite
import SecureStoreCrypto
import CSQLite

/// Secret bytes the test itself never keeps in clear: each byte XORed with a random mask, compared on the fly.
struct MaskedSecret {
    let name: String
    let mask: [UInt8]
    let masked: [UInt8]

    /// Masks `count` bytes at `pointer` (the caller zeroes them afterwards).
    init(_ name: String, _ pointer: UnsafeRawPointer, count: Int) {
        self.name = name
        let mask = Sodium.random(count)
        var masked = [UInt8](repeating: 0, count: count)
        for i in 0..<count { masked[i] = pointer.load(fromByteOffset: i, as: UInt8.self) ^ mask[i] }
        self.mask = mask
        self.masked = masked
    }

    /// Whether `bytes[at...]` holds the secret.
    func matches(_ bytes: UnsafeRawBufferPointer, at: Int) -> Bool {
        guard bytes.count - at >= masked.count else { return false }
        for i in 0..<masked.count where bytes[at + i] ^ mask[i] != masked[i] { return false }
        return true
    }
}

/// Every readable mapping of this process (/proc/self/maps), read through /proc/self/mem.
///
/// File-backed mappings that are not writable (program and library code and constants) are skipped: data
/// written at run time is always in a writable or anonymous mapping. Pages that cannot be read (a mapping
/// that went away meanwhile: other tests run in parallel) are stepped over one page at a time.
enum MemoryScan {
    /// A /proc file read to its end with read(2) (its reported size is 0, so size-based readers stop early).
    static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &block, block.count)
            if n <= 0 { break }
            bytes += block[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The secrets found anywhere in readable memory, with where.
    static func find(_ secrets: [MaskedSecret]) -> [String] {
        guard let maps = readProcFile("/proc/self/maps") else { return ["no /proc/self/maps"] }
        let fd = open("/proc/self/mem", O_RDONLY)
        guard fd >= 0 else { return ["cannot open /proc/self/mem"] }
        defer { close(fd) }
        let chunk = 1 << 20, page: UInt64 = 4096
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk + 64, alignment: 16)
        defer { buffer.deallocate() }
        let isFirst = UnsafeMutablePointer<Bool>.allocate(capacity: 256)
        isFirst.initialize(repeating: false, count: 256)
        defer { isFirst.deallocate() }
        for s in secrets { isFirst[Int(s.masked[0] ^ s.mask[0])] = true }
        var hits: [String] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("r") else { continue }
            let name = fields.count >= 6 ? String(fields[5]) : "[anonymous]"
            if name == "[vvar]" || name == "[vsyscall]" || name == "[vvar_vclock]" { continue }
            let writable = fields[1].dropFirst().hasPrefix("w")
            if !writable, name.hasPrefix("/") { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16),
                  end > start, end - start <= 1 << 30 else { continue }
            var at = start
            while at < end {
                // Overlap chunks by 63 bytes so a secret across a chunk border is still seen.
                let want = Int(min(UInt64(chunk + 63), end - at))
                let got = pread(fd, buffer.baseAddress, want, off_t(at))
                if got <= 0 {
                    at = (at / page + 1) * page   // unreadable page: step over it
                    continue
                }
                let view = UnsafeRawBufferPointer(start: buffer.baseAddress, count: got)
                guard let base = view.baseAddress?.assumingMemoryBound(to: UInt8.self) else { break }
                var i = 0
                while i < got {
                    if isFirst[Int(base[i])] {
                        for s in secrets where s.matches(view, at: i) {
                            hits.append("\(s.name) at 0x\(String(at + UInt64(i), radix: 16)) in \(name)")
                        }
                    }
                    i += 1
                }
                at += UInt64(got < want ? max(got, 1) : min(got, chunk))
            }
        }
        return hits
    }
}

// Under ASan or TSan the process maps terabytes of shadow memory next to ordinary mappings, so a scan of
// "all readable memory" is neither complete nor feasible; the property does not depend on the sanitizer,
// and the normal `swift test` run checks it.
@Suite("Key hygiene", .serialized,
       .disabled(if: underSanitizer, "memory scans are not meaningful under ASan/TSan (terabytes of shadow memory)"))
struct KeyHygieneTests {
    /// The master key in `bytes` and its two subkeys (FORMAT.md: ids 1 and 2, "SSencryp" and "SSindex_"), masked.
    static func maskedKeys(master bytes: inout [UInt8], label: String) throws -> [MaskedSecret] {
        defer { Sodium.zero(&bytes) }
        let master = try SecretKey(copying: bytes)
        let encryption = try Sodium.derive(master, id: 1, context: "SSencryp")
        let index = try Sodium.derive(master, id: 2, context: "SSindex_")
        return [
            MaskedSecret("\(label) master key", master.pointer, count: Sodium.keyBytes),
            MaskedSecret("\(label) encryption subkey", encryption.pointer, count: Sodium.keyBytes),
            MaskedSecret("\(label) index subkey", index.pointer, count: Sodium.keyBytes),
        ]   // the three SecretKeys are zeroed and freed here
    }

    /// Reads 32 bytes of a key file with read(2) into an array the caller zeroes.
    static func readKeyFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw SecureStoreError(.io, "cannot open \(path)") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        guard read(fd, &bytes, 32) == 32 else { throw SecureStoreError(.io, "short key file") }
        return bytes
    }

    @Test("after a key-file store is opened, used and closed, neither the master key nor a subkey is in memory")
    func keyFile() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let keyPath = s.path("store.key")
        // The library creates the key file; the test reads it once, masks it and zeroes its copy.
        var created: [UInt8] = try StoreKey.keyFile(keyPath).keyBytes()
        Sodium.zero(&created)
        var bytes = try Self.readKeyFile(keyPath)
        let secrets = try Self.maskedKeys(master: &bytes, label: "key-file")

        do {
            let store = try SQLiteStore(path: s.db, key: .keyFile(keyPath))
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
            #expect(try secret(store, "svc", "a") == Data("v".utf8))
            // Positive control: while the store is open its subkeys are in (guarded) memory, and the scan sees them.
            let open = withExtendedLifetime(store) { MemoryScan.find(secrets) }
            #expect(open.contains { $0.contains("encryption subkey") }, "the scan must see live keys: \(open)")
            #expect(!open.contains { $0.contains("master key") }, "the master key outlives opening: \(open)")
        }
        do {   // reopen (the existing-file path) and close again
            let store = try SQLiteStore(path: s.db, key: .keyFile(keyPath))
            #expect(try secret(store, "svc", "a") == Data("v".utf8))
        }
        let after = MemoryScan.find(secrets)
        #expect(after.isEmpty, "key material left in memory after closing: \(after)")
    }

    @Test("after a passphrase store is opened and closed, no key and no library copy of the passphrase is in memory")
    func passphrase() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        // The passphrase lives only in a buffer the test zeroes when the library lets go of it.
        let count = 28
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 1)
        for i in 0..<count { raw.storeBytes(of: alphabet[Int(Sodium.random(1)[0]) % alphabet.count], toByteOffset: i, as: UInt8.self) }
        let phrase = MaskedSecret("passphrase", raw, count: count)
        func passphraseData() -> Data {
            let copy = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 1)
            copy.copyMemory(from: raw, byteCount: count)
            return Data(bytesNoCopy: copy, count: count, deallocator: .custom { p, n in
                memset(p, 0, n)
                p.deallocate()
            })
        }
        do {
            let store = try SQLiteStore(path: s.db, key: .passphrase(passphraseData()), passphraseCost: .minimum)
            try store.add(NewItem(.genericPassword, generic("svc", "a"), data: Data("v".utf8)))
        }
        // The master key from the stored salt and costs, as the library computes it.
        let kdf = RawDB(s.db).rows("SELECT v FROM meta WHERE k = 'kdf'").first?.first ?? Data()
        try #require(kdf.count == 17 + Sodium.saltBytes)
        let ops = kdf[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let mem = kdf[9..<17].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        var secrets: [MaskedSecret]
        do {
            var pw = [UInt8](UnsafeRawBufferPointer(start: raw, count: count))
            let master = try Sodium.stretch(pw, salt: Array(kdf[17...]), ops: ops, mem: mem)
            Sodium.zero(&pw)
            var bytes = [UInt8](UnsafeBufferPointer(start: master.pointer, count: Sodium.keyBytes))
            secrets = try Self.maskedKeys(master: &bytes, label: "passphrase")
        }   // `master` is zeroed and freed here
        do {
            let store = try SQLiteStore(path: s.db, key: .passphrase(passphraseData()))
            #expect(try secret(store, "svc", "a") == Data("v".utf8))
        }
        // Positive control for ordinary heap memory: the test's own buffer is still there in clear.
        let control = MemoryScan.find([phrase])
        #expect(control.contains { $0.contains(String(UInt(bitPattern: raw), radix: 16)) },
                "the scan must see the test's own heap buffer: \(control)")
        memset(raw, 0, count)
        raw.deallocate()
        secrets.append(phrase)
        let after = MemoryScan.find(secrets)
        #expect(after.isEmpty, "key material or passphrase copies left in memory after closing: \(after)")
    }
}
