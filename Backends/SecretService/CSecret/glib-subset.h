// The part of GLib, GIO and libsecret the backend uses, declared so that building needs no GLib headers or
// pkg-config and links nothing (why: LibSecret.swift): libsecret-1.so.0 is opened at first use and every call
// goes through `struct ss_glib`, filled by dlsym. Tests/SecretServiceStoreTests/LibraryTests.swift compiles
// these headers with SS_GLIB_CHECK against the real ones (every prototype, constant and layout).
#ifndef SECURESTORE_GLIB_SUBSET_H
#define SECURESTORE_GLIB_SUBSET_H

#include <stddef.h>
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"   // only the table's pointers are annotated
#endif

// The layouts of GError (public fields), GHashTableIter and GVariantBuilder (private fields): checked.
struct ss_GError { unsigned int domain; int code; char *message; };
struct ss_GHashTableIter { void *dummy1, *dummy2, *dummy3; int dummy4; int dummy5; void *dummy6; };
struct ss_GVariantBuilder { __UINTPTR_TYPE__ x[16]; };

#ifndef SS_GLIB_CHECK
// ---- Types (the real ones when checking) ----
typedef char gchar;
typedef int gint;
typedef unsigned int guint;
typedef unsigned int guint32;
typedef gint gboolean;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef __SIZE_TYPE__ gsize;
typedef __PTRDIFF_TYPE__ gssize;
typedef __UINTPTR_TYPE__ guintptr;
typedef guint32 GQuark;
typedef gsize GType;

typedef struct ss_GError GError;
typedef struct ss_GHashTableIter GHashTableIter;
typedef struct ss_GVariantBuilder GVariantBuilder;
/// Complete here only so Swift keeps typed pointers to them; their fields are never read.
typedef struct ss_SecretService { gpointer ss_private; } SecretService;
typedef struct ss_GCancellable { gpointer ss_private; } GCancellable;
typedef struct _GAsyncResult GAsyncResult;
typedef struct _GDBusConnection GDBusConnection;
typedef struct _GDBusProxy GDBusProxy;
typedef struct _GDBusMessage GDBusMessage;
typedef struct _GHashTable GHashTable;
typedef struct _GMainContext GMainContext;
typedef struct _GObject GObject;
typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GSource GSource;
typedef struct _SecretSchema SecretSchema;
typedef struct _SecretValue SecretValue;

typedef void (*GDestroyNotify)(gpointer data);
typedef guint (*GHashFunc)(gconstpointer key);
typedef gboolean (*GEqualFunc)(gconstpointer a, gconstpointer b);
typedef gboolean (*GSourceFunc)(gpointer user_data);
typedef void (*GAsyncReadyCallback)(GObject *source_object, GAsyncResult *res, gpointer data);
typedef GDBusMessage *(*GDBusMessageFilterFunction)(GDBusConnection *connection, GDBusMessage *message,
                                                    gboolean incoming, gpointer user_data);
typedef void (*GDBusSignalCallback)(GDBusConnection *connection, const gchar *sender_name, const gchar *object_path,
                                    const gchar *interface_name, const gchar *signal_name, GVariant *parameters,
                                    gpointer user_data);

typedef enum { G_BUS_TYPE_SESSION = 2 } GBusType;
typedef enum { G_DBUS_CALL_FLAGS_NONE = 0, G_DBUS_CALL_FLAGS_NO_AUTO_START = 1 } GDBusCallFlags;
typedef enum { G_DBUS_SIGNAL_FLAGS_NONE = 0 } GDBusSignalFlags;
typedef enum { G_DBUS_MESSAGE_TYPE_SIGNAL = 4 } GDBusMessageType;
typedef enum { SECRET_SERVICE_NONE = 0, SECRET_SERVICE_OPEN_SESSION = 1 << 1 } SecretServiceFlags;
typedef enum { SECRET_ITEM_CREATE_NONE = 0 } SecretItemCreateFlags;
enum { G_DBUS_ERROR_SERVICE_UNKNOWN = 2, G_DBUS_ERROR_NAME_HAS_NO_OWNER = 3, G_DBUS_ERROR_NO_REPLY = 4, G_DBUS_ERROR_NO_SERVER = 11,
       G_DBUS_ERROR_TIMEOUT = 12, G_DBUS_ERROR_DISCONNECTED = 15, G_DBUS_ERROR_UNKNOWN_METHOD = 19, G_DBUS_ERROR_TIMED_OUT = 20,
       G_DBUS_ERROR_UNKNOWN_OBJECT = 41 };
