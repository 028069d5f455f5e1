#!/usr/bin/env bash
# graintune-launcher end to end with a stand-in trainer: a shell command that records the argv of
# each start. Shows: the lap runs first with admission's value and the lap's overrides after the
# command's own; the trainer then starts with the operator's answer and without them; a failed
# lap waits for the slice's answer and starts with it (a missing answer or "none": the command as
# written), as do unusable flags; a lap still running when the operator answers "none" (another
# host's lap failed) is called off; the result file names the value the trainer started with; an answer already there when the launcher starts means no lap at all; after
# a lap, the launcher's watcher adds to the result whether the trainer found its train step in the
# JAX cache the lap filled; a container restarted in a pod whose lap had started runs no second lap.
# Usage: launcher_binary_test.sh PATH-TO-graintune-launcher
set -euo pipefail
LAUNCHER="$1"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
FAILED=0
fail() { echo "FAIL: $*" >&2; FAILED=1; }

# The stand-in trainer: records its words; started as a lap, it leaves a compiled train step in
# $CACHE (if set), plays the operator (writes $LAP_ANSWER, if set, into the answer file), runs on
# for $SLEEP_LAP seconds (if set) and (FAIL_LAP=1) fails; started as the trainer, it compiles its own train step (TRAINER_COMPILES=1)
# and writes its first step into $METRICS (if set).
TRAINER='printf "%s\n" "$*" >> "$CALLS"; case "$*" in *enable_checkpointing=false*) [ -n "${CACHE:-}" ] && touch "$CACHE/jit_train_step-lap"; [ -n "${LAP_ANSWER:-}" ] && echo "$LAP_ANSWER" > "$ANSWER"; [ -n "${SLEEP_LAP:-}" ] && sleep "$SLEEP_LAP"; [ "${FAIL_LAP:-0}" = 1 ] && exit 1;; *) [ "${TRAINER_COMPILES:-0}" = 1 ] && touch "$CACHE/jit_train_step-trainer"; [ -n "${METRICS:-}" ] && echo "{\"step\": 0}" >> "$METRICS";; esac; exit 0'
launch() {  # launch ANSWER-WAIT [extra flags...]: each launch is a new pod (no lap marker yet)
  local wait="$1"; shift
  rm -f "$WORK/lap.started"
  relaunch "$wait" "$@"
}
relaunch() {  # relaunch ANSWER-WAIT [extra flags...]: the same pod's container started again
  local wait="$1"; shift
  : > "$WORK/calls"
  CALLS="$WORK/calls" ANSWER="$WORK/answer" "$LAUNCHER" --value-at 4:19:21 --admission-value 64 --lap-after-arg 5 \
    --lap-steps 40 --lap-timeout 30s --answer-wait "$wait" --answer-file "$WORK/answer" \
    --lap-directory "$WORK/lap" --lap-metrics-file "$WORK/lap.jsonl" --result-file "$WORK/result.json" \
    "$@" -- /bin/sh -c "$TRAINER" trainer grain_worker_count=64 steps=100 2>"$WORK/log"
}
expect_calls() {  # expect_calls CASE LINE...
  local case="$1"; shift
  local want; want="$(printf "%s\n" "$@")"
  [ "$(cat "$WORK/calls")" = "$want" ] || fail "$case: the commands were
$(cat "$WORK/calls")
expected
$want"
}
LAP="grain_worker_count=64 steps=100 steps=40 enable_checkpointing=false async_checkpointing=false base_output_directory=$WORK/lap run_name=graintune-practice-lap metrics_file=$WORK/lap.jsonl eval_interval=-1 enable_tensorboard=false gcs_metrics=false save_config_to_gcs=false dump_hlo=false enable_goodput_recording=false monitor_goodput=false managed_mldiagnostics=false profiler=''"

rm -f "$WORK/answer"
LAP_ANSWER=9 launch 5s
expect_calls "answered 9" "$LAP" "grain_worker_count=9 steps=100"
grep -q '"completed":true' "$WORK/result.json" || fail "the result file says $(cat "$WORK/result.json")"
[ ! -e "$WORK/lap" ] || fail "the lap's directory was left behind"
grep -q "starting the trainer: 9 workers, the run's value from its practice lap" "$WORK/log" ||
  fail "the log says $(cat "$WORK/log")"
grep -q '"trainer_workers":9' "$WORK/result.json" && grep -q '"trainer_value_why":"the run' "$WORK/result.json" ||
  fail "the result file names no starting value: $(cat "$WORK/result.json")"
