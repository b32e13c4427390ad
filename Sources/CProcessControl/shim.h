#pragma once
// prctl(2) is variadic, which Swift cannot call: fixed-argument wrappers for the calls the tool makes.
#include <sys/prctl.h>

/// Makes the process non-dumpable: no core file, no ptrace attach or /proc/PID/mem by the same user.
static inline int cprocess_set_nondumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

/// 1 when the process is dumpable, 0 when not, -1 on error.
static inline int cprocess_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
