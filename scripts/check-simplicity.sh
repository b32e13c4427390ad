#!/usr/bin/env bash
# Rules of the package's shape (a lean core, standard APIs where a clever one saved a few percent) that could come back unnoticed, each a named check that fails CI with what it
# found and the rule it breaks. Run by .ci/run after the doc links (seconds; reads files, builds nothing).
# Usage: scripts/check-simplicity.sh            (exit 1 when any check fails; every check runs)
set -uo pipefail
cd "$(dirname "$0")/.."

# The package's text files: source, manifests, scripts and documents (never the build or git folders).
text_files() {
    find . \( -path ./.build -o -path ./.git -o -path '*/.build' \) -prune -o -type f \
        \( -name '*.swift' -o -name '*.md' -o -name '*.sh' -o -name '*.py' -o -name 'run' \) -print
}

# The manifest's declaration of one target: from `name: "X"` to the end of that target's entry.
target_entry() {
    python3 - "$1" <<'PY'
import re, sys
text = open("Package.swift", encoding="utf-8").read()
m = re.search(r'\.(?:target|executableTarget|testTarget)\(name:\s*"' + re.escape(sys.argv[1]) + r'"(.*?)\),\n', text, re.S)
print(m.group(1) if m else "")
PY
}

# No `@_exported` import: every module imports what it uses, and a product's types are named through it.
no_exported_imports() {
    local found
    found="$(text_files | grep '\.swift$' | xargs grep -n '@_exported' 2>/dev/null)"
    [ -z "$found" ] || { echo "$found"; echo "use a plain import in each module that needs the types (a product for them if users do)"; return 1; }
}

# The core module is SecureStoreCore: an `import SecureStore` line (Swift, or a code block, or a generated
# package in a script) names a module that no longer exists.
no_old_core_import() {
    local found
    found="$(text_files | xargs grep -nE '^\s*(@testable\s+|(public|internal|package|fileprivate|private)\s+)*import\s+SecureStore\s*(//.*)?$' 2>/dev/null)"
    [ -z "$found" ] || { echo "$found"; echo "write import SecureStoreCore (the protocol keeps its name SecureStore)"; return 1; }
}

# The core holds the protocol, queries, semantics and errors: it imports no module of a backend, of the
# configuration or of the SecItem layer, declares no dependency in the manifest, and defines no selection type.
core_imports_no_backend_or_config() {
    local found entry status=0
    found="$(grep -nE '^\s*(@testable\s+|(public|internal|package)\s+)*import\s+(SecureStore[A-Za-z]+|SecItem|C(SQLite|Sodium|Secret|LibPQ|Keyctl|ProcessControl|Probe))\b' \
        Sources/SecureStoreCore/*.swift | grep -v 'import SecureStoreCore\b')"
    [ -z "$found" ] || { echo "$found"; echo "the core imports no backend, configuration or SecItem module"; status=1; }
    entry="$(target_entry SecureStoreCore)"
    if [ -z "$entry" ]; then echo "Package.swift: no SecureStoreCore target found"; status=1
    elif grep -q 'dependencies:' <<<"$entry"; then echo "Package.swift: the SecureStoreCore target declares dependencies"; status=1; fi
    found="$(grep -nE '^\s*(public\s+|package\s+)?(enum|struct|class|final class|typealias|protocol)\s+(BackendRegistry|BackendFactory|BackendSettings|ConfigValue|ConfigFile|PassphrasePrompt|StoreSelection|JSONKeys|XDG)\b' \
        Sources/SecureStoreCore/*.swift)"
    [ -z "$found" ] || { echo "$found"; echo "selection and configuration types live in SecureStoreBackends (XDG in SecureStorePaths)"; status=1; }
    return $status
}

# The credential helpers name eight of Apple's codes; for them they do not import SecItem (and its
# process-wide store), in source or in the manifest.
credentials_do_not_import_secitem() {
    local found entry status=0
    found="$(grep -nE '^\s*(@testable\s+|(public|internal|package)\s+)*import\s+SecItem\b' Sources/SecureStoreCredentials/*.swift)"
    [ -z "$found" ] || { echo "$found"; echo "SecureStoreCredentials takes Apple's codes from AppleCodes.swift, not from SecItem"; status=1; }
    entry="$(target_entry SecureStoreCredentials)"
    if grep -q '"SecItem"' <<<"$entry"; then echo "Package.swift: SecureStoreCredentials depends on SecItem"; status=1; fi
    return $status
}

code=(Sources Backends)

# Hashing through the standard library's `hash(into:)` only: no override of `_rawHashValue(seed:)`.
no_raw_hash_overrides() {
  ! grep -rn --include='*.swift' '_rawHashValue' "${code[@]}"
}

# No underscored standard-library entry points (`._name` members, `_name(` functions) and no underscored
# attributes. The fuzz harnesses' `@_cdecl`/`@_silgen_name` (libFuzzer's entry points) are outside Sources and
# Backends.
no_underscored_standard_library() {
  ! grep -rnE --include='*.swift' '@_[a-zA-Z]|\._[a-z][A-Za-z]*|(^|[^A-Za-z0-9_.])_[a-z][A-Za-z]*\(' "${code[@]}" \
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

# One copy of FNV-1a (Sources/SecureStoreCore/FNV.swift) and of SplitMix64's mixer: each constant in one file.
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

# No reinterpretation of bits in the product (`unsafeBitCast`): a C function pointer such as SIG_IGN is compared
# in C, at the edge (CProcessControl's cprocess_signal_ignored).
no_unsafe_bitcast() {
  ! grep -rn --include='*.swift' 'unsafeBitCast' "${code[@]}"
}

checks=(no_exported_imports no_old_core_import core_imports_no_backend_or_config credentials_do_not_import_secitem
        no_raw_hash_overrides no_underscored_standard_library no_attribute_code_cap no_reference_pool one_copy_of_each_hash
        no_unsafe_bitcast)

failed=0
for check in "${checks[@]}"; do
    if out="$("$check" 2>&1)"; then
        echo "simplicity: $check: ok"
    else
        echo "simplicity: $check: FAILED" >&2
        printf '%s\n' "$out" | sed "s/^/simplicity: $check: /" >&2
        failed=1
    fi
done
exit $failed
