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

/// Properties for CreateItem: Label and Attributes.
static inline GHashTable *ss_item_properties(const char *label, GHashTable *attributes) {
    GHashTable *p = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_variant_unref);
    g_hash_table_insert(p, g_strdup("org.freedesktop.Secret.Item.Label"), g_variant_ref_sink(g_variant_new_string(label)));
    g_hash_table_insert(p, g_strdup("org.freedesktop.Secret.Item.Attributes"),
                        g_variant_ref_sink(ss_attributes_variant(attributes)));
    return p;
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
static inline SecretValue *ss_secrets_lookup(GHashTable *secrets, const char *path) {
    return (SecretValue *)g_hash_table_lookup(secrets, path);
}
static inline GHashTable *ss_get_secrets(SecretService *s, char **paths, GError **error) {
    return secret_service_get_secrets_for_dbus_paths_sync(s, (const gchar **)paths, NULL, error);
}

// ---- Plain D-Bus calls on the service's connection, with explicit timeouts and no auto-start ----

/// Properties.Get; returns the unboxed value (unref it) or NULL.
static inline GVariant *ss_get_property(SecretService *s, const char *path, const char *iface, const char *name,
                                        int timeout_ms, GError **error) {
    GVariant *r = g_dbus_connection_call_sync(ss_connection(s), SS_BUS_NAME, path, "org.freedesktop.DBus.Properties",
                                              "Get", g_variant_new("(ss)", iface, name), G_VARIANT_TYPE("(v)"),
                                              G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);
    if (!r) return NULL;
    GVariant *v = NULL;
    g_variant_get(r, "(v)", &v);
    g_variant_unref(r);
    return v;
}

/// 1 locked, 0 unlocked, -1 error.
static inline int ss_get_locked(SecretService *s, const char *path, const char *iface, int timeout_ms, GError **error) {
    GVariant *v = ss_get_property(s, path, iface, "Locked", timeout_ms, error);
    if (!v) return -1;
    int locked = g_variant_is_of_type(v, G_VARIANT_TYPE_BOOLEAN) ? (g_variant_get_boolean(v) ? 1 : 0) : 1;
    g_variant_unref(v);
    return locked;
}

/// The item's Attributes as a GVariant a{ss} (unref it) or NULL.
static inline GVariant *ss_get_item_attributes(SecretService *s, const char *path, int timeout_ms, GError **error) {
    GVariant *v = ss_get_property(s, path, "org.freedesktop.Secret.Item", "Attributes", timeout_ms, error);
    if (v && !g_variant_is_of_type(v, G_VARIANT_TYPE("a{ss}"))) {
        g_variant_unref(v);
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "Attributes property is not a{ss}");
        return NULL;
    }
    return v;
}
static inline size_t ss_variant_count(GVariant *v) { return g_variant_n_children(v); }
static inline void ss_variant_entry(GVariant *v, size_t i, const char **key, const char **value) {
    g_variant_get_child(v, i, "{&s&s}", key, value);
}
static inline void ss_variant_unref(GVariant *v) { if (v) g_variant_unref(v); }

static inline int ss_reply_ok(GVariant *r) {
    if (!r) return 0;
    g_variant_unref(r);
    return 1;
}

static inline int ss_set_item_attributes(SecretService *s, const char *path, GHashTable *attributes, int timeout_ms,
                                         GError **error) {
    return ss_reply_ok(g_dbus_connection_call_sync(
        ss_connection(s), SS_BUS_NAME, path, "org.freedesktop.DBus.Properties", "Set",
        g_variant_new("(ssv)", "org.freedesktop.Secret.Item", "Attributes", ss_attributes_variant(attributes)),
        NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error));
}

static inline int ss_set_item_label(SecretService *s, const char *path, const char *label, int timeout_ms,
                                    GError **error) {
    return ss_reply_ok(g_dbus_connection_call_sync(
        ss_connection(s), SS_BUS_NAME, path, "org.freedesktop.DBus.Properties", "Set",
        g_variant_new("(ssv)", "org.freedesktop.Secret.Item", "Label", g_variant_new_string(label)),
        NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error));
}