enum { G_IO_ERROR_CANCELLED = 19, G_IO_ERROR_TIMED_OUT = 24, G_IO_ERROR_INVALID_DATA = 35 };
enum { SECRET_ERROR_PROTOCOL = 1, SECRET_ERROR_IS_LOCKED = 2, SECRET_ERROR_NO_SUCH_OBJECT = 3 };

#define TRUE 1
#define FALSE 0
#define G_DBUS_PROXY(o) ((GDBusProxy *)(o))
#define G_DBUS_CONNECTION(o) ((GDBusConnection *)(o))
#define G_VARIANT_TYPE(s) ((const GVariantType *)(s))
#define G_VARIANT_TYPE_BOOLEAN ((const GVariantType *)"b")
#define G_VARIANT_TYPE_OBJECT_PATH ((const GVariantType *)"o")
#define SECRET_TYPE_SERVICE (secret_service_get_type())
#define G_IO_ERROR (g_io_error_quark())
#define G_DBUS_ERROR (g_dbus_error_quark())
#define SECRET_ERROR (secret_error_get_quark())
#define g_new0(T, n) ((T *)g_malloc0_n((n), sizeof(T)))
#endif

// ---- Functions (names in parentheses: GLib defines some as macros too) ----
GType (secret_service_get_type)(void);
SecretService *(secret_service_open_sync)(GType service_gtype, const gchar *service_bus_name, SecretServiceFlags flags,
                                          GCancellable *cancellable, GError **error);
const gchar *(secret_service_get_session_dbus_path)(SecretService *self);
void (secret_service_ensure_session)(SecretService *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data);
gboolean (secret_service_ensure_session_finish)(SecretService *self, GAsyncResult *result, GError **error);
gchar *(secret_service_read_alias_dbus_path_sync)(SecretService *self, const gchar *alias, GCancellable *cancellable,
                                                  GError **error);
gboolean (secret_service_search_for_dbus_paths_sync)(SecretService *self, const SecretSchema *schema, GHashTable *attributes,
                                                     GCancellable *cancellable, gchar ***unlocked, gchar ***locked,
                                                     GError **error);
GHashTable *(secret_service_get_secrets_for_dbus_paths_sync)(SecretService *self, const gchar **item_paths,
                                                             GCancellable *cancellable, GError **error);
GVariant *(secret_service_encode_dbus_secret)(SecretService *service, SecretValue *value);
SecretValue *(secret_service_decode_dbus_secret)(SecretService *service, GVariant *value);
SecretValue *(secret_value_new)(const gchar *secret, gssize length, const gchar *content_type);
const gchar *(secret_value_get)(SecretValue *value, gsize *length);
void (secret_value_unref)(gpointer value);
GQuark (secret_error_get_quark)(void);

GDBusConnection *(g_bus_get_sync)(GBusType bus_type, GCancellable *cancellable, GError **error);
GVariant *(g_dbus_connection_call_sync)(GDBusConnection *connection, const gchar *bus_name, const gchar *object_path,
                                        const gchar *interface_name, const gchar *method_name, GVariant *parameters,
                                        const GVariantType *reply_type, GDBusCallFlags flags, gint timeout_msec,
                                        GCancellable *cancellable, GError **error);
