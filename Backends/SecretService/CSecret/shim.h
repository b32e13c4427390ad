// C helpers for the Secret Service backend: everything variadic or macro-based in GLib/libsecret lives here,
// so Swift only calls plain functions.
#ifndef SECURESTORE_CSECRET_SHIM_H
#define SECURESTORE_CSECRET_SHIM_H

#ifdef SS_GLIB_CHECK   // checking glib-subset.h against the real headers
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
#include <gio/gio.h>
#endif
// GLib, GIO and libsecret, called through the pointers loaded at first use. A function not yet used here is
// added there in three places (prototype, SS_GLIB_FUNCTIONS, #define); without them nothing links.
#include "glib-subset.h"
#include <string.h>
#include <stdint.h>
#include <pthread.h>
#include <stdint.h>

#define SS_BUS_NAME "org.freedesktop.secrets"

/// A new, unshared SecretService proxy, with `timeout_ms` as its default D-Bus timeout (so libsecret's own
/// calls are bounded too), and its transfer session when `open_session` (the backend opens it later, with
/// ss_start_open_session, so that its key exchange travels with the first searches). `cancellable` lets the
/// caller bound the set-up, which uses GDBus's 25 s default.
static inline SecretService *ss_open(int timeout_ms, int open_session, GCancellable *cancellable, GError **error) {
    SecretService *s = secret_service_open_sync(SECRET_TYPE_SERVICE, NULL,
                                                open_session ? SECRET_SERVICE_OPEN_SESSION : SECRET_SERVICE_NONE,
                                                cancellable, error);
    if (s) g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(s), timeout_ms);
    return s;
}

/// Whether org.freedesktop.secrets has an owner on the session bus (1/0), -1 on error. Starts nothing.
static inline int ss_service_running(int timeout_ms, GError **error) {
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
    if (!bus) return -1;
    GVariant *r = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                              "org.freedesktop.DBus", "NameHasOwner", g_variant_new("(s)", SS_BUS_NAME),
                                              G_VARIANT_TYPE("(b)"), G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, error);
    g_object_unref(bus);
    if (!r) return -1;
    gboolean owned = FALSE;
    g_variant_get(r, "(b)", &owned);
    g_variant_unref(r);
    return owned ? 1 : 0;
}

static inline GCancellable *ss_cancellable_new(void) { return g_cancellable_new(); }
static inline void ss_cancel(GCancellable *c) { g_cancellable_cancel(c); }
static inline int ss_error_is_cancelled(const GError *e) {
    return e && e->domain == G_IO_ERROR && e->code == G_IO_ERROR_CANCELLED;
}

static inline void ss_unref(gpointer object) { if (object) g_object_unref(object); }
static inline void ss_ref(gpointer object) { if (object) g_object_ref(object); }

static inline GDBusConnection *ss_connection(SecretService *s) { return g_dbus_proxy_get_connection(G_DBUS_PROXY(s)); }

// ---- Errors ----

static inline int ss_error_is_locked(const GError *e) {
    return e && e->domain == SECRET_ERROR && e->code == SECRET_ERROR_IS_LOCKED;
}
static inline int ss_error_is_no_such_object(const GError *e) {
    return e && e->domain == SECRET_ERROR && e->code == SECRET_ERROR_NO_SUCH_OBJECT;
}
static inline int ss_error_is_timeout(const GError *e) {
    return e && ((e->domain == G_IO_ERROR && e->code == G_IO_ERROR_TIMED_OUT)
                 || (e->domain == G_DBUS_ERROR && (e->code == G_DBUS_ERROR_TIMEOUT || e->code == G_DBUS_ERROR_TIMED_OUT
                                                   || e->code == G_DBUS_ERROR_NO_REPLY)));
}
static inline int ss_error_is_service_gone(const GError *e) {
    return e && e->domain == G_DBUS_ERROR
        && (e->code == G_DBUS_ERROR_SERVICE_UNKNOWN || e->code == G_DBUS_ERROR_NAME_HAS_NO_OWNER
            || e->code == G_DBUS_ERROR_NO_SERVER || e->code == G_DBUS_ERROR_DISCONNECTED
            || e->code == G_DBUS_ERROR_UNKNOWN_OBJECT || e->code == G_DBUS_ERROR_UNKNOWN_METHOD);
}
/// The remote D-Bus error name (free with g_free), or NULL.
static inline gchar *ss_error_remote_name(const GError *e) { return e ? g_dbus_error_get_remote_error(e) : NULL; }
static inline const char *ss_error_message(const GError *e) { return e && e->message ? e->message : "unknown error"; }
static inline void ss_error_free(GError *e) { if (e) g_error_free(e); }

