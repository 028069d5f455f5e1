#!/usr/bin/env bash
# scripts/fuzz.sh [seconds]: builds the libFuzzer targets of fuzz/ with clang (ASan, UBSan) in
# build-fuzz/ and runs each one: first once over the deep and huge inputs fuzz/make_huge_seeds.py
# writes, then fuzzing for [seconds] (default 60) from the committed seed corpus. Prints per
# target the executions, executions per second and libFuzzer's coverage (cov: edges, ft:
# features) and exits non-zero if any target crashed, hung, ran out of memory or broke one of
# its checks, naming the input libFuzzer saved and the log.
#
# The working corpus lives in build-fuzz/fuzz-work/corpus/<target> and grows from run to run, so
# longer runs (`bash scripts/fuzz.sh 3600`) keep what earlier ones found; the repository's seeds
# are only copied in. FUZZ_BUILD_DIR picks another build directory, FUZZ_JOBS ninja's -j,
# FUZZ_PARALLEL how many targets fuzz at once (default: one per core).
#
# scripts/fuzz.sh --build-only: builds the targets and runs none (scripts/test.sh builds them
# beside its other stages, then runs them after ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build_only=false
if [ "$seconds" = "--build-only" ]; then build_only=true; seconds=0; fi
case "$seconds" in
  '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [seconds per target | --build-only]" >&2; exit 2 ;;
esac

bash scripts/setup.sh
build="${FUZZ_BUILD_DIR:-build-fuzz}"
# -O1 with line tables, as OSS-Fuzz builds fuzz targets. No NDEBUG: asserts stay armed.
cmake -S . -B "$build" -G Ninja -DGRAINTUNE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  >/dev/null
build_start=$SECONDS
if ! nice -n 10 ninja -C "$build" ${FUZZ_JOBS:+-j "$FUZZ_JOBS"} fuzzers \
    >"$build/fuzz-build.log" 2>&1; then
  tail -n 40 "$build/fuzz-build.log" >&2
  echo "fuzz: build failed (full log: $build/fuzz-build.log)" >&2
  exit 1
fi
echo "fuzz: built in $((SECONDS - build_start)) s"
$build_only && exit 0

work="$build/fuzz-work"
rm -rf "$work/huge" "$work/logs"
mkdir -p "$work/logs"
python3 fuzz/make_huge_seeds.py "$work/huge"

# The admitter's -max_len covers real objects with long scripts and the 512-level limit with
# room to spare; the huge inputs are run whole, not mutated. Smaller inputs for the rest.
declare -A max_len=([admission]=131072 [shell_words]=16384 [yaml_config]=16384
                    [metrics_line]=4096 [quantity]=256 [steps_document]=65536)
# A deep or huge input gets 20 s under the sanitizers (the slowest linear one takes under 8 s
# on a loaded 2-core machine; a quadratic step takes hours on them); a mutated one 10 s.
common=(-rss_limit_mb=2048)

# What went wrong, from a libFuzzer log.
first_error() {
  grep -m1 -oE 'ERROR: .*|runtime error: .*|ALARM: .*|what\(\): .*' "$1" | cut -c1-120 || true
}

# One target: its deep and huge inputs, then fuzzing. Writes its table row to $work/rows/<target>
# and each failure as a line of $work/failed/<target>.
fuzz_target() {
  local target="$1"
  local binary="$build/fuzz/${target}_fuzzer"
  local corpus="$work/corpus/$target"
  local artifacts="$work/artifacts/$target/"
  local failures="$work/failed/$target"
  mkdir -p "$corpus" "$artifacts"
  cp -n fuzz/corpus/"$target"/* "$corpus"/
  local dict=()
  [ -f "fuzz/dictionaries/$target.dict" ] && dict=(-dict="fuzz/dictionaries/$target.dict")

  # Each deep or huge input once, in its own process, so one failure does not hide the next.
  local huge_total=0 huge_failures=0 input huge_log
  for input in "$work/huge/$target"/*; do
    huge_total=$((huge_total + 1))
    huge_log="$work/logs/$target-$(basename "$input").log"
    if ! "$binary" "${common[@]}" -timeout=20 -artifact_prefix="$artifacts" "$input" \
        >"$huge_log" 2>&1; then
      echo "$target on $input: $(first_error "$huge_log"), log $huge_log" >>"$failures"
      huge_failures=$((huge_failures + 1))
    fi
  done

  local log="$work/logs/$target.log" status=ok
  if ! "$binary" "${common[@]}" -timeout=10 "${dict[@]}" -max_len="${max_len[$target]}" \
      -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" \
      >"$log" 2>&1; then
    status=FAILED
    input=$(grep -m1 'Test unit written' "$log" | sed 's/.*written to //' || true)
    echo "$target: $(first_error "$log"), input $input, log $log" >>"$failures"
  fi
  local execs rate final cov ft corp
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  final=$(grep -E '^#[0-9]+.* cov: ' "$log" | tail -n 1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$final")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$final")
  corp=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$final")
  printf '%-14s %12s %9s %7s %8s %7s  %s, %d of %d huge inputs failed\n' "$target" \
    "${execs:--}" "${rate:--}" "${cov:--}" "${ft:--}" "${corp:--}" "$status" "$huge_failures" \
    "$huge_total" >"$work/rows/$target"
}

# Each target is one process on one core (libFuzzer's default, -jobs unset), so as many run at
# once as the machine has cores (FUZZ_PARALLEL): every target still gets its full [seconds].
targets=(admission shell_words metrics_line quantity yaml_config steps_document)
parallel="${FUZZ_PARALLEL:-$(nproc)}"
rm -rf "$work/rows" "$work/failed"
mkdir -p "$work/rows" "$work/failed"
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz_target "$target" &
  running=$((running + 1))
done
wait

printf '%-14s %12s %9s %7s %8s %7s  %s\n' target executions exec/s cov ft corpus fuzzing
for target in "${targets[@]}"; do
  if [ -s "$work/rows/$target" ]; then cat "$work/rows/$target"; else echo "$target: no result"; fi
done
failed="$(cat "$work/failed"/* 2>/dev/null || true)"
for target in "${targets[@]}"; do
  [ -s "$work/rows/$target" ] || failed+="${failed:+$'\n'}$target: ended without a result (see $work/logs/)"
done
if [ -n "$failed" ]; then
  sed 's/^/fuzz: FAILED /' <<<"$failed" >&2
  echo "fuzz: reproduce with $build/fuzz/<target>_fuzzer <input>; once fixed, add the input to" \
    "fuzz/corpus/<target>/" >&2
  exit 1
fi
