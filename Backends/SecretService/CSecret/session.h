// D-Bus side of the backend's own transfer session (TransferSession.swift has the cryptography): the
// OpenSession call with our Diffie-Hellman public key, and secrets as (oayays) structs that we encrypt and
// decrypt ourselves, so libsecret's session (with its 1024-bit exponent) is only the fallback.
#ifndef SECURESTORE_CSECRET_SESSION_H
#define SECURESTORE_CSECRET_SESSION_H

#include "shim.h"

#define SS_NOT_SUPPORTED "org.freedesktop.DBus.Error.NotSupported"

static void ss_dh_session_opened(GObject *source, GAsyncResult *result, gpointer data) {
    SSCall *c = (SSCall *)data;
    c->reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), result, &c->error);
    if (!c->reply && c->error) {
        gchar *name = g_dbus_error_get_remote_error(c->error);
        if (name && strcmp(name, SS_NOT_SUPPORTED) == 0) {   // the specification's answer to an unknown algorithm
            g_error_free(c->error);
            c->error = NULL;
            c->reply = g_variant_ref_sink(g_variant_new("()"));
        }
        g_free(name);
    }
    c->done = 1;
}

/// Service.OpenSession(algorithm, <ay our public key>) → (<ay the daemon's public key>, session path). A daemon
/// that does not support the algorithm finishes the call with the empty reply "()" (ss_call_unsupported)
/// instead of an error, so the caller can fall back to libsecret's session.
static inline void ss_start_open_dh_session(SecretService *s, const char *algorithm, const void *public_key, size_t length,
                                            int timeout_ms, SSCall *call) {
    GVariant *input = g_variant_new_fixed_array(G_VARIANT_TYPE("y"), public_key, length, 1);
    g_dbus_connection_call(ss_connection(s), SS_BUS_NAME, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service",
                           "OpenSession", g_variant_new("(sv)", algorithm, input), G_VARIANT_TYPE("(vo)"),
                           G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, ss_dh_session_opened, call);
}
/// Whether a finished ss_start_open_dh_session was refused as not supported.
static inline int ss_call_unsupported(SSCall *c) { return g_variant_is_of_type(c->reply, G_VARIANT_TYPE("()")); }
/// The session path of a finished OpenSession (valid while the call lives) and its output: the daemon's public
/// key as bytes in `*key`, valid while the returned value lives (unref it); NULL when the output is no byte array.
static inline GVariant *ss_call_dh_session(SSCall *c, const char **path, const void **key, size_t *length) {
    GVariant *output = NULL;
    g_variant_get(c->reply, "(v&o)", &output, path);
    if (!g_variant_is_of_type(output, G_VARIANT_TYPE("ay"))) {
        g_variant_unref(output);
        return NULL;
    }
    gsize n = 0;
    *key = g_variant_get_fixed_array(output, &n, 1);
    *length = n;
    return output;
}

/// Service.GetSecrets(paths, session) for our session (ss_start_get_secrets names libsecret's).
static inline void ss_start_get_secrets_in(SecretService *s, const char *const *paths, const char *session, int timeout_ms,
                                           SSCall *call) {
    ss_start(s, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "GetSecrets",
             g_variant_new("(^aoo)", paths, session), "(a{o(oayays)})", timeout_ms, call);
}

/// The i-th entry of a finished GetSecrets: its item's path in `*path` (valid while the call lives) and its
/// Secret (oayays) (unref it).
static inline GVariant *ss_call_secret_struct_at(SSCall *c, size_t i, const char **path) {
    GVariant *d = g_variant_get_child_value(c->reply, 0);
    GVariant *entry = g_variant_get_child_value(d, i);
    GVariant *secret = NULL;
    g_variant_get(entry, "{&o@(oayays)}", path, &secret);
    g_variant_unref(entry);
    g_variant_unref(d);
    return secret;
}
/// The session path of a Secret (valid while it lives).
static inline const char *ss_secret_session(GVariant *secret) {
    const char *session = NULL;
    g_variant_get_child(secret, 0, "&o", &session);
    return session;
}
/// Field 1 (parameters: the IV) or 2 (the value: the ciphertext) of a Secret as bytes in `*bytes`, valid while the
/// returned value lives (unref it).
static inline GVariant *ss_secret_bytes(GVariant *secret, size_t field, const void **bytes, size_t *length) {
    GVariant *child = g_variant_get_child_value(secret, field);
    gsize n = 0;
    *bytes = g_variant_get_fixed_array(child, &n, 1);
    *length = n;
    return child;
}

/// A Secret (oayays) of `session`: the IV as parameters and the ciphertext as value, content type
/// application/octet-stream (floating: the call that sends it takes it).
static inline GVariant *ss_secret_new(const char *session, const void *iv, size_t n_iv, const void *value, size_t n_value) {
    return g_variant_new("(o@ay@ays)", session, g_variant_new_fixed_array(G_VARIANT_TYPE("y"), iv, n_iv, 1),
                         g_variant_new_fixed_array(G_VARIANT_TYPE("y"), value, n_value, 1), "application/octet-stream");
}

/// Item.SetSecret(secret), started without waiting.
static inline void ss_start_set_encoded_secret(SecretService *s, const char *path, GVariant *secret, int timeout_ms,
                                               SSCall *call) {
    ss_start(s, path, "org.freedesktop.Secret.Item", "SetSecret", g_variant_new("(@(oayays))", secret), "()", timeout_ms,
             call);
}

/// Collection.CreateItem({Label, Attributes}, secret, replace = false) → the new item's path (free it), or NULL
/// with `*error`. No prompt is ever shown: a creation that needs one is an IsLocked error.
static inline gchar *ss_create_item_encoded(SecretService *s, const char *collection, const char *label,
                                            GHashTable *attributes, GVariant *secret, int timeout_ms, GError **error) {
    GVariantBuilder properties;
    g_variant_builder_init(&properties, G_VARIANT_TYPE("a{sv}"));
    g_variant_builder_add(&properties, "{sv}", "org.freedesktop.Secret.Item.Label", g_variant_new_string(label));
    g_variant_builder_add(&properties, "{sv}", "org.freedesktop.Secret.Item.Attributes", ss_attributes_variant(attributes));
    GVariant *r = g_dbus_connection_call_sync(ss_connection(s), SS_BUS_NAME, collection, "org.freedesktop.Secret.Collection",
                                              "CreateItem", g_variant_new("(@a{sv}@(oayays)b)", g_variant_builder_end(&properties),
                                                                          secret, FALSE),
                                              G_VARIANT_TYPE("(oo)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);
    if (!r) return NULL;
    const char *item = NULL, *prompt = NULL;
    g_variant_get(r, "(&o&o)", &item, &prompt);
    gchar *created = (item && strcmp(item, "/") != 0) ? g_strdup(item) : NULL;
    g_variant_unref(r);
    if (!created) {
        g_set_error_literal(error, SECRET_ERROR, SECRET_ERROR_IS_LOCKED, "creating the item needs a prompt");
    }
    return created;
}

#endif
