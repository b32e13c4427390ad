import Foundation
import SecureStore
import SQLiteStore

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
        let dir = base + "/securestore-fuzz-export-\(getpid())-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        return dir
    }()

    public static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
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
