#!/usr/bin/env bash
# Whole-process time of `securestore get` (release build): a passphrase store after `unlock`, the same store
# with its passphrase in the environment (Argon2id in every call), and a key-file store. Prints the median
# and the spread of N calls each (default 20). Needs the kernel keyring (keyctl) for the unlocked row; under
# scripts/with-keyring.sh it also times a Secret Service `get` against `secret-tool lookup` of the same item.
# Usage: scripts/measure-unlock.sh [N] [extra swift build flags, e.g. --static-swift-stdlib]
set -euo pipefail
n="${1:-20}"
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
swift build --package-path "$root" -c release --product securestore "$@" >&2
tool="$(swift build --package-path "$root" -c release --show-bin-path)/securestore"
echo "tool: $tool ${*:-(shared Swift runtime)}; $(ldd "$tool" | wc -l) shared libraries"
dir="$(mktemp -d)"
trap 'SECURESTORE_CONFIG="$dir/pass.json" "$tool" lock >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
printf '{"sqlite": {"path": "%s/p.db", "passphraseEnv": "MEASURE_PASSPHRASE"}}' "$dir" > "$dir/pass.json"
printf '{"sqlite": {"path": "%s/k.db", "keyFile": "%s/k.key"}}' "$dir" "$dir" > "$dir/key.json"
printf 'value' | MEASURE_PASSPHRASE=pw SECURESTORE_CONFIG="$dir/pass.json" "$tool" add --service s --account a
printf 'value' | SECURESTORE_CONFIG="$dir/key.json" "$tool" add --service s --account a

# median and min/max in milliseconds of N runs of "$@"
time_runs() {
    local times=() t0 t1
    for ((i = 0; i < n; i++)); do
        t0=$(date +%s%N); "$@" </dev/null >/dev/null; t1=$(date +%s%N)
        times+=($(( (t1 - t0) / 1000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk -v n="$n" '{a[NR]=$1} END {
        m = (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
        printf "median %.1f ms (min %.1f, max %.1f)\n", m/1000, a[1]/1000, a[n]/1000 }'
}

echo "passphrase store, passphrase in the environment (Argon2id per call): $(MEASURE_PASSPHRASE=pw SECURESTORE_CONFIG="$dir/pass.json" time_runs "$tool" get --service s --account a)"
MEASURE_PASSPHRASE=pw SECURESTORE_CONFIG="$dir/pass.json" "$tool" unlock --for 5m >/dev/null
echo "passphrase store after unlock (no passphrase given):           $(SECURESTORE_CONFIG="$dir/pass.json" time_runs "$tool" get --service s --account a)"
echo "key-file store:                                                $(SECURESTORE_CONFIG="$dir/key.json" time_runs "$tool" get --service s --account a)"
echo "securestore --help (process start only):                       $(time_runs "$tool" --help)"
# The Secret Service against libsecret's own tool on the same daemon (under scripts/with-keyring.sh).
ss_status=0
"$tool" --backend secret-service find --service measure-unlock </dev/null >/dev/null 2>&1 || ss_status=$?
if command -v secret-tool >/dev/null && [ "$ss_status" -le 1 ]; then   # 0 found, 1 none: the service answers
    printf 'value' | "$tool" --backend secret-service add --service measure-unlock --account a --update-existing
    echo "secret-service get:                                            $(time_runs "$tool" --backend secret-service get --service measure-unlock --account a)"
    echo "secret-tool lookup (same daemon, same item):                   $(time_runs secret-tool lookup service measure-unlock account a)"
    "$tool" --backend secret-service delete --service measure-unlock --account a >/dev/null
else
    echo "secret-service: no Secret Service on the session bus (run under scripts/with-keyring.sh for that row)"
fi
SECURESTORE_CONFIG="$dir/pass.json" "$tool" lock >/dev/null
if SECURESTORE_CONFIG="$dir/pass.json" "$tool" get --service s --account a </dev/null >/dev/null 2>"$dir/err"; then
    echo "after lock: the store still opened (unexpected)"; exit 1
fi
echo "after lock: $(sed 's/.*cannot be used: //' "$dir/err" | cut -c1-110)..."
