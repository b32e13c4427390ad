#!/usr/bin/env bash
# Runs the whole test suite under ThreadSanitizer and AddressSanitizer, each in its own build folder
# (.build/tsan, .build/asan) so the normal build in .build is not invalidated. The Secret Service tests run
# too (inside scripts/with-keyring.sh), and so do the PostgreSQL tests (inside scripts/with-postgres.sh).
# Any sanitizer report fails the run.
# Usage: scripts/sanitize.sh [thread] [address]     (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=("$@")
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(thread address)

# Every backend's tests run: a missing service is a failure, not a skip.
export SECURESTORE_REQUIRE_ALL_BACKENDS=1
# The Swift runtime's backtracer would take over crashes from the sanitizer's own report: off.
export SWIFT_BACKTRACE=enable=no
# TSan: exit non-zero on any report. ASan: LeakSanitizer off — the Swift runtime's metadata caches and
# GLib's/libsecret's process-lifetime singletons are never freed by design and would be reported as leaks.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0 exitcode=66}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0 halt_on_error=1}"

for sanitizer in "${sanitizers[@]}"; do
  case "$sanitizer" in
    thread) scratch=.build/tsan ;;
    address) scratch=.build/asan ;;
    *) echo "sanitize: unknown sanitizer $sanitizer (thread or address)" >&2; exit 2 ;;
  esac
  start=$(date +%s)
  echo "sanitize: building the tests with --sanitize=$sanitizer in $scratch"
  mkdir -p "$scratch"
  if ! swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" >"$scratch/sanitize-build.log" 2>&1; then
    grep -E "error" "$scratch/sanitize-build.log" | head -40 >&2 || true
    echo "sanitize: build with --sanitize=$sanitizer failed (log: $scratch/sanitize-build.log)" >&2
    exit 1
  fi
  built=$(date +%s)
  log="$scratch/sanitize-test.log"
  rc=0
  scripts/with-postgres.sh scripts/with-keyring.sh swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" >"$log" 2>&1 || rc=$?
  reports=$(grep -c -E "WARNING: ThreadSanitizer|ERROR: AddressSanitizer" "$log" || true)
  summary=$(grep -E "Test run with|Executed [0-9]+ tests" "$log" | tail -2 | tr '\n' ' ')
  echo "sanitize: $sanitizer: build $(( built - start )) s, tests $(( $(date +%s) - built )) s, $reports report(s), exit $rc; $summary"
  if [ "$rc" -ne 0 ] || [ "$reports" -ne 0 ]; then
    grep -E -A25 "WARNING: ThreadSanitizer|ERROR: AddressSanitizer" "$log" | head -120 >&2 || true
    grep -E "✘" "$log" | head -40 >&2 || true
    echo "sanitize: $sanitizer FAILED (full log: $log)" >&2
    exit 1
  fi
done
