// The Secret Service transfer session's cryptography ("dh-ietf1024-sha256-aes128-cbc-pkcs7"), on libgcrypt:
// Diffie-Hellman in the 1024-bit MODP group of RFC 2409 (the "Second Oakley Group", generator 2), the shared
// secret as 128 big-endian bytes through HKDF-SHA256 (no salt, no info) into a 16-byte AES-128 key, and
// AES-128-CBC with PKCS#7 padding. Key material lives in guarded memory (ssc_guarded_alloc) and libgcrypt's
// secure memory, and is wiped when freed. Only TransferSession.swift calls these.
#ifndef SECURESTORE_CGCRYPT_SHIM_H
#define SECURESTORE_CGCRYPT_SHIM_H

#ifdef SSC_GCRYPT_CHECK   // checking gcrypt-subset.h against the real header
#include <gcrypt.h>
#endif
#include "gcrypt-subset.h"
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

enum {
    SSC_PRIME_BYTES = 128,     // the group's prime, and the shared secret fed to HKDF
    SSC_EXPONENT_BYTES = 32,   // our private exponent: 256 random bits
    SSC_KEY_BYTES = 16,        // AES-128
    SSC_BLOCK_BYTES = 16,      // the AES block, the IV and the most PKCS#7 padding
};

/// p = 2^1024 - 2^960 - 1 + 2^64 * (floor(2^894 pi) + 129093), big-endian (RFC 2409 section 6.2).
static const unsigned char ssc_prime[SSC_PRIME_BYTES] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34,
    0xC4, 0xC6, 0x62, 0x8B, 0x80, 0xDC, 0x1C, 0xD1, 0x29, 0x02, 0x4E, 0x08, 0x8A, 0x67, 0xCC, 0x74,
    0x02, 0x0B, 0xBE, 0xA6, 0x3B, 0x13, 0x9B, 0x22, 0x51, 0x4A, 0x08, 0x79, 0x8E, 0x34, 0x04, 0xDD,
    0xEF, 0x95, 0x19, 0xB3, 0xCD, 0x3A, 0x43, 0x1B, 0x30, 0x2B, 0x0A, 0x6D, 0xF2, 0x5F, 0x14, 0x37,
    0x4F, 0xE1, 0x35, 0x6D, 0x6D, 0x51, 0xC2, 0x45, 0xE4, 0x85, 0xB5, 0x76, 0x62, 0x5E, 0x7E, 0xC6,
    0xF4, 0x4C, 0x42, 0xE9, 0xA6, 0x37, 0xED, 0x6B, 0x0B, 0xFF, 0x5C, 0xB6, 0xF4, 0x06, 0xB7, 0xED,
    0xEE, 0x38, 0x6B, 0xFB, 0x5A, 0x89, 0x9F, 0xA5, 0xAE, 0x9F, 0x24, 0x11, 0x7C, 0x4B, 0x1F, 0xE6,
    0x49, 0x28, 0x66, 0x51, 0xEC, 0xE6, 0x53, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
};

// ---- Guarded memory: own pages between two inaccessible ones, locked when the limit allows, kept out of core
// dumps, wiped and unmapped when freed ----

