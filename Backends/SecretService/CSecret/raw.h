// libsecret's own synchronous calls, for programs that link libsecret (the benchmark's raw limit); the backend
// never calls these.
#ifndef SECURESTORE_CSECRET_RAW_H
#define SECURESTORE_CSECRET_RAW_H

#include "shim.h"

static inline int ss_search(SecretService *s, GHashTable *attributes, gchar ***unlocked, gchar ***locked, GError **error) {
    return secret_service_search_for_dbus_paths_sync(s, NULL, attributes, NULL, unlocked, locked, error);
}
static inline GHashTable *ss_get_secrets(SecretService *s, char **paths, GError **error) {
    return secret_service_get_secrets_for_dbus_paths_sync(s, (const gchar **)paths, NULL, error);
}
static inline SecretValue *ss_secrets_lookup(GHashTable *secrets, const char *path) {
    return (SecretValue *)g_hash_table_lookup(secrets, path);
}
/// Properties for CreateItem: Label and Attributes.
static inline GHashTable *ss_item_properties(const char *label, GHashTable *attributes) {
    GHashTable *p = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_variant_unref);
    g_hash_table_insert(p, g_strdup("org.freedesktop.Secret.Item.Label"), g_variant_ref_sink(g_variant_new_string(label)));
    g_hash_table_insert(p, g_strdup("org.freedesktop.Secret.Item.Attributes"),
                        g_variant_ref_sink(ss_attributes_variant(attributes)));
    return p;
}
/// Item.SetSecret, waiting for the answer.
static inline int ss_set_item_secret(SecretService *s, const char *path, SecretValue *value, int timeout_ms, GError **error) {
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
    if (!r) return 0;
    g_variant_unref(r);
    return 1;
}
#endif
