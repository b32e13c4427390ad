#if canImport(Glibc)
import Glibc

/// The random bytes of new persistent references, drawn from the kernel 1 KiB (64 references) at a time,
/// in four `getentropy` calls.
///
/// A reference must be unique among every process sharing a store (SQLite and PostgreSQL stores are shared
/// between processes; each process draws its own references), so a process never hands out bytes another
/// process may also hand out. The only way two processes can hold the same buffered bytes is `fork`, and a
/// forked child always finds the buffer empty, by two independent means:
/// - the buffer lives in a page marked `MADV_WIPEONFORK`: the kernel gives the child that page zeroed, so
///   its count of unused bytes is 0 (whatever makes the copy: `fork()`, `clone` without `CLONE_VM`, a raw
///   system call; a `vfork`/`posix_spawn` child shares the memory and runs no Swift code before `exec`);
/// - a `pthread_atfork` child handler sets the count to 0 as well (for kernels older than Linux 4.14, which
///   refuse the advice), and the prepare/parent/child handlers hold the lock across `fork`, so a child never
///   inherits it held.
/// Bytes are zeroed in the buffer as they are handed out. Where the page cannot be set up, every reference
/// is one `getentropy` call, as without the buffer.
enum ReferenceSource {
    /// Bytes kept per refill.
    static let batch = 1024
    private static let header = 64

    private struct Pool: @unchecked Sendable {
        /// The page: the count of unused bytes (an `Int`) at offset 0, the bytes from ``header``.
        let page: UnsafeMutableRawPointer
        let lock: UnsafeMutablePointer<pthread_mutex_t>
    }

    private static let pool: Pool? = {
        let size = max(Int(sysconf(Int32(_SC_PAGESIZE))), header + batch)
        guard let page = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              page != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        // Not in a core dump either; the advice that matters is WIPEONFORK (or the handler below).
        _ = madvise(page, size, MADV_DONTDUMP)
        _ = madvise(page, size, MADV_WIPEONFORK)
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        guard pthread_mutex_init(lock, nil) == 0 else { return nil }
        let pool = Pool(page: page, lock: lock)
        installed = pool
        guard pthread_atfork(
            { _ = installed.map { pthread_mutex_lock($0.lock) } },
            { _ = installed.map { pthread_mutex_unlock($0.lock) } },
            { if let pool = installed { pool.page.storeBytes(of: 0, as: Int.self); pthread_mutex_unlock(pool.lock) } }
        ) == 0 else { return nil }
        return pool
    }()

    /// The pool as the fork handlers see it (set once, before they are registered).
    nonisolated(unsafe) private static var installed: Pool?

    /// 16 random bytes no other process is handed, or `nil` when the system gives none.
    static func draw() -> (UInt64, UInt64)? {
        guard let pool else { return entropy() }
        pthread_mutex_lock(pool.lock)
        defer { pthread_mutex_unlock(pool.lock) }
        var unused = pool.page.load(as: Int.self)
        let bytes = pool.page + header
        if unused < 16 {
            // `getentropy` gives at most 256 bytes a call (Glibc's module does not export `getrandom`).
            for chunk in stride(from: 0, to: batch, by: 256) where getentropy(bytes + chunk, 256) != 0 {
                pool.page.storeBytes(of: 0, as: Int.self)
                return entropy()
            }
            unused = batch
        }
        let at = bytes + (batch - unused)
        let words = (at.loadUnaligned(as: UInt64.self), (at + 8).loadUnaligned(as: UInt64.self))
        at.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
        pool.page.storeBytes(of: unused - 16, as: Int.self)
        return words
    }

    /// One `getentropy` call for 16 bytes.
    private static func entropy() -> (UInt64, UInt64)? {
        var words: (UInt64, UInt64) = (0, 0)
        let filled = withUnsafeMutableBytes(of: &words) { getentropy($0.baseAddress, $0.count) } == 0
        return filled ? words : nil
    }
}
#endif
