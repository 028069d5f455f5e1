"""graintune-launcher around MaxText's own trainer: the practice lap, then the run.

The launcher runs the trainer's own command for a few steps with the lap's overrides
(launcher/launch_plan.cc, LapWords), writes how the lap ended, waits for the operator's answer in
a file and then starts the trainer with that value, or with admission's when anything fails.
Here the trainer is maxtext 0.2.5's (the pinned environment, the tiny model on CPU) and this test
plays the operator: once the lap's result file appears it answers as graintune's operator does
(a value after a lap that completed, "none: the lap of POD OUTCOME" after one that did not). A lap
that failed still waits for that answer, so every host of a slice starts with the same value. In
every case the trainer reaches its last step, and:
  - exec-form args and the metrics file in M_METRICS_FILE (as graintune's exporter sets it),
    answered 2: the lap ran LAP_STEPS steps into its own metrics file, MaxText
    accepted every lap override, nothing existed under the run's output directory when the lap
    ended, the trainer ran with 2 workers, its checkpoints are its own, and it found its train
    step in the JAX compilation cache the lap filled (one compiled train step, not two; without
    --lap-schedule-steps the lap's shorter schedule compiles a different program), which the
    launcher's watcher judged "cache hit" in the result file;
  - a `bash -c` script whose lap is killed with SIGKILL while it trains (as the kernel's OOM
    killer would): the operator answers none and the trainer starts with admission's value; the
    lap's schedule was not the trainer's, so the trainer compiled its own train step and the
    watcher judged "compiled";
  - an M_ variable, with a lap timeout shorter than MaxText's start: the lap is stopped at its
    timeout, the operator answers none and the trainer starts with admission's value; the lap
    compiled nothing, so the watcher's verdict is "unknown";
  - a lap whose MaxText exits 1 (its metrics file is in a folder that does not exist): the
    operator answers none and the trainer starts with admission's value.
Needs GRAINTUNE_LAUNCHER and the GRAINTUNE_MAXTEXT_* variables (scripts/lib/maxtext_trainer.sh).
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from launcher_lap import (ADMISSION, LAP_STEPS, POD, STEPS, VALUE_KEY, Lap, answer_after_the_lap, lap_pids,
                          launch, operators_answer, tail, wait_for, workers_the_trainer_ran_with)

def test_exec_form_lap_then_the_trainer_with_the_operators_value(tmp_path: Path) -> None:
  lap = Lap(tmp_path)
  trainer = lap.trainer_words(value_word=True, metrics_word=False)
  value_arg = len(trainer) - 1
  argv = lap.launcher_flags(f"--value-at={value_arg}:{len(VALUE_KEY)}:{len(VALUE_KEY) + 1}",
                            f"--lap-after-arg={value_arg}", "--lap-timeout=900s",
                            f"--lap-schedule-steps={STEPS}") + ["--", *trainer]
  # MaxText refuses a key set on its command line and in M_ env: the lap runs without the
  # exporter's M_METRICS_FILE, the trainer with it.
  done = launch(argv, answer_after_the_lap("2"), lap, {"M_METRICS_FILE": f"{lap.out}/metrics.jsonl"})
  assert done.status == 0, tail(done.output)
  seen = done.seen_at_answer
  assert seen["result"]["completed"] is True, seen
  assert len(seen["lap_metrics"]) == LAP_STEPS, seen  # MaxText accepted every lap override
  assert not seen["run_out_exists"], "the lap wrote under the run's output directory"
  assert not lap.lap_dir.exists(), "the lap's directory is removed after the lap"
  assert "the run's value from its practice lap" in done.output, tail(done.output)
  # Two starts of MaxText: the lap with admission's 1, the trainer with the operator's 2.
  assert workers_the_trainer_ran_with(done.output) == {"1", "2"}, tail(done.output)
  assert len(lap.metrics_lines(lap.out / "metrics.jsonl")) == STEPS, tail(done.output)
  checkpoints = sorted(p.name for p in (lap.out / "run" / "checkpoints").iterdir())
  assert checkpoints and all(name.isdigit() for name in checkpoints), checkpoints
  assert not any("graintune-practice-lap" in str(p) for p in lap.out.rglob("*"))
  # The lap compiled the trainer's own train step (same schedule length): the trainer found it in
  # the JAX compilation cache, so the cache holds one train step, not two.
  compiled = [p.name for p in (lap.root / "home" / "jax_cache").iterdir() if p.name.startswith("jit_train_step")]
  assert len(compiled) == 1, compiled
  assert lap.trainer_compile() == "cache hit", lap.result.read_text()


def test_a_script_whose_lap_is_killed_starts_the_trainer_with_admissions_value(tmp_path: Path) -> None:
  lap = Lap(tmp_path)
  script = " ".join(lap.trainer_words(value_word=True))
  value_begin = script.rindex(VALUE_KEY) + len(VALUE_KEY)

  def kill_the_lap(lap: Lap) -> dict:
    wait_for(lambda: len(lap.metrics_lines(lap.lap_metrics)) >= 1, 900, "lap step")
    killed = lap_pids(lap)
    for pid in killed:
      os.kill(pid, signal.SIGKILL)
    wait_for(lap.result.exists, 120, "lap result")
    result = json.loads(lap.result.read_text())
    lap.answer.write_text(operators_answer(result, "7"))
    return {"killed": killed, "result": result}

  argv = lap.launcher_flags(f"--value-at=2:{value_begin}:{value_begin + 1}",
                            f"--lap-in-script=2:{len(script)}", "--lap-timeout=900s") + ["--", "bash", "-c", script]
  done = launch(argv, kill_the_lap, lap)
  assert done.status == 0, tail(done.output)
  assert done.seen_at_answer["killed"], done.seen_at_answer
  assert done.seen_at_answer["result"]["completed"] is False, done.seen_at_answer
  assert f"admission's value: the lap of {POD} killed by" in done.output, tail(done.output)
  assert workers_the_trainer_ran_with(done.output) == {"1"}, tail(done.output)
  assert len(lap.metrics_lines(lap.out / "metrics.jsonl")) == STEPS, tail(done.output)
  # The lap's schedule (LAP_STEPS) is not the trainer's (STEPS): two programs, two compiles.
  assert lap.trainer_compile() == "compiled", lap.result.read_text()


def test_an_m_variable_lap_past_its_timeout_starts_the_trainer_with_admissions_value(tmp_path: Path) -> None:
  lap = Lap(tmp_path)
  argv = lap.launcher_flags("--value-env=M_GRAIN_WORKER_COUNT", "--lap-timeout=5s")
  trainer = lap.trainer_words(value_word=False)
  argv += [f"--lap-after-arg={len(trainer) - 1}", "--", *trainer]
  started = time.monotonic()
  done = launch(argv, answer_after_the_lap("7"), lap, {"M_GRAIN_WORKER_COUNT": str(ADMISSION)})
  assert done.status == 0, tail(done.output)
  result = json.loads(lap.result.read_text())
  assert result["completed"] is False and "timed out" in result["outcome"], result
  assert result["wall_seconds"] < 5 + 10 + 5, result  # the timeout, the grace, the reaping
  assert f"admission's value: the lap of {POD} timed out" in done.output, tail(done.output)
  assert workers_the_trainer_ran_with(done.output) == {"1"}, tail(done.output)
  assert len(lap.metrics_lines(lap.out / "metrics.jsonl")) == STEPS, tail(done.output)
  assert time.monotonic() - started < 600
  # Stopped before its compile, the lap left nothing in the cache for the trainer to hit.
  assert lap.trainer_compile() == "unknown", lap.result.read_text()


def test_a_lap_whose_maxtext_exits_1_starts_the_trainer_with_admissions_value(tmp_path: Path) -> None:
  lap = Lap(tmp_path)
  # MaxText writes its first step's metrics line into a folder that does not exist: it raises,
  # and Python exits 1. Only the lap writes there (the trainer has its own metrics file).
  lap.lap_metrics = lap.root / "no-such-folder" / "lap-metrics.jsonl"
  trainer = lap.trainer_words(value_word=True)
  value_arg = len(trainer) - 1
  argv = lap.launcher_flags(f"--value-at={value_arg}:{len(VALUE_KEY)}:{len(VALUE_KEY) + 1}",
                            f"--lap-after-arg={value_arg}", "--lap-timeout=900s") + ["--", *trainer]
  done = launch(argv, answer_after_the_lap("7"), lap)
  assert done.status == 0, tail(done.output)
  result = done.seen_at_answer["result"]
  assert result["completed"] is False and result["outcome"] == "exited 1", result
  assert "no-such-folder" in done.output, tail(done.output)  # MaxText's own error names the file
  assert f"admission's value: the lap of {POD} exited 1" in done.output, tail(done.output)
  assert workers_the_trainer_ran_with(done.output) == {"1"}, tail(done.output)
  assert len(lap.metrics_lines(lap.out / "metrics.jsonl")) == STEPS, tail(done.output)
