// D-Bus calls started together and gathered on a private main context, and the prompts a provider may
// answer a write with (KeePassXC answers every CreateItem and Delete with one).
#ifndef SECURESTORE_CSECRET_CALLS_H
#define SECURESTORE_CSECRET_CALLS_H

#include "shim.h"

// ---- Calls in flight together: started at once, replies gathered on a private main context ----
//
// ss_batch_begin makes a new GMainContext this thread's default, so the replies of the calls started
// after it are dispatched there; ss_call_wait iterates it until a call is done. Every started call is
// waited for before ss_batch_end (each has a D-Bus timeout, so it always completes).

/// One call: its reply or error once `done`; `sent` once handed to GDBus (a call never sent cannot have
/// reached the daemon); `cancellable` is the batch's, so the first call that times out ends the others at once.
/// A prompt's `Completed` signal, when the call is one, lands in `completed`/`dismissed`/`result`.
typedef struct {
    GVariant *reply; GError *error; int done; int sent;
    GCancellable *cancellable;
    guint signal; int completed; int dismissed; GVariant *result;
} SSCall;

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
static inline SSCall *ss_call_new(GCancellable *cancellable) {
    SSCall *c = g_new0(SSCall, 1);
    c->cancellable = cancellable;
    return c;
}
static inline void ss_call_wait(GMainContext *c, SSCall *call) {
    while (!call->done) g_main_context_iteration(c, TRUE);
}
static inline void ss_call_free(SSCall *c) {
    if (!c) return;
    if (c->result) g_variant_unref(c->result);
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
    call->sent = 1;
    g_dbus_connection_call(ss_connection(s), SS_BUS_NAME, path, iface, method, params, G_VARIANT_TYPE(reply_type),
                           G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, call->cancellable, ss_call_finished, call);
}

