import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether this process can lock memory. Keys live in `sodium_malloc` memory, which libsodium locks with
/// mlock(2) so it is never swapped, but libsodium goes on silently when mlock fails (a non-root process under
/// `ulimit -l 0`, a container's low limit): keys may then reach swap. This probe finds that out once, so the
/// tool can say it instead of promising what does not hold.
package enum MemoryLock {
    /// Why memory cannot be locked here (nil when it can): one page is locked and unlocked to find out.
    package static let problem: String? = {
        let size = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        // The limit first: a process whose mlock is intercepted (ThreadSanitizer makes it a no-op that succeeds)
        // would otherwise be told nothing. Root is not bound by the limit.
        var limit = rlimit()
        if geteuid() != 0, getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(size) {
            return "memory cannot be locked in this process (its locked-memory limit is \(limit.rlim_cur) bytes); keys may "
                + "be written to swap. Raise the limit (ulimit -l, or LimitMEMLOCK= for a service), or turn swap off or encrypt it."
        }
        let page = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: size)
        defer { page.deallocate() }
        guard mlock(page, size) != 0 else {
            munlock(page, size)
            return nil
        }
        let reason = String(cString: strerror(errno))
        return "memory cannot be locked in this process (mlock: \(reason)); keys may be written to swap. "
            + "Raise the limit (ulimit -l, or LimitMEMLOCK= for a service), or turn swap off or encrypt it."
    }()
}