static inline int ss_set_item_secret(SecretService *s, const char *path, SecretValue *value, int timeout_ms,
                                     GError **error) {
    GVariant *encoded = secret_service_encode_dbus_secret(s, value);
    if (!encoded) {
        g_set_error_literal(error, SECRET_ERROR, SECRET_ERROR_PROTOCOL, "could not encode the secret for the session");
        return 0;
    }
    g_variant_ref_sink(encoded);
    GVariant *r = g_dbus_connection_call_sync(ss_connection(s), SS_BUS_NAME, path, "org.freedesktop.Secret.Item",
                                              "SetSecret", g_variant_new("(@(oayays))", encoded), NULL,
                                              G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);
    g_variant_unref(encoded);
    return ss_reply_ok(r);
}

static inline int ss_search(SecretService *s, GHashTable *attributes, gchar ***unlocked, gchar ***locked,
                            GError **error) {
    return secret_service_search_for_dbus_paths_sync(s, NULL, attributes, NULL, unlocked, locked, error);
}
static inline void ss_strv_free(gchar **v) { g_strfreev(v); }
static inline void ss_free(gpointer p) { g_free(p); }

// ---- Calls in flight together: started at once, replies gathered on a private main context ----
//
// ss_batch_begin makes a new GMainContext this thread's default, so the replies of the calls started
// after it are dispatched there; ss_call_wait iterates it until a call is done. Every started call is
// waited for before ss_batch_end (each has a D-Bus timeout, so it always completes).

typedef struct { GVariant *reply; GError *error; int done; } SSCall;

static void ss_call_finished(GObject *source, GAsyncResult *result, gpointer data) {
    SSCall *c = (SSCall *)data;
    c->reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), result, &c->error);
    c->done = 1;
}

static inline GMainContext *ss_batch_begin(void) {
    GMainContext *c = g_main_context_new();
    g_main_context_push_thread_default(c);
    return c;
}
static inline void ss_batch_end(GMainContext *c) {
    g_main_context_pop_thread_default(c);
    g_main_context_unref(c);
}
static inline SSCall *ss_call_new(void) { return g_new0(SSCall, 1); }
static inline void ss_call_wait(GMainContext *c, SSCall *call) {
    while (!call->done) g_main_context_iteration(c, TRUE);
}
static inline void ss_call_free(SSCall *c) {
    if (!c) return;
    if (c->reply) g_variant_unref(c->reply);
    if (c->error) g_error_free(c->error);
    g_free(c);
}
static inline int ss_call_ok(SSCall *c) { return c->reply != NULL; }
/// The call's error, handed over to the caller (free with ss_error_free).
static inline GError *ss_call_take_error(SSCall *c) {
    GError *e = c->error;
    c->error = NULL;
    return e;
}

/// Whether `path` is a D-Bus object path ("/" or "/" elements of [A-Za-z0-9_] joined by "/").
static inline int ss_is_object_path(const char *path) {
    if (!path || path[0] != '/') return 0;
    if (path[1] == '\0') return 1;
    size_t element = 0;
    for (const char *p = path + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            if (element == 0) return 0;   // empty element, or a trailing "/"
            if (*p == '\0') return 1;
            element = 0;
        } else if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_') {
            element++;
        } else {
            return 0;
        }
    }
}

/// Starts a call whose reply is dispatched to the thread's default context. A path that is not an object
/// path finishes the call at once with an error (GDBus would refuse it without ever calling back).
static inline void ss_start(SecretService *s, const char *path, const char *iface, const char *method, GVariant *params,
                            const char *reply_type, int timeout_ms, SSCall *call) {
    if (!ss_is_object_path(path)) {
        if (params) g_variant_unref(g_variant_ref_sink(params));
        g_set_error_literal(&call->error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "not a D-Bus object path");
        call->done = 1;
        return;
    }
    g_dbus_connection_call(ss_connection(s), SS_BUS_NAME, path, iface, method, params, G_VARIANT_TYPE(reply_type),
                           G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, ss_call_finished, call);
}