void (g_dbus_connection_call)(GDBusConnection *connection, const gchar *bus_name, const gchar *object_path,
                              const gchar *interface_name, const gchar *method_name, GVariant *parameters,
                              const GVariantType *reply_type, GDBusCallFlags flags, gint timeout_msec,
                              GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
GVariant *(g_dbus_connection_call_finish)(GDBusConnection *connection, GAsyncResult *res, GError **error);
GDBusConnection *(g_dbus_proxy_get_connection)(GDBusProxy *proxy);
guint (g_dbus_connection_add_filter)(GDBusConnection *connection, GDBusMessageFilterFunction filter_function,
                                     gpointer user_data, GDestroyNotify user_data_free_func);
void (g_dbus_connection_remove_filter)(GDBusConnection *connection, guint filter_id);
guint (g_dbus_connection_signal_subscribe)(GDBusConnection *connection, const gchar *sender, const gchar *interface_name,
                                           const gchar *member, const gchar *object_path, const gchar *arg0,
                                           GDBusSignalFlags flags, GDBusSignalCallback callback, gpointer user_data,
                                           GDestroyNotify user_data_free_func);
void (g_dbus_connection_signal_unsubscribe)(GDBusConnection *connection, guint subscription_id);
GDBusMessageType (g_dbus_message_get_message_type)(GDBusMessage *message);
const gchar *(g_dbus_message_get_interface)(GDBusMessage *message);
const gchar *(g_dbus_message_get_member)(GDBusMessage *message);
const gchar *(g_dbus_message_get_path)(GDBusMessage *message);
GVariant *(g_dbus_message_get_body)(GDBusMessage *message);
void (g_dbus_proxy_set_default_timeout)(GDBusProxy *proxy, gint timeout_msec);
gchar *(g_dbus_error_get_remote_error)(const GError *error);
GQuark (g_dbus_error_quark)(void);
GQuark (g_io_error_quark)(void);
GCancellable *(g_cancellable_new)(void);
void (g_cancellable_cancel)(GCancellable *cancellable);
gpointer (g_object_ref)(gpointer object);
void (g_object_unref)(gpointer object);

void (g_error_free)(GError *error);
void (g_set_error_literal)(GError **err, GQuark domain, gint code, const gchar *message);
void (g_free)(gpointer mem);
gpointer (g_malloc0_n)(gsize n_blocks, gsize n_block_bytes);
gchar *(g_strdup)(const gchar *str);
void (g_strfreev)(gchar **str_array);
guint (g_str_hash)(gconstpointer v);
gboolean (g_str_equal)(gconstpointer v1, gconstpointer v2);
GHashTable *(g_hash_table_new_full)(GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func,
                                    GDestroyNotify value_destroy_func);
gboolean (g_hash_table_insert)(GHashTable *hash_table, gpointer key, gpointer value);
gpointer (g_hash_table_lookup)(GHashTable *hash_table, gconstpointer key);
void (g_hash_table_unref)(GHashTable *hash_table);
gboolean (g_hash_table_replace)(GHashTable *hash_table, gpointer key, gpointer value);
guint (g_hash_table_size)(GHashTable *hash_table);
void (g_hash_table_remove_all)(GHashTable *hash_table);
void (g_hash_table_iter_init)(GHashTableIter *iter, GHashTable *hash_table);
gboolean (g_hash_table_iter_next)(GHashTableIter *iter, gpointer *key, gpointer *value);
GMainContext *(g_main_context_new)(void);
void (g_main_context_push_thread_default)(GMainContext *context);
void (g_main_context_pop_thread_default)(GMainContext *context);
gboolean (g_main_context_iteration)(GMainContext *context, gboolean may_block);
void (g_main_context_unref)(GMainContext *context);

GVariant *(g_variant_new)(const gchar *format_string, ...);
GVariant *(g_variant_new_string)(const gchar *string);
void (g_variant_get)(GVariant *value, const gchar *format_string, ...);
void (g_variant_get_child)(GVariant *value, gsize index_, const gchar *format_string, ...);
GVariant *(g_variant_get_child_value)(GVariant *value, gsize index_);
gsize (g_variant_n_children)(GVariant *value);
gboolean (g_variant_get_boolean)(GVariant *value);
const gchar *(g_variant_get_string)(GVariant *value, gsize *length);
GSource *(g_timeout_source_new)(guint interval);
void (g_source_set_callback)(GSource *source, GSourceFunc func, gpointer data, GDestroyNotify notify);
guint (g_source_attach)(GSource *source, GMainContext *context);
void (g_source_destroy)(GSource *source);
void (g_source_unref)(GSource *source);
gboolean (g_variant_is_of_type)(GVariant *value, const GVariantType *type);
GVariant *(g_variant_ref_sink)(GVariant *value);
void (g_variant_unref)(GVariant *value);
void (g_variant_builder_init)(GVariantBuilder *builder, const GVariantType *type);
void (g_variant_builder_add)(GVariantBuilder *builder, const gchar *format_string, ...);
GVariant *(g_variant_builder_end)(GVariantBuilder *builder);

/// Not loaded: called only by programs that link libsecret themselves (the benchmark's raw limit, raw.h).
gchar *(secret_service_create_item_dbus_path_sync)(SecretService *self, const gchar *collection_path, GHashTable *properties,
                                                   SecretValue *value, SecretItemCreateFlags flags,
                                                   GCancellable *cancellable, GError **error);
gboolean (secret_service_delete_item_dbus_path_sync)(SecretService *self, const gchar *item_path,
                                                     GCancellable *cancellable, GError **error);

/// Every function above but the two not loaded, in the order of `struct ss_glib`.
#define SS_GLIB_FUNCTIONS(X) \
    X(secret_service_get_type) X(secret_service_open_sync) X(secret_service_get_session_dbus_path) \
    X(secret_service_ensure_session) X(secret_service_ensure_session_finish) \
    X(secret_service_read_alias_dbus_path_sync) X(secret_service_search_for_dbus_paths_sync) \
    X(secret_service_get_secrets_for_dbus_paths_sync) \
    X(secret_service_encode_dbus_secret) X(secret_service_decode_dbus_secret) X(secret_value_new) \
    X(secret_value_get) X(secret_value_unref) X(secret_error_get_quark) \
    X(g_bus_get_sync) X(g_dbus_connection_call_sync) X(g_dbus_connection_call) X(g_dbus_connection_call_finish) \
    X(g_dbus_proxy_get_connection) X(g_dbus_proxy_set_default_timeout) X(g_dbus_error_get_remote_error) \
    X(g_dbus_error_quark) X(g_io_error_quark) X(g_cancellable_new) X(g_cancellable_cancel) X(g_object_ref) \
    X(g_object_unref) X(g_error_free) X(g_set_error_literal) X(g_free) X(g_malloc0_n) X(g_strdup) X(g_strfreev) \
    X(g_str_hash) X(g_str_equal) X(g_hash_table_new_full) X(g_hash_table_insert) X(g_hash_table_lookup) \
    X(g_hash_table_unref) X(g_hash_table_iter_init) X(g_hash_table_iter_next) X(g_main_context_new) \
    X(g_main_context_push_thread_default) X(g_main_context_pop_thread_default) X(g_main_context_iteration) \
    X(g_main_context_unref) X(g_variant_new) X(g_variant_new_string) X(g_variant_get) X(g_variant_get_child) \
    X(g_variant_get_child_value) X(g_variant_n_children) X(g_variant_get_boolean) X(g_variant_is_of_type) \
    X(g_variant_ref_sink) X(g_variant_unref) X(g_variant_builder_init) X(g_variant_builder_add) \
    X(g_variant_builder_end) \
    X(g_variant_get_string) X(g_timeout_source_new) X(g_source_set_callback) X(g_source_attach) X(g_source_destroy) \
    X(g_source_unref) \
    X(g_dbus_connection_add_filter) X(g_dbus_connection_remove_filter) X(g_dbus_connection_signal_subscribe) X(g_dbus_connection_signal_unsubscribe) X(g_dbus_message_get_message_type) \
    X(g_dbus_message_get_interface) X(g_dbus_message_get_member) X(g_dbus_message_get_path) X(g_dbus_message_get_body) X(g_hash_table_replace) X(g_hash_table_size) X(g_hash_table_remove_all)

#define SS_GLIB_TYPEDEF(name) typedef __typeof__(&(name)) ss_##name##_fn;
SS_GLIB_FUNCTIONS(SS_GLIB_TYPEDEF)
#undef SS_GLIB_TYPEDEF

/// One pointer per function, filled by dlsym (LibSecret.swift).
struct ss_glib {
#if defined(__clang__)
#define SS_GLIB_FIELD(name) ss_##name##_fn _Nonnull name;   // Swift: non-optional
#else
#define SS_GLIB_FIELD(name) ss_##name##_fn name;
#endif
    SS_GLIB_FUNCTIONS(SS_GLIB_FIELD)
#undef SS_GLIB_FIELD
};

/// The C name of the i-th function of `struct ss_glib`, NULL past the end.
static inline const char *ss_glib_name(size_t i) {
#define SS_GLIB_NAME(name) #name,
    static const char *const names[] = { SS_GLIB_FUNCTIONS(SS_GLIB_NAME) };
#undef SS_GLIB_NAME
    return i < sizeof names / sizeof names[0] ? names[i] : NULL;
}
static inline size_t ss_glib_count(void) { return sizeof(struct ss_glib) / sizeof(void (*)(void)); }

/// The loaded functions (defined in LibSecret.swift; loads libsecret on first use).
const struct ss_glib *securestore_glib(void);

#ifdef SS_GLIB_CHECK
// The constants and layouts declared above for building, against the real headers.
_Static_assert(G_BUS_TYPE_SESSION == 2 && G_DBUS_CALL_FLAGS_NONE == 0 && G_DBUS_CALL_FLAGS_NO_AUTO_START == 1, "GDBus enums");
_Static_assert(G_DBUS_SIGNAL_FLAGS_NONE == 0 && G_DBUS_MESSAGE_TYPE_SIGNAL == 4, "GDBus signal enums");
_Static_assert(SECRET_SERVICE_NONE == 0 && SECRET_SERVICE_OPEN_SESSION == 2 && SECRET_ITEM_CREATE_NONE == 0, "libsecret flags");
_Static_assert(G_DBUS_ERROR_SERVICE_UNKNOWN == 2 && G_DBUS_ERROR_NAME_HAS_NO_OWNER == 3 && G_DBUS_ERROR_NO_REPLY == 4
               && G_DBUS_ERROR_NO_SERVER == 11 && G_DBUS_ERROR_TIMEOUT == 12 && G_DBUS_ERROR_DISCONNECTED == 15
               && G_DBUS_ERROR_UNKNOWN_METHOD == 19 && G_DBUS_ERROR_TIMED_OUT == 20 && G_DBUS_ERROR_UNKNOWN_OBJECT == 41,
               "GDBusError codes");
_Static_assert(G_IO_ERROR_CANCELLED == 19 && G_IO_ERROR_TIMED_OUT == 24 && G_IO_ERROR_INVALID_DATA == 35, "GIOErrorEnum codes");
_Static_assert(SECRET_ERROR_PROTOCOL == 1 && SECRET_ERROR_IS_LOCKED == 2 && SECRET_ERROR_NO_SUCH_OBJECT == 3, "SecretError codes");
_Static_assert(sizeof(GHashTableIter) == sizeof(struct ss_GHashTableIter)
               && _Alignof(GHashTableIter) == _Alignof(struct ss_GHashTableIter), "GHashTableIter layout");
_Static_assert(sizeof(GVariantBuilder) == sizeof(struct ss_GVariantBuilder)
               && _Alignof(GVariantBuilder) == _Alignof(struct ss_GVariantBuilder), "GVariantBuilder layout");
_Static_assert(sizeof(GError) == sizeof(struct ss_GError) && offsetof(GError, domain) == offsetof(struct ss_GError, domain)
               && offsetof(GError, code) == offsetof(struct ss_GError, code)
               && offsetof(GError, message) == offsetof(struct ss_GError, message), "GError layout");
#else
// ---- Every call in shim.h goes through the loaded pointers ----
#define secret_service_get_type (securestore_glib()->secret_service_get_type)
#define secret_service_open_sync (securestore_glib()->secret_service_open_sync)
#define secret_service_get_session_dbus_path (securestore_glib()->secret_service_get_session_dbus_path)
#define secret_service_ensure_session (securestore_glib()->secret_service_ensure_session)
#define secret_service_ensure_session_finish (securestore_glib()->secret_service_ensure_session_finish)
#define secret_service_read_alias_dbus_path_sync (securestore_glib()->secret_service_read_alias_dbus_path_sync)
#define secret_service_search_for_dbus_paths_sync (securestore_glib()->secret_service_search_for_dbus_paths_sync)
#define secret_service_get_secrets_for_dbus_paths_sync (securestore_glib()->secret_service_get_secrets_for_dbus_paths_sync)
#define secret_service_encode_dbus_secret (securestore_glib()->secret_service_encode_dbus_secret)
#define secret_service_decode_dbus_secret (securestore_glib()->secret_service_decode_dbus_secret)
#define secret_value_new (securestore_glib()->secret_value_new)
#define secret_value_get (securestore_glib()->secret_value_get)
#define secret_value_unref (securestore_glib()->secret_value_unref)
#define secret_error_get_quark (securestore_glib()->secret_error_get_quark)
#define g_bus_get_sync (securestore_glib()->g_bus_get_sync)
#define g_dbus_connection_call_sync (securestore_glib()->g_dbus_connection_call_sync)
#define g_dbus_connection_call (securestore_glib()->g_dbus_connection_call)
#define g_dbus_connection_call_finish (securestore_glib()->g_dbus_connection_call_finish)
#define g_dbus_proxy_get_connection (securestore_glib()->g_dbus_proxy_get_connection)
#define g_dbus_proxy_set_default_timeout (securestore_glib()->g_dbus_proxy_set_default_timeout)
#define g_dbus_error_get_remote_error (securestore_glib()->g_dbus_error_get_remote_error)
#define g_dbus_error_quark (securestore_glib()->g_dbus_error_quark)
#define g_io_error_quark (securestore_glib()->g_io_error_quark)
#define g_cancellable_new (securestore_glib()->g_cancellable_new)
#define g_cancellable_cancel (securestore_glib()->g_cancellable_cancel)
#define g_object_ref (securestore_glib()->g_object_ref)
#define g_object_unref (securestore_glib()->g_object_unref)
#define g_error_free (securestore_glib()->g_error_free)
#define g_set_error_literal (securestore_glib()->g_set_error_literal)
#define g_free (securestore_glib()->g_free)
#define g_malloc0_n (securestore_glib()->g_malloc0_n)
#define g_strdup (securestore_glib()->g_strdup)
#define g_strfreev (securestore_glib()->g_strfreev)
#define g_str_hash (securestore_glib()->g_str_hash)
#define g_str_equal (securestore_glib()->g_str_equal)
#define g_hash_table_new_full (securestore_glib()->g_hash_table_new_full)
#define g_hash_table_insert (securestore_glib()->g_hash_table_insert)
#define g_hash_table_lookup (securestore_glib()->g_hash_table_lookup)
#define g_hash_table_unref (securestore_glib()->g_hash_table_unref)
#define g_hash_table_iter_init (securestore_glib()->g_hash_table_iter_init)
#define g_hash_table_iter_next (securestore_glib()->g_hash_table_iter_next)
#define g_main_context_new (securestore_glib()->g_main_context_new)
#define g_main_context_push_thread_default (securestore_glib()->g_main_context_push_thread_default)
#define g_main_context_pop_thread_default (securestore_glib()->g_main_context_pop_thread_default)
#define g_main_context_iteration (securestore_glib()->g_main_context_iteration)
#define g_main_context_unref (securestore_glib()->g_main_context_unref)
#define g_variant_new (securestore_glib()->g_variant_new)
#define g_variant_new_string (securestore_glib()->g_variant_new_string)
#define g_variant_get (securestore_glib()->g_variant_get)
#define g_variant_get_child (securestore_glib()->g_variant_get_child)
#define g_variant_get_child_value (securestore_glib()->g_variant_get_child_value)
#define g_variant_n_children (securestore_glib()->g_variant_n_children)
#define g_variant_get_boolean (securestore_glib()->g_variant_get_boolean)
#define g_variant_get_string (securestore_glib()->g_variant_get_string)
#define g_timeout_source_new (securestore_glib()->g_timeout_source_new)
#define g_source_set_callback (securestore_glib()->g_source_set_callback)
#define g_source_attach (securestore_glib()->g_source_attach)
#define g_source_destroy (securestore_glib()->g_source_destroy)
#define g_source_unref (securestore_glib()->g_source_unref)
#define g_variant_is_of_type (securestore_glib()->g_variant_is_of_type)
#define g_variant_ref_sink (securestore_glib()->g_variant_ref_sink)
#define g_variant_unref (securestore_glib()->g_variant_unref)
#define g_variant_builder_init (securestore_glib()->g_variant_builder_init)
#define g_variant_builder_add (securestore_glib()->g_variant_builder_add)
#define g_variant_builder_end (securestore_glib()->g_variant_builder_end)
#define g_dbus_connection_add_filter (securestore_glib()->g_dbus_connection_add_filter)
#define g_dbus_connection_remove_filter (securestore_glib()->g_dbus_connection_remove_filter)
#define g_dbus_connection_signal_subscribe (securestore_glib()->g_dbus_connection_signal_subscribe)
#define g_dbus_connection_signal_unsubscribe (securestore_glib()->g_dbus_connection_signal_unsubscribe)
#define g_dbus_message_get_message_type (securestore_glib()->g_dbus_message_get_message_type)
#define g_dbus_message_get_interface (securestore_glib()->g_dbus_message_get_interface)
#define g_dbus_message_get_member (securestore_glib()->g_dbus_message_get_member)
#define g_dbus_message_get_path (securestore_glib()->g_dbus_message_get_path)
#define g_dbus_message_get_body (securestore_glib()->g_dbus_message_get_body)
#define g_hash_table_replace (securestore_glib()->g_hash_table_replace)
#define g_hash_table_size (securestore_glib()->g_hash_table_size)
#define g_hash_table_remove_all (securestore_glib()->g_hash_table_remove_all)
#endif

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#endif
