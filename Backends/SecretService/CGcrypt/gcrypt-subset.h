// The part of libgcrypt that shim.h uses, declared here so that building needs no libgcrypt headers and links
// nothing: the Secret Service backend opens libgcrypt.so.20 (already mapped as libsecret's dependency) when it
// first opens a transfer session, and calls every function through `struct ssc_gcrypt`, filled by dlsym
// (TransferSession.swift). The declarations copy libgcrypt's stable ABI; Tests/SecretServiceStoreTests/
// LibraryTests.swift compiles shim.h with SSC_GCRYPT_CHECK against the real gcrypt.h, which checks every
// prototype below against libgcrypt's own and every constant's value.
#ifndef SECURESTORE_GCRYPT_SUBSET_H
#define SECURESTORE_GCRYPT_SUBSET_H

#include <stddef.h>
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"   // only the table's pointers are annotated
#endif

#ifndef SSC_GCRYPT_CHECK
// ---- Types and constants (the real ones when checking) ----
typedef unsigned int gcry_error_t;
typedef struct gcry_mpi *gcry_mpi_t;
typedef struct gcry_cipher_handle *gcry_cipher_hd_t;
typedef struct gcry_md_handle *gcry_md_hd_t;

enum gcry_ctl_cmds {
    GCRYCTL_INIT_SECMEM = 24, GCRYCTL_DISABLE_SECMEM_WARN = 27,
    GCRYCTL_INITIALIZATION_FINISHED = 38, GCRYCTL_INITIALIZATION_FINISHED_P = 39, GCRYCTL_AUTO_EXPAND_SECMEM = 78,
};
enum gcry_mpi_format { GCRYMPI_FMT_USG = 5 };
enum gcry_mpi_flag { GCRYMPI_FLAG_SECURE = 1 };
enum gcry_cipher_algos { GCRY_CIPHER_AES = 7 };
enum gcry_cipher_modes { GCRY_CIPHER_MODE_CBC = 3 };
enum gcry_cipher_flags { GCRY_CIPHER_SECURE = 1 };
enum gcry_md_algos { GCRY_MD_SHA256 = 8 };
enum gcry_md_flags { GCRY_MD_FLAG_SECURE = 1, GCRY_MD_FLAG_HMAC = 2 };
#define GCRY_CIPHER_AES128 GCRY_CIPHER_AES
#endif

// ---- Functions ----
const char *(gcry_check_version)(const char *req_version);
gcry_error_t (gcry_control)(enum gcry_ctl_cmds CMD, ...);
gcry_mpi_t (gcry_mpi_new)(unsigned int nbits);
gcry_mpi_t (gcry_mpi_snew)(unsigned int nbits);
void (gcry_mpi_release)(gcry_mpi_t a);
gcry_mpi_t (gcry_mpi_set_ui)(gcry_mpi_t w, unsigned long u);
void (gcry_mpi_set_flag)(gcry_mpi_t a, enum gcry_mpi_flag flag);
gcry_error_t (gcry_mpi_scan)(gcry_mpi_t *ret_mpi, enum gcry_mpi_format format, const void *buffer, size_t buflen,
                             size_t *nscanned);
gcry_error_t (gcry_mpi_print)(enum gcry_mpi_format format, unsigned char *buffer, size_t buflen, size_t *nwritten,
                              const gcry_mpi_t a);
void (gcry_mpi_powm)(gcry_mpi_t w, const gcry_mpi_t b, const gcry_mpi_t e, const gcry_mpi_t m);
int (gcry_mpi_cmp)(const gcry_mpi_t u, const gcry_mpi_t v);
int (gcry_mpi_cmp_ui)(const gcry_mpi_t u, unsigned long v);
void (gcry_mpi_sub_ui)(gcry_mpi_t w, gcry_mpi_t u, unsigned long v);
gcry_error_t (gcry_cipher_open)(gcry_cipher_hd_t *handle, int algo, int mode, unsigned int flags);
void (gcry_cipher_close)(gcry_cipher_hd_t h);
gcry_error_t (gcry_cipher_setkey)(gcry_cipher_hd_t hd, const void *key, size_t keylen);
gcry_error_t (gcry_cipher_setiv)(gcry_cipher_hd_t hd, const void *iv, size_t ivlen);
gcry_error_t (gcry_cipher_encrypt)(gcry_cipher_hd_t h, void *out, size_t outsize, const void *in, size_t inlen);
gcry_error_t (gcry_cipher_decrypt)(gcry_cipher_hd_t h, void *out, size_t outsize, const void *in, size_t inlen);
gcry_error_t (gcry_md_open)(gcry_md_hd_t *h, int algo, unsigned int flags);
void (gcry_md_close)(gcry_md_hd_t hd);
gcry_error_t (gcry_md_setkey)(gcry_md_hd_t hd, const void *key, size_t keylen);
void (gcry_md_write)(gcry_md_hd_t hd, const void *buffer, size_t length);
unsigned char *(gcry_md_read)(gcry_md_hd_t hd, int algo);

