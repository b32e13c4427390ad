import Foundation
import SecureStoreCore
import SecureStoreSQLite
import SecureStoreCrypto

/// Fuzz target (d): the export file format. An export is a passphrase-encrypted SQLite store file
/// (`securestore export`); `securestore import` opens it read-only and reads every record. Here the fuzz
/// bytes are such a file, opened with the passphrase `fuzz-export` and read completely.
///
/// Invariants: any bytes give the records or a clear error of a documented kind; the file is never changed;
/// hostile passphrase costs are refused (they are capped, see `PassphraseCost.maxMemoryBytes`).
public enum ExportExercise {
    public static let name = "export"
    public static let passphrase = "fuzz-export"
    private static let allowed: Set<SecureStoreError.Code> = [.decode, .authFailed, .notAvailable, .io, .readOnly]

    /// A private folder for this process's input file (in memory when /dev/shm exists).
    private static let folder: String = {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return base + "/securestore-fuzzing-\(getpid())-\(UUID().uuidString.prefix(8))"
    }()

    /// Creates the folder; the returned closure removes it again (nothing is left behind).
    private static func makeFolder() -> () -> Void {
        mkdir(folder, 0o700)
        return { rmdir(folder) }
    }

    public static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        let removeFolder = makeFolder()
        defer { removeFolder() }
        let path = folder + "/export.db"
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
        else { throw FuzzFinding(name, "cannot write the input file under \(folder)") }
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) } }

        let outcome = Result { () throws(SecureStoreError) -> [ItemRecord] in
            let store = try SQLiteStore(path: path, key: .passphrase(passphrase), readOnly: true)
            return try store.exportRecords()
        }
        if case .failure(let error) = outcome {
            guard allowed.contains(error.code) else {
                throw FuzzFinding(name, "opening or reading failed with \(error.code), not a documented kind: \(error.message)")
            }
            guard !error.message.isEmpty, !error.message.contains(passphrase) else {
                throw FuzzFinding(name, "an error without a message, or with the passphrase in it: \(error.message)")
            }
        }
        guard let after = FileManager.default.contents(atPath: path), [UInt8](after) == bytes else {
            throw FuzzFinding(name, "reading the export changed the file")
        }
    }
}

extension ExportExercise {
    /// Writes a small valid export (minimum passphrase cost, 512-byte pages, three items) to `path`: the
    /// seed `Fuzz/corpus/export/valid-export.db`. Regenerate with `SECURESTORE_FUZZ_MAKE_SEEDS=1 swift test
    /// --filter FuzzRegressionTests`.
    public static func makeSeed(at path: String) throws {
        unlink(path)
        do {
            let store = try SQLiteStore(path: path, key: .passphrase(passphrase),
                                        configuration: StoreConfiguration(accessGroups: ["securestore"]),
                                        passphraseCost: .minimum)
            try store.add(NewItem(.genericPassword, [.service: "svc", .account: "alice"], data: Data("pw".utf8)))
            try store.add(NewItem(.internetPassword, [.server: "example.org", .port: 443], data: Data([0, 1, 2])))
            try store.add(NewItem(.key, [.applicationTag: .data(Data("tag".utf8))], data: Data(count: 32)))
        }
        try SQLiteCompaction.compact(path, pageSize: 512)
    }
}

extension ExportExercise {
    /// How many records the export at `path` holds (opened read-only, in a copy, so the seed never changes).
    public static func recordCount(_ path: String) throws -> Int {
        let removeFolder = makeFolder()
        defer { removeFolder() }
        let copy = folder + "/count.db"
        for suffix in ["", "-wal", "-shm"] { unlink(copy + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { unlink(copy + suffix) } }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        return try SQLiteStore(path: copy, key: .passphrase(passphrase), readOnly: true).exportRecords().count
    }
}
