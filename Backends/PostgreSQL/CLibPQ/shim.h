#pragma once
// libpq's declarations only: the backend loads libpq.so.5 at its first use (PostgresConnection.swift), so
// nothing here is linked and a program that never uses PostgreSQL never maps libpq.
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>   // Debian and Ubuntu (libpq-dev), without pkg-config's -I
#endif
#include <stddef.h>

/// The libpq functions the backend calls, in the order of `struct ss_libpq`.
#define SS_LIBPQ_FUNCTIONS(X) \
    X(PQcancel) X(PQclear) X(PQcmdStatus) X(PQcmdTuples) X(PQconnectPoll) X(PQconnectStartParams) \
    X(PQconninfoFree) X(PQconninfoParse) X(PQconsumeInput) X(PQenterPipelineMode) X(PQerrorMessage) \
    X(PQescapeLiteral) X(PQexitPipelineMode) X(PQfinish) X(PQflush) X(PQfreeCancel) X(PQfreemem) X(PQftype) \
    X(PQgetCancel) X(PQgetResult) X(PQgetisnull) X(PQgetlength) X(PQgetvalue) X(PQhost) X(PQisBusy) \
    X(PQnfields) X(PQntuples) X(PQparameterStatus) X(PQpipelineSync) X(PQport) X(PQresultErrorField) \
    X(PQresultStatus) X(PQsendPrepare) X(PQsendQuery) X(PQsendQueryParams) X(PQsendQueryPrepared) \
    X(PQsetNoticeProcessor) X(PQsetnonblocking) X(PQsocket) X(PQstatus) X(PQtransactionStatus)

/// `ss_PQexec_fn` …: the type of a pointer to each function, as libpq declares it.
#define SS_LIBPQ_TYPEDEF(name) typedef __typeof__(&name) ss_##name##_fn;
SS_LIBPQ_FUNCTIONS(SS_LIBPQ_TYPEDEF)
#undef SS_LIBPQ_TYPEDEF

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"   // only the table's pointers are annotated
#endif
/// One pointer per function, filled by dlsym.
struct ss_libpq {
#if defined(__clang__)
#define SS_LIBPQ_FIELD(name) ss_##name##_fn _Nonnull name;   // Swift: non-optional
#else
#define SS_LIBPQ_FIELD(name) ss_##name##_fn name;
#endif
    SS_LIBPQ_FUNCTIONS(SS_LIBPQ_FIELD)
#undef SS_LIBPQ_FIELD
};

/// The C name of the i-th function of `struct ss_libpq`, NULL past the end.
static inline const char *ss_libpq_name(size_t i) {
#define SS_LIBPQ_NAME(name) #name,
    static const char *const names[] = { SS_LIBPQ_FUNCTIONS(SS_LIBPQ_NAME) };
#undef SS_LIBPQ_NAME
    return i < sizeof names / sizeof names[0] ? names[i] : NULL;
}
static inline size_t ss_libpq_count(void) { return sizeof(struct ss_libpq) / sizeof(void (*)(void)); }
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