static inline size_t ssc_page(void) {
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096;
}
/// The pages holding `n` bytes (at least one).
static inline size_t ssc_guarded_span(size_t n) {
    size_t page = ssc_page();
    return n <= page ? page : (n + page - 1) / page * page;
}
/// `n` zeroed bytes ending where the trailing guard page starts (an overrun faults at once), or NULL.
static inline void *ssc_guarded_alloc(size_t n) {
    size_t page = ssc_page();
    if (n > SIZE_MAX - 3 * page) return NULL;
    size_t span = ssc_guarded_span(n);
    unsigned char *base = (unsigned char *)mmap(NULL, span + 2 * page, PROT_READ | PROT_WRITE,
                                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    if (mprotect(base, page, PROT_NONE) != 0 || mprotect(base + page + span, page, PROT_NONE) != 0) {
        munmap(base, span + 2 * page);
        return NULL;
    }
    (void)mlock(base + page, span);                    // best effort: RLIMIT_MEMLOCK may be small
    (void)madvise(base + page, span, MADV_DONTDUMP);
    return base + page + (span - n);
}
/// Wipes and unmaps what ssc_guarded_alloc(n) returned.
static inline void ssc_guarded_free(void *p, size_t n) {
    if (!p) return;
    size_t page = ssc_page(), span = ssc_guarded_span(n);
    unsigned char *start = (unsigned char *)p - (span - n);
    explicit_bzero(start, span);
    (void)munlock(start, span);
    munmap(start - page, span + 2 * page);
}

/// `n` bytes from the kernel's random generator; 1 on success.
static inline int ssc_random(void *buffer, size_t n) {
    unsigned char *p = (unsigned char *)buffer;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return 0;
        }
        p += got;
        n -= (size_t)got;
    }
    return 1;
}

// ---- libgcrypt ----

