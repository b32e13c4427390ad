#pragma once
// prctl(2) is variadic, which Swift cannot call: fixed-argument wrappers for the calls the tool makes.
#include <sys/prctl.h>

/// Makes the process non-dumpable: no core file, no ptrace attach or /proc/PID/mem by the same user.
static inline int cprocess_set_nondumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

/// 1 when the process is dumpable, 0 when not, -1 on error.
static inline int cprocess_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

#include <signal.h>
#include <stddef.h>

/// 1 when `sig` is ignored (its disposition is SIG_IGN, as nohup and background jobs leave some), 0 when not,
/// -1 on error. In C because Swift cannot compare C function pointers such as SIG_IGN.
static inline int cprocess_signal_ignored(int sig) {
    struct sigaction current;
    if (sigaction(sig, NULL, &current) != 0) return -1;
    return (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN ? 1 : 0;
}