// ---- String tables (attributes) ----

static inline GHashTable *ss_strings_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}
static inline void ss_strings_put(GHashTable *t, const char *k, const char *v) {
    g_hash_table_insert(t, g_strdup(k), g_strdup(v));
}
static inline void ss_table_unref(GHashTable *t) { if (t) g_hash_table_unref(t); }

static inline GVariant *ss_attributes_variant(GHashTable *attributes) {
    GVariantBuilder b;
    g_variant_builder_init(&b, G_VARIANT_TYPE("a{ss}"));
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, attributes);
    while (g_hash_table_iter_next(&it, &k, &v)) g_variant_builder_add(&b, "{ss}", (const char *)k, (const char *)v);
    return g_variant_builder_end(&b);
}

/// The entries of an a{ss} variant.
static inline size_t ss_variant_count(GVariant *v) { return g_variant_n_children(v); }
static inline void ss_variant_entry(GVariant *v, size_t i, const char **key, const char **value) {
    g_variant_get_child(v, i, "{&s&s}", key, value);
}
static inline void ss_variant_unref(GVariant *v) { if (v) g_variant_unref(v); }

// ---- Which program is the Secret Service ----

/// The process id of the owner of org.freedesktop.secrets (0 when none or on error). Starts nothing.
static inline unsigned ss_service_pid(int timeout_ms) {
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    if (!bus) return 0;
    GVariant *r = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                              "GetConnectionUnixProcessID", g_variant_new("(s)", SS_BUS_NAME),
                                              G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, NULL);
    g_object_unref(bus);
    if (!r) return 0;
    guint32 pid = 0;
    g_variant_get(r, "(u)", &pid);
    g_variant_unref(r);
    return pid;
}

/// Whether the bus could start a Secret Service by activation (1/0, -1 on error). Starts nothing.
static inline int ss_service_activatable(int timeout_ms) {
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    if (!bus) return -1;
    GVariant *r = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                              "ListActivatableNames", NULL, G_VARIANT_TYPE("(as)"),
                                              G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, NULL);
    g_object_unref(bus);
    if (!r) return -1;
    GVariant *names = g_variant_get_child_value(r, 0);
    int found = 0;
    for (size_t i = 0; i < g_variant_n_children(names) && !found; i++) {
        const char *name = NULL;
        g_variant_get_child(names, i, "&s", &name);
        found = name && strcmp(name, SS_BUS_NAME) == 0;
    }
    g_variant_unref(names);
    g_variant_unref(r);
    return found;
}

// ---- Secrets ----

static inline SecretValue *ss_value_new(const void *bytes, size_t length) {
    return secret_value_new(bytes ? (const gchar *)bytes : "", (gssize)length, "application/octet-stream");
}
static inline void ss_value_unref(SecretValue *v) { if (v) secret_value_unref(v); }
static inline const void *ss_value_bytes(SecretValue *v, size_t *length) {
    gsize n = 0;
    const gchar *p = secret_value_get(v, &n);
    *length = n;
    return p;
}
static inline void ss_strv_free(gchar **v) { g_strfreev(v); }
static inline void ss_free(gpointer p) { g_free(p); }

#endif
