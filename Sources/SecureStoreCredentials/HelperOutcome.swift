public import Foundation
import SecureStoreProcess
public import SecureStoreCore
#if canImport(Glibc)
import Glibc
#endif

/// What one run of a credential helper produces: bytes for standard output, a message for standard error,
/// and the exit status. The protocol code builds it without doing any I/O; the executables write it.
public struct HelperOutcome: Sendable, Equatable {
    public var output: Data
    /// A message for standard error (never a secret), or nil.
    public var diagnostic: String?
    public var status: Int32

    public init(output: Data = Data(), diagnostic: String? = nil, status: Int32 = 0) {
        self.output = output
        self.diagnostic = diagnostic
        self.status = status
    }
}

/// Which store a helper uses: nil fields mean "as the environment and config file say", exactly as for the
/// `securestore` tool (`SECURESTORE_BACKEND`, `SECURESTORE_CONFIG`, `~/.config/securestore/config.json`).
public struct StoreChoice: Sendable, Equatable {
    public var configFile: String?
    public var backend: String?
    /// Whether the action may create a store that does not exist yet: only `store` does. A `get`, `erase` or
    /// `list` against no store answers "nothing stored" and creates no file or key
    /// (`BackendSettings.createsStore` in SecureStoreBackends).
    public var creatingStore: Bool

    public init(configFile: String? = nil, backend: String? = nil, creatingStore: Bool = true) {
        self.configFile = configFile
        self.backend = backend
        self.creatingStore = creatingStore
    }
}

/// Opens the chosen store when a helper needs one (not at all for an action that needs none).
public typealias StoreOpener = (StoreChoice) throws(SecureStoreError) -> any SecureStore

/// A failure of a credential helper: bad input or a store error, said without any secret.
public struct CredentialHelperError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    /// A store error, as the `securestore` tool words it (message, code and status).
    public init(_ error: SecureStoreError) {
        message = "\(error.message) [\(error.code.name) \(error.code.status)]"
    }

    public var description: String { message }
}

/// Runs a store operation, turning its error into a helper error.
@discardableResult
func storeCall<T>(_ body: () throws(SecureStoreError) -> T) throws(CredentialHelperError) -> T {
    do throws(SecureStoreError) { return try body() } catch { throw CredentialHelperError(error) }
}

/// The store an action that only reads or removes opens, or nil when there is none yet (`itemNotFound` from
/// an opener whose choice does not create one).
func existingStore(_ open: () throws(SecureStoreError) -> any SecureStore) throws(CredentialHelperError) -> (any SecureStore)? {
    do throws(SecureStoreError) { return try open() } catch {
        if error.code == .itemNotFound { return nil }
        throw CredentialHelperError(error)
    }
}

/// Process-level I/O of the helper executables: bounded reads of standard input, core dumps off.
public enum HelperProcess {
    /// The most either helper reads from standard input (a credential is a few hundred bytes; a secret is at
    /// most `StoreLimits.maxSecretBytes`, and a JSON string may escape each byte into six).
    public static let maxInputBytes = 8 << 20

    /// Reads standard input until end of file, or (with `stopAtBlankLine`) until a line that is empty: git's
    /// protocol ends a credential with a blank line or end of file, and a caller may keep the pipe open.
    /// - Throws: when the input is larger than ``maxInputBytes`` or cannot be read.
    public static func readStandardInput(stopAtBlankLine: Bool) throws(CredentialHelperError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        defer { for i in buffer.indices { buffer[i] = 0 } }
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in read(0, raw.baseAddress, raw.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CredentialHelperError("cannot read standard input (errno \(errno)).")
            }
            if n == 0 { return data }
            let scanFrom = max(data.startIndex, data.endIndex - 1)
            data.append(contentsOf: buffer[0..<n])
            guard data.count <= maxInputBytes else {
                throw CredentialHelperError("standard input is larger than \(maxInputBytes) bytes; nothing was changed.")
            }
            if stopAtBlankLine, GitCredential.endsCredential(data, scanningFrom: scanFrom) { return data }
        }
    }

    /// Keeps secrets out of core files and away from debuggers of the same user, as the `securestore` tool
    /// does (``ProcessHardening/makeNonDumpable()``); a helper that cannot be hardened says so and stops.
    public static func disableCoreDumps() {
        do throws(ProcessHardening.Failure) {
            try ProcessHardening.makeNonDumpable()
        } catch {
            write(Data("\(error.description)\n".utf8), to: 2)
            exit(70)
        }
    }

    /// Writes all of `data` to a file descriptor (1 or 2), retrying short writes.
    public static func write(_ data: Data, to fd: Int32) {
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, base + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += n
            }
        }
    }
}
