public import SecureStoreCore

/// The tool's exit statuses: the documented table (help, README) and the one mapping from store errors.
public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let notFound: Int32 = 1
    public static let usage: Int32 = 2
    public static let duplicate: Int32 = 3
    public static let authFailed: Int32 = 4
    public static let corrupted: Int32 = 5
    public static let unavailable: Int32 = 6
    /// The store cannot be written: a PostgreSQL standby, a read-only SQLite file or mount.
    public static let readOnly: Int32 = 7
    /// A COMMIT that may have happened: committed on the primary but not confirmed by a synchronous standby, or
    /// the connection was lost during COMMIT. Check before retrying.
    public static let outcomeUnknown: Int32 = 8
    public static let other: Int32 = 70
    /// Standard input could not be read, or the output a command exists to produce could not be written (EX_IOERR).
    public static let io: Int32 = 74

    /// Every status with its meaning, in order (help text and README).
    public static let table: [(code: Int32, meaning: String)] = [
        (ok, "ok"),
        (notFound, "not found"),
        (usage, "usage or bad parameter (also: a secret over 1 MiB on standard input)"),
        (duplicate, "duplicate item"),
        (authFailed, "authentication failed"),
        (corrupted, "data corrupted or tampered"),
        (unavailable, "backend unavailable or locked"),
        (readOnly, "read-only (a standby or a read-only store)"),
        (outcomeUnknown, "outcome unknown (committed on the primary, not confirmed by a synchronous standby, "
            + "or the connection was lost during COMMIT): check before retrying"),
        (other, "anything else"),
        (io, "standard input could not be read (closed, I/O error) or standard output could not be written "
            + "(broken pipe, full disk, I/O error); a command that changed the store exits 0 once the change is "
            + "committed, even when its closing report line cannot be written"),
    ]

    /// The exit status of a store error (the one mapping; add new error codes here).
    public static func code(for error: SecureStoreError.Code) -> Int32 {
        switch error {
        case .itemNotFound: notFound
        case .param, .noSuchAttribute, .noSuchClass, .missingEntitlement: usage
        case .duplicateItem: duplicate
        case .authFailed: authFailed
        case .decode: corrupted
        case .notAvailable, .interactionNotAllowed: unavailable
        case .readOnly: readOnly
        case .outcomeUnknown: outcomeUnknown
        default: other
        }
    }
}
