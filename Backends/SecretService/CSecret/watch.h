// Following item changes for the attribute cache (AttributeCache.swift).
#ifndef SECURESTORE_CSECRET_WATCH_H
#define SECURESTORE_CSECRET_WATCH_H

#include "shim.h"
#include <pthread.h>
#include <stdint.h>

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