static void ss_session_opened(GObject *source, GAsyncResult *result, gpointer data) {
    SSCall *c = (SSCall *)data;
    if (secret_service_ensure_session_finish((SecretService *)source, result, &c->error)) {
        c->reply = g_variant_ref_sink(g_variant_new("()"));
    }
    c->done = 1;
}
/// Opens libsecret's transfer session (OpenSession with its Diffie-Hellman key exchange, bounded by the
/// proxy's default timeout).
static inline void ss_start_open_session(SecretService *s, SSCall *call) {
    call->sent = 1;
    secret_service_ensure_session(s, call->cancellable, ss_session_opened, call);
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

/// Whether a finished call timed out, got no reply (the daemon stopped answering or died after the request was
/// sent), or was cancelled after being sent: for a write, its outcome is unknown.
static inline int ss_call_unanswered(const SSCall *c) {
    const GError *e = c->error;
    if (!e || !c->sent) return 0;
    return ss_error_is_timeout(e) || ss_error_is_cancelled(e)
        || (e->domain == G_DBUS_ERROR && (e->code == G_DBUS_ERROR_NO_REPLY || e->code == G_DBUS_ERROR_DISCONNECTED));
}

/// Whether a finished call's daemon (or bus) went away before answering, rather than staying silent.
static inline int ss_call_gone(const SSCall *c) {
    const GError *e = c->error;
    return e && e->domain == G_DBUS_ERROR && (e->code == G_DBUS_ERROR_NO_REPLY || e->code == G_DBUS_ERROR_DISCONNECTED);
}

/// Collection.CreateItem({Label, Attributes}, secret encoded for libsecret's session, replace = false) → (item, prompt).
/// 0 when the secret cannot be encoded for the session (nothing started).
static inline int ss_start_create_item(SecretService *s, const char *collection, const char *label, GHashTable *attributes,
                                       SecretValue *value, int timeout_ms, SSCall *call) {
    GVariant *secret = secret_service_encode_dbus_secret(s, value);
    if (!secret) return 0;
    g_variant_ref_sink(secret);
    GVariantBuilder b;
    g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
    g_variant_builder_add(&b, "{sv}", "org.freedesktop.Secret.Item.Label", g_variant_new_string(label));
    g_variant_builder_add(&b, "{sv}", "org.freedesktop.Secret.Item.Attributes", ss_attributes_variant(attributes));
    ss_start(s, collection, "org.freedesktop.Secret.Collection", "CreateItem",
             g_variant_new("(a{sv}@(oayays)b)", &b, secret, 0), "(oo)", timeout_ms, call);
    g_variant_unref(secret);
    return 1;
}
/// The first or second object path of a finished call answering (oo) or (o).
static inline const char *ss_call_path(SSCall *c, size_t i) {
    GVariant *v = g_variant_get_child_value(c->reply, i);
    const char *p = g_variant_get_string(v, NULL);
    g_variant_unref(v);   // the reply keeps the string alive
    return p;
}

// ---- Prompts ----
//
// A provider may answer a write with a prompt object instead of doing it: gnome-keyring for an action that
// needs the user, KeePassXC for every CreateItem and Delete (which it then completes at once when no
// confirmation is configured). Prompt("") asks it to go ahead; the outcome is the prompt's Completed signal.

static void ss_prompt_completed(GDBusConnection *c, const gchar *sender, const gchar *path, const gchar *iface,
                                const gchar *signal, GVariant *params, gpointer data) {
    (void)c; (void)sender; (void)path; (void)iface; (void)signal;
    SSCall *call = (SSCall *)data;
    if (call->completed || !g_variant_is_of_type(params, G_VARIANT_TYPE("(bv)"))) return;
    gboolean dismissed = FALSE;
    g_variant_get(params, "(bv)", &dismissed, &call->result);
    call->dismissed = dismissed ? 1 : 0;
    call->completed = 1;
}

/// Subscribes to the prompt's Completed signal (delivered on this thread's batch context), then calls Prompt("").
static inline void ss_start_prompt(SecretService *s, const char *prompt, int timeout_ms, SSCall *call) {
    if (ss_is_object_path(prompt)) {
        call->signal = g_dbus_connection_signal_subscribe(ss_connection(s), NULL, "org.freedesktop.Secret.Prompt", "Completed",
                                                          prompt, NULL, G_DBUS_SIGNAL_FLAGS_NONE, ss_prompt_completed, call, NULL);
    }
    ss_start(s, prompt, "org.freedesktop.Secret.Prompt", "Prompt", g_variant_new("(s)", ""), "()", timeout_ms, call);
}

static gboolean ss_flag_set(gpointer data) {
    *(int *)data = 1;
    return FALSE;   // G_SOURCE_REMOVE
}

/// Waits on the batch context until the prompt completed or `timeout_ms` passed; 1 when it completed.
static inline int ss_prompt_wait(GMainContext *context, SSCall *call, int timeout_ms) {
    int expired = 0;
    GSource *timer = g_timeout_source_new(timeout_ms > 0 ? (guint)timeout_ms : 0);
    g_source_set_callback(timer, ss_flag_set, &expired, NULL);
    g_source_attach(timer, context);
    while (!call->completed && !expired) g_main_context_iteration(context, TRUE);
    g_source_destroy(timer);
    g_source_unref(timer);
    return call->completed;
}

/// Prompt.Dismiss, sent without waiting for its reply (the Completed signal tells the outcome).
static inline void ss_prompt_dismiss(SecretService *s, const char *prompt, int timeout_ms) {
    if (!ss_is_object_path(prompt)) return;
    g_dbus_connection_call(ss_connection(s), SS_BUS_NAME, prompt, "org.freedesktop.Secret.Prompt", "Dismiss", NULL, NULL,
                           G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, NULL, NULL);
}

/// Stops listening for the prompt's Completed signal.
static inline void ss_prompt_end(SecretService *s, SSCall *call) {
    if (call->signal) g_dbus_connection_signal_unsubscribe(ss_connection(s), call->signal);
    call->signal = 0;
}

/// The object path a completed CreateItem prompt returned (valid while the call lives), or NULL.
static inline const char *ss_prompt_result_path(SSCall *call) {
    if (!call->result || !g_variant_is_of_type(call->result, G_VARIANT_TYPE_OBJECT_PATH)) return NULL;
    return g_variant_get_string(call->result, NULL);
}

#endif
