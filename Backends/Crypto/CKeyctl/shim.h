#pragma once
// The Linux key-management system calls (add_key(2), keyctl(2)) as plain functions: Swift cannot call the
// variadic syscall(2). Only the C library's headers are needed (no libkeyutils, no -dev package); every
// call returns -1 with errno set on failure, as the system calls do.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>

static inline int32_t securestore_add_key(const char *type, const char *description, const void *payload,
                                          size_t length, int32_t keyring) {
#ifdef SYS_add_key
    return (int32_t)syscall(SYS_add_key, type, description, payload, length, keyring);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static inline long securestore_keyctl(int operation, unsigned long arg2, unsigned long arg3, unsigned long arg4,
                                      unsigned long arg5) {
#ifdef SYS_keyctl
    return syscall(SYS_keyctl, operation, arg2, arg3, arg4, arg5);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static inline long securestore_keyctl_search(int32_t keyring, const char *type, const char *description) {
#ifdef SYS_keyctl
    return syscall(SYS_keyctl, 10 /* KEYCTL_SEARCH */, keyring, type, description, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static inline long securestore_keyctl_read(int32_t key, void *buffer, size_t length) {
#ifdef SYS_keyctl
    return syscall(SYS_keyctl, 11 /* KEYCTL_READ */, key, buffer, length, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