/// Initializes libgcrypt unless someone did (libsecret does when it opens its own session, and then skips
/// its own set-up): a secure-memory pool for the numbers, which grows rather than failing when full (a full
/// pool would otherwise end the process), with no warning when it cannot be locked. 1 on success.
static inline int ssc_gcrypt_init(void) {
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return 1;
    if (!gcry_check_version(NULL)) return 0;
    gcry_control(GCRYCTL_DISABLE_SECMEM_WARN);
    gcry_control(GCRYCTL_AUTO_EXPAND_SECMEM, 32768u);
    gcry_control(GCRYCTL_INIT_SECMEM, 32768, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return 1;
}

/// `n` big-endian bytes as a number in libgcrypt's secure memory (the first copy is wiped), or NULL.
static inline gcry_mpi_t ssc_secret_number(const unsigned char *bytes, size_t n) {
    gcry_mpi_t x = NULL;
    if (gcry_mpi_scan(&x, GCRYMPI_FMT_USG, bytes, n, NULL) != 0) return NULL;
    gcry_mpi_set_flag(x, GCRYMPI_FLAG_SECURE);
    return x;
}

static inline gcry_mpi_t ssc_prime_number(void) {
    gcry_mpi_t p = NULL;
    return gcry_mpi_scan(&p, GCRYMPI_FMT_USG, ssc_prime, SSC_PRIME_BYTES, NULL) == 0 ? p : NULL;
}

/// Our public key 2^x mod p as big-endian bytes without leading zeros (as the specification sends it) in
/// `out` (SSC_PRIME_BYTES), its length in `*n_out`. 1 on success; 0 for x = 0 or a libgcrypt failure.
static inline int ssc_dh_public(const unsigned char *x_bytes, size_t n_x, unsigned char *out, size_t *n_out) {
    int ok = 0;
    gcry_mpi_t p = ssc_prime_number(), g = gcry_mpi_set_ui(NULL, 2), x = ssc_secret_number(x_bytes, n_x);
    gcry_mpi_t y = gcry_mpi_new(SSC_PRIME_BYTES * 8);
    if (p && g && x && y && gcry_mpi_cmp_ui(x, 0) > 0) {
        gcry_mpi_powm(y, g, x, p);
        ok = gcry_mpi_print(GCRYMPI_FMT_USG, out, SSC_PRIME_BYTES, n_out, y) == 0;
    }
    gcry_mpi_release(y);
    gcry_mpi_release(x);
    gcry_mpi_release(g);
    gcry_mpi_release(p);
    return ok;
}

// ---- HMAC-SHA256 and HKDF-SHA256 (RFC 5869) ----

/// HMAC-SHA256(key, a || b || c) into out[32]; 1 on success.
static inline int ssc_hmac_sha256(const void *key, size_t n_key, const void *a, size_t n_a, const void *b, size_t n_b,
                                  const void *c, size_t n_c, unsigned char *out) {
    gcry_md_hd_t h = NULL;
    if (gcry_md_open(&h, GCRY_MD_SHA256, GCRY_MD_FLAG_HMAC | GCRY_MD_FLAG_SECURE) != 0) return 0;
    int ok = gcry_md_setkey(h, key, n_key) == 0;
    if (ok) {
        if (n_a) gcry_md_write(h, a, n_a);
        if (n_b) gcry_md_write(h, b, n_b);
        if (n_c) gcry_md_write(h, c, n_c);
        const unsigned char *digest = gcry_md_read(h, GCRY_MD_SHA256);
        ok = digest != NULL;
        if (ok) memcpy(out, digest, 32);
    }
    gcry_md_close(h);
    return ok;
}

/// HKDF-SHA256 of `ikm` into out[n_out] (at most 255 * 32 bytes). No salt (NULL) means 32 zero bytes, as
/// RFC 5869 says; 1 on success. The pseudorandom key and the blocks are wiped.
static inline int ssc_hkdf_sha256(const void *ikm, size_t n_ikm, const void *salt, size_t n_salt, const void *info,
                                  size_t n_info, unsigned char *out, size_t n_out) {
    if (n_out > 255 * 32) return 0;
    static const unsigned char zeros[32] = {0};
    unsigned char prk[32], block[32];
    int ok = ssc_hmac_sha256(salt ? salt : zeros, salt ? n_salt : sizeof zeros, ikm, n_ikm, NULL, 0, NULL, 0, prk);
    size_t done = 0, n_block = 0;
    for (unsigned char i = 1; ok && done < n_out; i++) {
        ok = ssc_hmac_sha256(prk, sizeof prk, block, n_block, info, n_info, &i, 1, block);
        n_block = sizeof block;
        size_t step = n_out - done < sizeof block ? n_out - done : sizeof block;
        if (ok) memcpy(out + done, block, step);
        done += step;
    }
    explicit_bzero(prk, sizeof prk);
    explicit_bzero(block, sizeof block);
    return ok;
}

/// The session key from our exponent and the daemon's public key: HKDF-SHA256 (no salt, no info) of
/// peer^x mod p written as SSC_PRIME_BYTES big-endian bytes (left-padded with zeros, as libsecret and
/// gnome-keyring do), into key[SSC_KEY_BYTES]. 1 on success; 0 when the peer's key is not in 2..p-2 (or
/// gives 1) or libgcrypt fails. The shared secret only exists in guarded and secure memory, and is wiped.
static inline int ssc_dh_session_key(const unsigned char *x_bytes, size_t n_x, const unsigned char *peer, size_t n_peer,
                                     unsigned char *key) {
    int ok = 0;
    size_t n = 0;
    gcry_mpi_t p = ssc_prime_number(), p1 = gcry_mpi_new(SSC_PRIME_BYTES * 8), y = NULL, x = NULL, k = NULL;
    unsigned char *shared = (unsigned char *)ssc_guarded_alloc(SSC_PRIME_BYTES);
    if (!p || !p1 || !shared || n_peer == 0 || gcry_mpi_scan(&y, GCRYMPI_FMT_USG, peer, n_peer, NULL) != 0) goto done;
    gcry_mpi_sub_ui(p1, p, 1);
    if (gcry_mpi_cmp_ui(y, 1) <= 0 || gcry_mpi_cmp(y, p1) >= 0) goto done;
    x = ssc_secret_number(x_bytes, n_x);
    k = gcry_mpi_snew(SSC_PRIME_BYTES * 8);
    if (!x || !k || gcry_mpi_cmp_ui(x, 0) <= 0) goto done;
    gcry_mpi_powm(k, y, x, p);
    if (gcry_mpi_cmp_ui(k, 1) <= 0 || gcry_mpi_print(GCRYMPI_FMT_USG, shared, SSC_PRIME_BYTES, &n, k) != 0
        || n > SSC_PRIME_BYTES) goto done;
    memmove(shared + (SSC_PRIME_BYTES - n), shared, n);
    memset(shared, 0, SSC_PRIME_BYTES - n);
    ok = ssc_hkdf_sha256(shared, SSC_PRIME_BYTES, NULL, 0, NULL, 0, key, SSC_KEY_BYTES);
done:
    ssc_guarded_free(shared, SSC_PRIME_BYTES);
    gcry_mpi_release(k);
    gcry_mpi_release(x);
    gcry_mpi_release(y);
    gcry_mpi_release(p1);
    gcry_mpi_release(p);
    return ok;
}

// ---- AES-128-CBC with PKCS#7 padding ----

/// The ciphertext's length for `n` plaintext bytes (1 to 16 bytes of padding), 0 when that overflows.
static inline size_t ssc_padded_length(size_t n) {
    return n > SIZE_MAX - SSC_BLOCK_BYTES ? 0 : (n / SSC_BLOCK_BYTES + 1) * SSC_BLOCK_BYTES;
}

/// AES-128-CBC over whole blocks of `buffer`, in place; 1 on success.
static inline int ssc_aes128_cbc(int encrypt, const unsigned char *key, const unsigned char *iv, unsigned char *buffer,
                                 size_t n) {
    gcry_cipher_hd_t h = NULL;
    if (gcry_cipher_open(&h, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_CBC, GCRY_CIPHER_SECURE) != 0) return 0;
    int ok = gcry_cipher_setkey(h, key, SSC_KEY_BYTES) == 0 && gcry_cipher_setiv(h, iv, SSC_BLOCK_BYTES) == 0
        && (encrypt ? gcry_cipher_encrypt(h, buffer, n, NULL, 0) : gcry_cipher_decrypt(h, buffer, n, NULL, 0)) == 0;
    gcry_cipher_close(h);
    return ok;
}

/// Pads `plain` (PKCS#7) into out[ssc_padded_length(n)] and encrypts it there; 1 on success.
static inline int ssc_encrypt(const unsigned char *key, const unsigned char *iv, const void *plain, size_t n,
                              unsigned char *out) {
    size_t padded = ssc_padded_length(n);
    if (padded == 0) return 0;
    if (n) memcpy(out, plain, n);
    memset(out + n, (int)(padded - n), padded - n);
    return ssc_aes128_cbc(1, key, iv, out, padded);
}

/// Decrypts `cipher` into out[n] and checks its padding; the plaintext is the first `*n_plain` bytes of
/// `out`. 1 on success; 0 (nothing usable in `out`) for an IV that is not 16 bytes, a length that is 0 or not
/// whole blocks, or padding that is not 1 to 16 bytes each holding the padding's length.
static inline int ssc_decrypt(const unsigned char *key, const void *iv, size_t n_iv, const void *cipher, size_t n,
                              unsigned char *out, size_t *n_plain) {
    *n_plain = 0;
    if (n_iv != SSC_BLOCK_BYTES || n == 0 || n % SSC_BLOCK_BYTES != 0) return 0;
    memcpy(out, cipher, n);
    if (!ssc_aes128_cbc(0, key, (const unsigned char *)iv, out, n)) {
        explicit_bzero(out, n);
        return 0;
    }
    unsigned char pad = out[n - 1], bad = (unsigned char)(pad == 0 || pad > SSC_BLOCK_BYTES);
    for (size_t i = 0; i < SSC_BLOCK_BYTES; i++) {   // every candidate byte, whatever the padding's length
        unsigned char inside = (unsigned char)(i < pad);
        bad |= (unsigned char)(inside & (out[n - 1 - i] != pad));
    }
    if (bad) {
        explicit_bzero(out, n);
        return 0;
    }
    *n_plain = n - pad;
    return 1;
}

#endif