static void ss_session_opened(GObject *source, GAsyncResult *result, gpointer data) {
    SSCall *c = (SSCall *)data;
    if (secret_service_ensure_session_finish((SecretService *)source, result, &c->error)) {
        c->reply = g_variant_ref_sink(g_variant_new("()"));
    }
    c->done = 1;
}
/// Opens the transfer session (libsecret's OpenSession with its Diffie-Hellman key exchange, bounded by the
/// proxy's default timeout). The key pair is made here, before the call is sent; the shared key when the
/// reply is dispatched.
static inline void ss_start_open_session(SecretService *s, SSCall *call) {
    secret_service_ensure_session(s, NULL, ss_session_opened, call);
}
static inline int ss_has_session(SecretService *s) { return secret_service_get_session_dbus_path(s) != NULL; }

/// Service.ReadAlias(alias) → the collection's path ("/" when the alias names none).
static inline void ss_start_read_alias(SecretService *s, const char *alias, int timeout_ms, SSCall *call) {
    ss_start(s, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias", g_variant_new("(s)", alias),
             "(o)", timeout_ms, call);
}
/// The path of a finished ss_start_read_alias (valid while the call lives).
static inline const char *ss_call_object_path(SSCall *c) {
    const char *path = NULL;
    g_variant_get(c->reply, "(&o)", &path);
    return path;
}

/// Properties.Get(Collection.Locked).
static inline void ss_start_get_locked(SecretService *s, const char *collection, int timeout_ms, SSCall *call) {
    ss_start(s, collection, "org.freedesktop.DBus.Properties", "Get",
             g_variant_new("(ss)", "org.freedesktop.Secret.Collection", "Locked"), "(v)", timeout_ms, call);
}
/// 1 locked, 0 unlocked (from a finished ss_start_get_locked).
static inline int ss_call_locked(SSCall *c) {
    GVariant *v = NULL;
    g_variant_get(c->reply, "(v)", &v);
    int locked = g_variant_is_of_type(v, G_VARIANT_TYPE_BOOLEAN) ? (g_variant_get_boolean(v) ? 1 : 0) : 1;
    g_variant_unref(v);
    return locked;
}

/// Properties.Get(Item.Attributes).
static inline void ss_start_get_attributes(SecretService *s, const char *path, int timeout_ms, SSCall *call) {
    ss_start(s, path, "org.freedesktop.DBus.Properties", "Get",
             g_variant_new("(ss)", "org.freedesktop.Secret.Item", "Attributes"), "(v)", timeout_ms, call);
}
/// The a{ss} of a finished ss_start_get_attributes (unref it), or NULL when it has another type.
static inline GVariant *ss_call_attributes(SSCall *c) {
    GVariant *v = NULL;
    g_variant_get(c->reply, "(v)", &v);
    if (!g_variant_is_of_type(v, G_VARIANT_TYPE("a{ss}"))) {
        g_variant_unref(v);
        return NULL;
    }
    return v;
}

/// Service.SearchItems(attributes) → (unlocked, locked).
static inline void ss_start_search(SecretService *s, GHashTable *attributes, int timeout_ms, SSCall *call) {
    ss_start(s, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "SearchItems",
             g_variant_new("(@a{ss})", ss_attributes_variant(attributes)), "(aoao)", timeout_ms, call);
}
/// The paths of a finished search: `which` 0 unlocked, 1 locked.
static inline size_t ss_call_path_count(SSCall *c, int which) {
    GVariant *a = g_variant_get_child_value(c->reply, which);
    size_t n = g_variant_n_children(a);
    g_variant_unref(a);
    return n;
}
/// The i-th path (valid while the call lives).
static inline const char *ss_call_path_at(SSCall *c, int which, size_t i) {
    GVariant *a = g_variant_get_child_value(c->reply, which);
    const char *p = NULL;
    g_variant_get_child(a, i, "&o", &p);
    g_variant_unref(a);
    return p;
}

/// Service.GetSecrets(paths, session): every secret in one call.
static inline void ss_start_get_secrets(SecretService *s, const char *const *paths, int timeout_ms, SSCall *call) {
    ss_start(s, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "GetSecrets",
             g_variant_new("(^aoo)", paths, secret_service_get_session_dbus_path(s)), "(a{o(oayays)})", timeout_ms,
             call);
}
static inline size_t ss_call_secret_count(SSCall *c) {
    GVariant *d = g_variant_get_child_value(c->reply, 0);
    size_t n = g_variant_n_children(d);
    g_variant_unref(d);
    return n;
}
/// The i-th secret of a finished GetSecrets, decoded for the session (unref it; NULL if it cannot be
/// decoded), and its item's path in `*path` (valid while the call lives).
static inline SecretValue *ss_call_secret_at(SecretService *s, SSCall *c, size_t i, const char **path) {
    GVariant *d = g_variant_get_child_value(c->reply, 0);
    GVariant *entry = g_variant_get_child_value(d, i);
    GVariant *secret = NULL;
    g_variant_get(entry, "{&o@(oayays)}", path, &secret);
    SecretValue *value = secret_service_decode_dbus_secret(s, secret);
    g_variant_unref(secret);
    g_variant_unref(entry);
    g_variant_unref(d);
    return value;
}

