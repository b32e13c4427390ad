#!/usr/bin/env bash
# Builds every libFuzzer harness once (-sanitize=fuzzer,address, scratch path .build/fuzz), then runs each
# for SECONDS (default 60), as many at once as there are cores. New inputs go to .build/fuzz/corpus/<name> (not the repository); the seeds in
# Fuzz/corpus/<name> and the kept crashes in Fuzz/regressions/<name> are read as well.
# A crash or finding stops the run with the input saved as .build/fuzz/artifacts/<name>/crash-…: fix it,
# then copy the input into Fuzz/regressions/<name>/ so `swift test` (FuzzRegressionTests) replays it.
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]     (harnesses: secitem config record export cli)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[ $# -gt 0 ] && shift
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(secitem config record export cli)
scratch=.build/fuzz
flags=(-Xswiftc -sanitize=fuzzer,address -Xswiftc -DSECURESTORE_LIBFUZZER --scratch-path "$scratch")

start=$(date +%s)
for h in "${harnesses[@]}"; do
  # The gold linker prints many harmless "Cannot export local symbol '__asan_…'" warnings: kept in the log.
  mkdir -p "$scratch/logs"
  if ! swift build "${flags[@]}" --product "fuzz-$h" >"$scratch/logs/build-$h.log" 2>&1; then
    grep -v "Cannot export local symbol" "$scratch/logs/build-$h.log" | grep -E "error" | head -40 >&2 || true
    echo "fuzz: building fuzz-$h failed (log: $scratch/logs/build-$h.log)" >&2
    exit 1
  fi
done
bin="$(swift build "${flags[@]}" --show-bin-path)"
echo "fuzz: built ${#harnesses[@]} harness(es) in $(( $(date +%s) - start )) s"

# Each harness runs on one core: as many at once as there are cores (SECURESTORE_FUZZ_JOBS to change it).
run_one() {
  local h="$1" work="$scratch/corpus/$1" artifacts="$scratch/artifacts/$1" log="$scratch/logs/$1.log"
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  local dict=(); [ -f "Fuzz/dict/$h.dict" ] && dict=(-dict="Fuzz/dict/$h.dict")
  local dirs=("$work" "Fuzz/corpus/$h"); [ -d "Fuzz/regressions/$h" ] && dirs+=("Fuzz/regressions/$h")
  local rc=0
  # The Swift runtime's backtracer would take over the crash from ASan/libFuzzer: off.
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" "$bin/fuzz-$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
  local runs speed cov
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $h FAILED (exit $rc) after ${runs:-?} runs; input saved in $artifacts/. Log tail:" >&2
    grep -v "Cannot export local symbol" "$log" | tail -40 >&2
    return 1
  fi
  echo "fuzz: $h ok (${seconds} s): ${runs:-?} runs, ${speed:-?} exec/s, ${cov:-cov ?}, corpus $(ls "$work" | wc -l) file(s), no crash"
}

jobs="${SECURESTORE_FUZZ_JOBS:-$(nproc)}"
status=0
pids=()
for h in "${harnesses[@]}"; do
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
  run_one "$h" & pids+=("$!")
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit "$status"
