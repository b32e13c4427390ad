// For the Secret Service fault tests (securestore-secretservice-probe): sends a signal (SIGSTOP, SIGKILL) to the
// daemon the moment this process sends a chosen method call, before the call leaves the process, so the daemon
// is stopped or gone when the request reaches it (deterministically, unlike watching the bus from outside).
#ifndef SECURESTORE_CPROBE_H
#define SECURESTORE_CPROBE_H
#include "../../../Backends/SecretService/CSecret/shim.h"
#include <signal.h>
#include <string.h>

typedef struct { char member[64]; int pid; int signal; int remaining; } SSProbeTrap;

static GDBusMessage *ss_probe_filter(GDBusConnection *c, GDBusMessage *m, gboolean incoming, gpointer data) {
    (void)c;
    SSProbeTrap *trap = (SSProbeTrap *)data;
    if (incoming || g_dbus_message_get_message_type(m) != 1 /* G_DBUS_MESSAGE_TYPE_METHOD_CALL */) return m;
    const char *member = g_dbus_message_get_member(m);
    if (member && strcmp(member, trap->member) == 0 && __atomic_fetch_sub(&trap->remaining, 1, __ATOMIC_SEQ_CST) == 1) {
        kill(trap->pid, trap->signal);
    }
    return m;
}

/// Sends `signal` to `pid` when this process sends the `nth` (1-based) call of `member` on the session bus
/// connection it shares with libsecret (load libsecret first: open a store). The trap stays for the process.
static inline int ss_probe_stop_on(const char *member, int nth, int pid, int signal) {
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    if (!bus) return 0;
    SSProbeTrap *trap = (SSProbeTrap *)g_malloc0_n(1, sizeof(SSProbeTrap));
    strncpy(trap->member, member, sizeof trap->member - 1);
    trap->pid = pid;
    trap->signal = signal;
    trap->remaining = nth;
    g_dbus_connection_add_filter(bus, ss_probe_filter, trap, NULL);
    return 1;
}
/// Counts the calls of `member` this process sends from now on (read with ss_probe_count).
static inline SSProbeTrap *ss_probe_count_calls(const char *member) {
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    if (!bus) return NULL;
    SSProbeTrap *trap = (SSProbeTrap *)g_malloc0_n(1, sizeof(SSProbeTrap));
    strncpy(trap->member, member, sizeof trap->member - 1);
    trap->remaining = 0;   // counts down from 0: never reaches the signal
    g_dbus_connection_add_filter(bus, ss_probe_filter, trap, NULL);
    return trap;
}
static inline int ss_probe_count(const SSProbeTrap *trap) { return trap ? -__atomic_load_n(&trap->remaining, __ATOMIC_SEQ_CST) : -1; }
#endif