grep -q trainer_compile "$WORK/result.json" && fail "no --trainer-metrics-file, yet a compile verdict: $(cat "$WORK/result.json")"

# The same pod's container restarted after a lap that took it down (an OOM kill of the whole
# container): the marker the first lap left means no second lap, and admission's value at once.
[ -e "$WORK/lap.started" ] || fail "the lap left no marker beside its folder"
# It waits for the slice's answer as every host does: none came here, so admission's value.
rm -f "$WORK/answer"
LAP_ANSWER=9 relaunch 1s
expect_calls "restarted" "grain_worker_count=64 steps=100"
grep -q '"completed":false' "$WORK/result.json" && grep -q 'the container restarted before it ended' "$WORK/result.json" ||
  fail "restarted: the result file says $(cat "$WORK/result.json")"
grep -q "no second lap: a lap already started in this pod" "$WORK/log" &&
  grep -q "starting the trainer: 64 workers, admission's value: no answer from graintune's operator within 1 s" "$WORK/log" ||
  fail "restarted: the log says $(cat "$WORK/log")"
grep -q '"trainer_workers":64' "$WORK/result.json" && grep -q '"trainer_value_why":"admission' "$WORK/result.json" ||
  fail "restarted: the result file names no starting value: $(cat "$WORK/result.json")"

# The compile-cache watch. It outlives the launcher by up to a second: its verdict is waited for.
verdict_is() {  # verdict_is CASE VERDICT ("watching" until the watcher's verdict is in)
  for _ in $(seq 1 100); do
    grep '"trainer_compile"' "$WORK/result.json" | grep -vq '"trainer_compile":"watching"' && break
    sleep 0.1
  done
  grep -q "\"trainer_compile\":\"$2\"" "$WORK/result.json" || fail "$1: the result file says $(cat "$WORK/result.json")"
}
fresh_watch() { rm -rf "$WORK/answer" "$WORK/home" "$WORK/metrics.jsonl"; mkdir -p "$WORK/home/jax_cache"; }
# MaxText's default cache, ~/jax_cache, under the launcher's HOME.
fresh_watch
HOME="$WORK/home" CACHE="$WORK/home/jax_cache" METRICS="$WORK/metrics.jsonl" LAP_ANSWER=9 \
  launch 5s --trainer-metrics-file "$WORK/metrics.jsonl"
verdict_is "the trainer ran the lap's train step" "cache hit"
fresh_watch
TRAINER_COMPILES=1 CACHE="$WORK/home/jax_cache" METRICS="$WORK/metrics.jsonl" LAP_ANSWER=9 \
  launch 5s --trainer-metrics-file "$WORK/metrics.jsonl" --compile-cache-dir "$WORK/home/jax_cache"
verdict_is "the trainer compiled its own" "compiled"
fresh_watch
HOME="$WORK/home" METRICS="$WORK/metrics.jsonl" LAP_ANSWER=9 launch 5s --trainer-metrics-file "$WORK/metrics.jsonl"
verdict_is "the lap left no train step" "unknown"
grep -q '"trainer_compile_why":"the lap left no compiled train step' "$WORK/result.json" ||
  fail "the result file says $(cat "$WORK/result.json")"

# A lap that failed here waits for the slice's answer, and starts with it: the operator answers
# "none" once it reads the failure, and admission's value is every host's.
rm -f "$WORK/answer"
FAIL_LAP=1 LAP_ANSWER="none: the lap of tiny-0 exited 1" launch 5s
expect_calls "failed lap" "$LAP" "grain_worker_count=64 steps=100"
grep -q '"outcome":"exited 1"' "$WORK/result.json" || fail "the result file says $(cat "$WORK/result.json")"
grep -q "waiting for the slice's answer" "$WORK/log" || fail "failed lap: the log says $(cat "$WORK/log")"
# ... and were the slice's answer a value, this host would start with it too: one value per slice.
rm -f "$WORK/answer"
FAIL_LAP=1 LAP_ANSWER=9 launch 5s
expect_calls "failed lap, the slice's value" "$LAP" "grain_worker_count=9 steps=100"
# ... and with no answer at all, admission's value once the wait is over, as on every host.
rm -f "$WORK/answer"
FAIL_LAP=1 launch 1s
expect_calls "failed lap, no answer" "$LAP" "grain_worker_count=64 steps=100"

