import Glibc
import CProcessControl

/// Process-wide protection for programs that hold secrets, opt-in: the `securestore` tool and the credential
/// helpers call ``makeNonDumpable()`` before they read an argument or a secret; a program using the library
/// decides for itself (a core dump of any process holds whatever secrets it has read).
public enum ProcessHardening {
    /// Why the process could not be hardened (the system call and its error).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// No core file (`RLIMIT_CORE` 0) and `PR_SET_DUMPABLE` 0: a crash leaves no core holding a secret, and
    /// other processes of the same user cannot attach a debugger or read `/proc/PID/mem` (root still can).
    public static func makeNonDumpable() throws(Failure) {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        guard setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) == 0 else {
            throw Failure(description: "cannot disable core dumps (setrlimit RLIMIT_CORE): \(String(cString: strerror(errno))).")
        }
        guard cprocess_set_nondumpable() == 0 else {
            throw Failure(description: "cannot make the process non-dumpable (prctl PR_SET_DUMPABLE): "
                + "\(String(cString: strerror(errno))).")
        }
    }

    /// Whether the process is non-dumpable now (`PR_GET_DUMPABLE` is 0).
    public static var isNonDumpable: Bool { cprocess_dumpable() == 0 }

    /// Whether `signal` is ignored now (its disposition is `SIG_IGN`): a signal ignored when a program started
    /// (nohup, a background job) stays ignored, so a handler that restores the terminal is not installed for it.
    public static func isIgnored(signal: Int32) -> Bool { cprocess_signal_ignored(signal) == 1 }
}