#define SSC_GCRYPT_FUNCTIONS(X) \
    X(gcry_check_version) X(gcry_control) X(gcry_mpi_new) X(gcry_mpi_snew) X(gcry_mpi_release) X(gcry_mpi_set_ui) \
    X(gcry_mpi_set_flag) X(gcry_mpi_scan) X(gcry_mpi_print) X(gcry_mpi_powm) X(gcry_mpi_cmp) X(gcry_mpi_cmp_ui) \
    X(gcry_mpi_sub_ui) X(gcry_cipher_open) X(gcry_cipher_close) X(gcry_cipher_setkey) X(gcry_cipher_setiv) \
    X(gcry_cipher_encrypt) X(gcry_cipher_decrypt) X(gcry_md_open) X(gcry_md_close) X(gcry_md_setkey) \
    X(gcry_md_write) X(gcry_md_read)

#define SSC_GCRYPT_TYPEDEF(name) typedef __typeof__(&(name)) ssc_##name##_fn;
SSC_GCRYPT_FUNCTIONS(SSC_GCRYPT_TYPEDEF)
#undef SSC_GCRYPT_TYPEDEF

/// One pointer per function, filled by dlsym (TransferSession.swift).
struct ssc_gcrypt {
#if defined(__clang__)
#define SSC_GCRYPT_FIELD(name) ssc_##name##_fn _Nonnull name;   // Swift: non-optional
#else
#define SSC_GCRYPT_FIELD(name) ssc_##name##_fn name;
#endif
    SSC_GCRYPT_FUNCTIONS(SSC_GCRYPT_FIELD)
#undef SSC_GCRYPT_FIELD
};

/// The C name of the i-th function of `struct ssc_gcrypt`, NULL past the end.
static inline const char *ssc_gcrypt_name(size_t i) {
#define SSC_GCRYPT_NAME(name) #name,
    static const char *const names[] = { SSC_GCRYPT_FUNCTIONS(SSC_GCRYPT_NAME) };
#undef SSC_GCRYPT_NAME
    return i < sizeof names / sizeof names[0] ? names[i] : NULL;
}
static inline size_t ssc_gcrypt_count(void) { return sizeof(struct ssc_gcrypt) / sizeof(void (*)(void)); }

/// The loaded functions (defined in TransferSession.swift; only called after libgcrypt was loaded).
const struct ssc_gcrypt *securestore_gcrypt(void);

#ifdef SSC_GCRYPT_CHECK
_Static_assert(GCRYCTL_INIT_SECMEM == 24 && GCRYCTL_DISABLE_SECMEM_WARN == 27 && GCRYCTL_INITIALIZATION_FINISHED == 38
               && GCRYCTL_INITIALIZATION_FINISHED_P == 39 && GCRYCTL_AUTO_EXPAND_SECMEM == 78, "gcry_ctl_cmds");
_Static_assert(GCRYMPI_FMT_USG == 5 && GCRYMPI_FLAG_SECURE == 1, "MPI format and flag");
_Static_assert(GCRY_CIPHER_AES == 7 && GCRY_CIPHER_AES128 == 7 && GCRY_CIPHER_MODE_CBC == 3 && GCRY_CIPHER_SECURE == 1,
               "cipher constants");
_Static_assert(GCRY_MD_SHA256 == 8 && GCRY_MD_FLAG_SECURE == 1 && GCRY_MD_FLAG_HMAC == 2, "digest constants");
_Static_assert(sizeof(gcry_error_t) == sizeof(unsigned int), "gcry_error_t");
#else
// ---- Every call in shim.h goes through the loaded pointers ----
#define gcry_check_version (securestore_gcrypt()->gcry_check_version)
#define gcry_control (securestore_gcrypt()->gcry_control)
#define gcry_mpi_new (securestore_gcrypt()->gcry_mpi_new)
#define gcry_mpi_snew (securestore_gcrypt()->gcry_mpi_snew)
#define gcry_mpi_release (securestore_gcrypt()->gcry_mpi_release)
#define gcry_mpi_set_ui (securestore_gcrypt()->gcry_mpi_set_ui)
#define gcry_mpi_set_flag (securestore_gcrypt()->gcry_mpi_set_flag)
#define gcry_mpi_scan (securestore_gcrypt()->gcry_mpi_scan)
#define gcry_mpi_print (securestore_gcrypt()->gcry_mpi_print)
#define gcry_mpi_powm (securestore_gcrypt()->gcry_mpi_powm)
#define gcry_mpi_cmp (securestore_gcrypt()->gcry_mpi_cmp)
#define gcry_mpi_cmp_ui (securestore_gcrypt()->gcry_mpi_cmp_ui)
#define gcry_mpi_sub_ui (securestore_gcrypt()->gcry_mpi_sub_ui)
#define gcry_cipher_open (securestore_gcrypt()->gcry_cipher_open)
#define gcry_cipher_close (securestore_gcrypt()->gcry_cipher_close)
#define gcry_cipher_setkey (securestore_gcrypt()->gcry_cipher_setkey)
#define gcry_cipher_setiv (securestore_gcrypt()->gcry_cipher_setiv)
#define gcry_cipher_encrypt (securestore_gcrypt()->gcry_cipher_encrypt)
#define gcry_cipher_decrypt (securestore_gcrypt()->gcry_cipher_decrypt)
#define gcry_md_open (securestore_gcrypt()->gcry_md_open)
#define gcry_md_close (securestore_gcrypt()->gcry_md_close)
#define gcry_md_setkey (securestore_gcrypt()->gcry_md_setkey)
#define gcry_md_write (securestore_gcrypt()->gcry_md_write)
#define gcry_md_read (securestore_gcrypt()->gcry_md_read)
#endif

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
#endif