/// Item.Delete → the prompt path ("/" when none was needed).
static inline void ss_start_delete(SecretService *s, const char *path, int timeout_ms, SSCall *call) {
    ss_start(s, path, "org.freedesktop.Secret.Item", "Delete", NULL, "(o)", timeout_ms, call);
}
/// Whether a finished Delete needed no prompt.
static inline int ss_call_no_prompt(SSCall *c) {
    const char *prompt = NULL;
    g_variant_get(c->reply, "(&o)", &prompt);
    return prompt && strcmp(prompt, "/") == 0;
}

/// Properties.Set(Item.Attributes / Item.Label) and Item.SetSecret, started without waiting.
static inline void ss_start_set_attributes(SecretService *s, const char *path, GHashTable *attributes, int timeout_ms,
                                           SSCall *call) {
    ss_start(s, path, "org.freedesktop.DBus.Properties", "Set",
             g_variant_new("(ssv)", "org.freedesktop.Secret.Item", "Attributes", ss_attributes_variant(attributes)),
             "()", timeout_ms, call);
}
static inline void ss_start_set_label(SecretService *s, const char *path, const char *label, int timeout_ms, SSCall *call) {
    ss_start(s, path, "org.freedesktop.DBus.Properties", "Set",
             g_variant_new("(ssv)", "org.freedesktop.Secret.Item", "Label", g_variant_new_string(label)), "()",
             timeout_ms, call);
}
/// 0 when the secret cannot be encoded for the session (nothing started).
static inline int ss_start_set_secret(SecretService *s, const char *path, SecretValue *value, int timeout_ms,
                                      SSCall *call) {
    GVariant *encoded = secret_service_encode_dbus_secret(s, value);
    if (!encoded) return 0;
    g_variant_ref_sink(encoded);
    ss_start(s, path, "org.freedesktop.Secret.Item", "SetSecret", g_variant_new("(@(oayays))", encoded), "()",
             timeout_ms, call);
    g_variant_unref(encoded);
    return 1;
}

// ---- Following item changes: a GDBus filter that notes ItemChanged / ItemDeleted of one collection ----
//
// The filter runs on GDBus's worker thread for every incoming message, in the order the messages arrive,
// before any reply after them is handed to a caller; so when a reply is read, every change signal the
// daemon sent before it has been noted. ss_watch_changed_since tells whether an item may have changed
// since a given epoch (or the daemon changed owner, after which every path may mean another item).

typedef struct {
    gint refs;
    pthread_mutex_t lock;
    uint64_t epoch;
    GHashTable *changed;   // path → epoch (uint64_t *) of its last change
    uint64_t floor;         // every item counts as changed at this epoch (set when `changed` is emptied)
    int lost;              // the daemon went away or was replaced
    gchar *collection;
    GDBusConnection *connection;
    guint filter, items_signal, owner_signal;
} SSWatch;

