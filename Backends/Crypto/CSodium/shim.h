#pragma once
#include <sodium.h>

/// Zeroes `CSODIUM_BURN_BYTES` of the calling thread's stack below the caller: what a key derivation left in
/// its dead stack frames (Argon2's last BLAKE2b output buffer holds the derived key) is gone when it returns.
#define CSODIUM_BURN_BYTES 65536
__attribute__((noinline)) static void csodium_burn_stack(void) {
    unsigned char frame[CSODIUM_BURN_BYTES];
    sodium_memzero(frame, sizeof frame);
    __asm__ __volatile__("" : : "r"(frame) : "memory");
}