# Another host's lap failed: the operator answers "none" while this lap still runs, and the lap
# is called off at once (not after its 30 s timeout), its group stopped, and admission's value starts.
rm -f "$WORK/answer"
SLEEP_LAP=25 LAP_ANSWER="none: the lap of tiny-1 was killed by signal 9" launch 5s
expect_calls "called off" "$LAP" "grain_worker_count=64 steps=100"
grep -q '"outcome":"called off after [0-9]* s: graintune' "$WORK/result.json" ||
  fail "called off: the result file says $(cat "$WORK/result.json")"
grep -q '"outcome":"called off after \(2[5-9]\|3[0-9]\) s' "$WORK/result.json" &&
  fail "called off only at the lap's end: $(cat "$WORK/result.json")"

# A lap folder that cannot be made (here under a file): no lap, and the trainer starts as written.
rm -f "$WORK/answer"
: > "$WORK/not-a-folder"
LAP_ANSWER=9 launch 5s --lap-directory "$WORK/not-a-folder/lap"
expect_calls "no lap folder" "grain_worker_count=64 steps=100"
grep -q "no lap (cannot create $WORK/not-a-folder/lap" "$WORK/log" || fail "the log says $(cat "$WORK/log")"

rm -f "$WORK/answer"
LAP_ANSWER="none: host tiny-1 sent no figures" launch 5s
expect_calls "answered none" "$LAP" "grain_worker_count=64 steps=100"
grep -q "host tiny-1 sent no figures" "$WORK/log" || fail "the log says $(cat "$WORK/log")"

: > "$WORK/answer"
launch 1s
expect_calls "no answer" "$LAP" "grain_worker_count=64 steps=100"
grep -q "no answer from graintune's operator within 1 s" "$WORK/log" || fail "the log says $(cat "$WORK/log")"

launch 5s --value-at 4:0:5
expect_calls "a range that holds no count: no lap" "grain_worker_count=64 steps=100"
launch 5s --value-at 4:19:20
expect_calls "a range on part of the value: no lap" "grain_worker_count=64 steps=100"

launch 5s --lap-steps many
expect_calls "unusable flags" "grain_worker_count=64 steps=100"

# Answered before any lap (an attempt that resumes its run): no lap, the answer's value.
echo "none: attempt 1 resumes its run" > "$WORK/answer"
launch 5s
expect_calls "decided before the lap" "grain_worker_count=64 steps=100"
grep -q "no lap: attempt 1 resumes its run" "$WORK/log" || fail "the log says $(cat "$WORK/log")"
echo 12 > "$WORK/answer"
launch 5s
expect_calls "a value before the lap" "grain_worker_count=12 steps=100"

mkdir "$WORK/bin"
"$LAUNCHER" --install "$WORK/bin"
[ -x "$WORK/bin/graintune-launcher" ] || fail "--install did not copy the launcher"
"$WORK/bin/graintune-launcher" -- /bin/true || fail "the installed copy does not run"

# The start check: --install puts its Python beside the launcher; with --start-check-report the
# trainer (lap or not) starts with that folder first on PYTHONPATH (the image's own after it)
# and the check's settings in GRAINTUNE_START_CHECK.
[ -f "$WORK/bin/python/sitecustomize.py" ] && [ -f "$WORK/bin/python/graintune_start_check.py" ] ||
  fail "--install did not write the start check's Python"
SEEN='printf "%s|%s\n" "${PYTHONPATH:-}" "${GRAINTUNE_START_CHECK:-}" > "$OUT"'
OUT="$WORK/seen" PYTHONPATH=/image/site "$WORK/bin/graintune-launcher" --admission-value 13 \
  --start-check-report "$WORK/start-check.json" --start-check-timeout 90s -- /bin/sh -c "$SEEN" 2>"$WORK/log"
[ "$(cat "$WORK/seen")" = "$WORK/bin/python:/image/site|{\"admission_value\":13,\"report\":\"$WORK/start-check.json\",\"timeout_seconds\":90}" ] ||
  fail "the trainer started with $(cat "$WORK/seen")"
grep -q "no lap, with graintune's start check" "$WORK/log" || fail "the log says $(cat "$WORK/log")"
OUT="$WORK/seen" "$WORK/bin/graintune-launcher" -- /bin/sh -c "$SEEN"
[ "$(cat "$WORK/seen")" = "|" ] || fail "without --start-check-report the trainer started with $(cat "$WORK/seen")"
[ "$FAILED" = 0 ] && echo "graintune-launcher: every case passed"
exit "$FAILED"
