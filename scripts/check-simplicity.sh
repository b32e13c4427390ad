#!/usr/bin/env bash
# Checks that the library keeps to standard APIs where a clever one saved a few percent (issue 31). Each check
# is a named function listed in `checks`; each prints what it found and returns 1 when it found something.
# Exit 1 when any check failed.
set -euo pipefail
cd "$(dirname "$0")/.."

code=(Sources Backends)

# Hashing through the standard library's `hash(into:)` only: no override of `_rawHashValue(seed:)`.
no_raw_hash_overrides() {
  ! grep -rn --include='*.swift' '_rawHashValue' "${code[@]}"
}

# No underscored standard-library entry points (`._name` members, `_name(` functions) and no underscored
# attributes, except `@_exported` (the language's only way for a backend module to re-export the key types
# of SecureStoreCrypto). The fuzz harnesses' `@_cdecl`/`@_silgen_name` (libFuzzer's entry points) are outside
# Sources and Backends.
no_underscored_standard_library() {
  ! grep -rnE --include='*.swift' '@_[a-zA-Z]|\._[a-z][A-Za-z]*|(^|[^A-Za-z0-9_.])_[a-z][A-Za-z]*\(' "${code[@]}" \
    | grep -v '@_exported public import ' \
    | grep -vE '^[^:]+:[0-9]+:\s*///?'
}

# Attribute names in standard sets: no bit-mask set with a cap on how many attribute codes there may be.
no_attribute_code_cap() {
  ! grep -rnE --include='*.swift' 'struct AttributeSet|bits\.count < 64|More than 64 attribute codes' "${code[@]}"
}

# Persistent references come from `SystemRandomNumberGenerator`: no per-process pool of random bytes with fork
# handlers in every process.
no_reference_pool() {
  ! grep -rnE --include='*.swift' 'ReferenceSource|MADV_WIPEONFORK|pthread_atfork' "${code[@]}"
}

# One copy of FNV-1a (Sources/SecureStore/FNV.swift) and of SplitMix64's mixer: each constant in one file.
one_copy_of_each_hash() {
  local failed=0 constant files
  for constant in 'cbf29ce484222325' 'bf58476d1ce4e5b9'; do
    files=$(grep -rliE --include='*.swift' "0x$(sed -E 's/(....)/\1_?/g; s/_\?$//' <<<"$constant")" "${code[@]}" || true)
    if [ "$(grep -c . <<<"$files")" -gt 1 ]; then
      echo "0x$constant appears in more than one file:"; echo "$files"; failed=1
    fi
  done
  return "$failed"
}

checks=(no_raw_hash_overrides no_underscored_standard_library no_attribute_code_cap no_reference_pool
        one_copy_of_each_hash)

status=0
for check in "${checks[@]}"; do
  if "$check"; then echo "simplicity: $check ok"; else echo "simplicity: $check FAILED"; status=1; fi
done
exit "$status"