static void ss_watch_unref(gpointer data) {
    SSWatch *w = (SSWatch *)data;
    if (__atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    g_hash_table_unref(w->changed);
    g_free(w->collection);
    pthread_mutex_destroy(&w->lock);
    g_free(w);
}

static GDBusMessage *ss_watch_filter(GDBusConnection *c, GDBusMessage *m, gboolean incoming, gpointer data) {
    (void)c;
    SSWatch *w = (SSWatch *)data;
    if (!incoming || g_dbus_message_get_message_type(m) != G_DBUS_MESSAGE_TYPE_SIGNAL) return m;
    const char *iface = g_dbus_message_get_interface(m), *member = g_dbus_message_get_member(m);
    const char *path = g_dbus_message_get_path(m);
    GVariant *body = g_dbus_message_get_body(m);
    if (!iface || !member || !path) return m;
    if (strcmp(iface, "org.freedesktop.Secret.Collection") == 0 && strcmp(path, w->collection) == 0
        && (strcmp(member, "ItemChanged") == 0 || strcmp(member, "ItemDeleted") == 0)) {
        const char *item = NULL;
        if (body && g_variant_is_of_type(body, G_VARIANT_TYPE("(o)"))) g_variant_get(body, "(&o)", &item);
        pthread_mutex_lock(&w->lock);
        w->epoch++;
        if (item) {
            uint64_t *e = g_new0(uint64_t, 1);
            *e = w->epoch;
            g_hash_table_replace(w->changed, g_strdup(item), e);
            if (g_hash_table_size(w->changed) > 50000) {   // bounded: forget the paths, count everything as changed
                g_hash_table_remove_all(w->changed);
                w->floor = w->epoch;
            }
        } else {
            w->lost = 1;
        }
        pthread_mutex_unlock(&w->lock);
    } else if (strcmp(iface, "org.freedesktop.DBus") == 0 && strcmp(member, "NameOwnerChanged") == 0) {
        const char *name = NULL;
        if (body && g_variant_is_of_type(body, G_VARIANT_TYPE("(sss)"))) g_variant_get(body, "(&s&s&s)", &name, NULL, NULL);
        if (name && strcmp(name, SS_BUS_NAME) == 0) {
            pthread_mutex_lock(&w->lock);
            w->lost = 1;
            pthread_mutex_unlock(&w->lock);
        }
    }
    return m;
}

static void ss_watch_ignore(GDBusConnection *c, const gchar *s, const gchar *p, const gchar *i, const gchar *n, GVariant *v,
                            gpointer d) {
    (void)c; (void)s; (void)p; (void)i; (void)n; (void)v; (void)d;
}

/// Starts following the items of `collection`: match rules for its change signals and for the daemon's
/// name owner (sent before any later call of this connection, so in force for every later reply).
static inline SSWatch *ss_watch_new(SecretService *s, const char *collection) {
    SSWatch *w = g_new0(SSWatch, 1);
    w->refs = 2;   // this handle and the filter
    pthread_mutex_init(&w->lock, NULL);
    w->changed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    w->collection = g_strdup(collection);
    w->connection = ss_connection(s);
    w->filter = g_dbus_connection_add_filter(w->connection, ss_watch_filter, w, ss_watch_unref);
    w->items_signal = g_dbus_connection_signal_subscribe(w->connection, SS_BUS_NAME, "org.freedesktop.Secret.Collection",
                                                         NULL, collection, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                         ss_watch_ignore, NULL, NULL);
    w->owner_signal = g_dbus_connection_signal_subscribe(w->connection, "org.freedesktop.DBus", "org.freedesktop.DBus",
                                                         "NameOwnerChanged", "/org/freedesktop/DBus", SS_BUS_NAME,
                                                         G_DBUS_SIGNAL_FLAGS_NONE, ss_watch_ignore, NULL, NULL);
    return w;
}
/// Stops following (the filter's data is freed once GDBus no longer uses it). Call while the service lives.
static inline void ss_watch_free(SSWatch *w) {
    if (!w) return;
    g_dbus_connection_signal_unsubscribe(w->connection, w->items_signal);
    g_dbus_connection_signal_unsubscribe(w->connection, w->owner_signal);
    g_dbus_connection_remove_filter(w->connection, w->filter);
    ss_watch_unref(w);
}
/// The current epoch (read before sending a call whose reply will be remembered).
static inline uint64_t ss_watch_epoch(SSWatch *w) {
    pthread_mutex_lock(&w->lock);
    uint64_t e = w->epoch;
    pthread_mutex_unlock(&w->lock);
    return e;
}
/// Whether the item at `path` may have changed after `epoch` (also when the daemon went away).
static inline int ss_watch_changed_since(SSWatch *w, const char *path, uint64_t epoch) {
    pthread_mutex_lock(&w->lock);
    uint64_t *e = (uint64_t *)g_hash_table_lookup(w->changed, path);
    int changed = w->lost || epoch < w->floor || (e && *e > epoch);
    pthread_mutex_unlock(&w->lock);
    return changed;
}
#endif
