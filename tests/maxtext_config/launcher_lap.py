"""graintune-launcher around MaxText's own trainer, as the lap tests drive it: one host's files
(Lap), the launcher started with the pinned MaxText environment's python first on PATH (launch),
graintune's operator's answer as the tests play it (operators_answer), and what the output of a
run says (the Grain worker counts MaxText printed). Used by test_practice_lap.py (one host) and
test_slice_lap.py (hosts that run jax.distributed together).
Needs GRAINTUNE_LAUNCHER and the GRAINTUNE_MAXTEXT_* variables (scripts/lib/maxtext_trainer.sh).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

LAP_STEPS = 3
STEPS = 4
ADMISSION = 1
VALUE_KEY = "grain_worker_count="


def env_var(name: str) -> str:
  value = os.environ.get(name)
  if not value:
    raise RuntimeError(f"{name} is not set (ctest sets GRAINTUNE_LAUNCHER; "
                       "scripts/lib/maxtext_trainer.sh exports the MaxText ones)")
  return value


@dataclass
class Lap:
  """One launcher run's files, under one temporary directory."""
  root: Path
  out: Path = field(init=False)          # the run's base_output_directory
  lap_dir: Path = field(init=False)      # the lap's pod-local output
  lap_metrics: Path = field(init=False)
  result: Path = field(init=False)
  answer: Path = field(init=False)

  def __post_init__(self) -> None:
    self.out = self.root / "run-out"
    self.lap_dir = self.root / "lap"
    self.lap_metrics = self.root / "lap-metrics.jsonl"
    self.result = self.root / "lap-result.json"
    self.answer = self.root / "lap-value"

  def trainer_words(self, value_word: bool, metrics_word: bool = True, distributed: bool = False) -> list[str]:
    """The tiny model's trainer, STEPS steps, checkpointing every 2, admission's value last;
    without metrics_word, the metrics file is left to M_METRICS_FILE (as graintune's exporter
    sets it); with distributed, MaxText initializes jax.distributed (hardware=cpu reads the
    coordinator and the process's index from the environment, as xpk sets them)."""
    tiny = env_var("GRAINTUNE_MAXTEXT_TINY_ARGS").split()
    if distributed:
      tiny = [w for w in tiny if not w.startswith("skip_jax_distributed_system=")]
      tiny.append("skip_jax_distributed_system=false")
    words = ["python3", "-m", "maxtext.trainers.pre_train.train", *tiny,
             f"grain_train_files={env_var('GRAINTUNE_MAXTEXT_SMALL_RECORDS')}",
             f"tokenizer_path={env_var('GRAINTUNE_MAXTEXT_TOKENIZER')}", "run_name=run",
             f"base_output_directory={self.out}", f"steps={STEPS}", "enable_checkpointing=true",
             "async_checkpointing=false", "checkpoint_period=2"]
    words += [f"metrics_file={self.out}/metrics.jsonl"] if metrics_word else []
    return words + ([f"{VALUE_KEY}{ADMISSION}"] if value_word else [])

  def launcher_flags(self, *extra: str) -> list[str]:
    return [env_var("GRAINTUNE_LAUNCHER"), f"--admission-value={ADMISSION}", f"--lap-steps={LAP_STEPS}",
            f"--answer-file={self.answer}", f"--lap-directory={self.lap_dir}",
            f"--lap-metrics-file={self.lap_metrics}", f"--result-file={self.result}",
            "--answer-wait=300s", f"--trainer-metrics-file={self.out}/metrics.jsonl", *extra]

  def trainer_compile(self) -> str:
    """The launcher's watcher's verdict on the trainer's compile, once it wrote it (it outlives
    the launcher by up to a second)."""
    wait_for(lambda: json.loads(self.result.read_text()).get("trainer_compile", "watching") != "watching", 30,
             "compile verdict")
    return json.loads(self.result.read_text())["trainer_compile"]

  def metrics_lines(self, path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@dataclass
class Launched:
  status: int
  output: str
  seen_at_answer: dict  # what the stand-in operator saw when it answered


def launch(argv: list[str], operator: Callable[[Lap], dict] | None, lap: Lap,
           extra_env: dict[str, str] | None = None) -> Launched:
  """Runs the launcher with the trainer's python first on PATH (the command says `python3`, as a
  trainer image's does) while `operator` (if any) plays graintune's operator beside it."""
  python_bin = str(Path(env_var("GRAINTUNE_MAXTEXT_PYTHON")).parent)
  env = dict(os.environ, PATH=python_bin + os.pathsep + os.environ["PATH"], JAX_PLATFORMS="cpu",
             XLA_FLAGS="--xla_cpu_multi_thread_eigen=false", HOME=str(lap.root / "home"),
             **(extra_env or {}))
  (lap.root / "home").mkdir()
  seen: dict = {}
  proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          cwd=lap.root, start_new_session=True)
  player = threading.Thread(target=lambda: seen.update(operator(lap) if operator else {}), daemon=True)
  player.start()
  try:
    output, _ = proc.communicate(timeout=1200)
  except subprocess.TimeoutExpired:
    os.killpg(proc.pid, signal.SIGKILL)
    output, _ = proc.communicate()
    raise AssertionError("the launcher and its trainer did not end within 1200 s:\n" + output[-4000:])
  player.join(timeout=60)
  return Launched(proc.returncode, output, seen)


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
  deadline = time.monotonic() + seconds
  while not condition():
    if time.monotonic() > deadline:
      raise AssertionError(f"no {what} within {seconds} s")
    time.sleep(0.2)


POD = "trainer-0"


def operators_answer(result: dict, value: str, pod: str = POD) -> str:
  """What graintune's operator answers for this lap (operator/lap_answer.cc, AnswerLaps): `value`
  after a lap that completed, "none: the lap of POD OUTCOME" after one that did not."""
  return value if result["completed"] else f"none: the lap of {pod} {result['outcome']}"


def answer_after_the_lap(value: str) -> Callable[[Lap], dict]:
  """The operator: once the lap's result is written, reads it and the lap's metrics, notes what
  exists under the run's output directory and answers as graintune's operator does."""
  def play(lap: Lap) -> dict:
    wait_for(lap.result.exists, 900, "lap result")
    seen = {"result": json.loads(lap.result.read_text()),
            "lap_metrics": lap.metrics_lines(lap.lap_metrics),
            "run_out_exists": lap.out.exists()}
    lap.answer.write_text(operators_answer(seen["result"], value))
    return seen
  return play


def lap_pids(lap: Lap) -> list[int]:
  """Processes whose argv carries the lap's output directory (the lap's MaxText, not the trainer)."""
  pids = []
  for proc in Path("/proc").iterdir():
    try:
      if proc.name.isdigit() and f"base_output_directory={lap.lap_dir}".encode() in (proc / "cmdline").read_bytes():
        pids.append(int(proc.name))
    except OSError:
      pass
  return pids


def workers_the_trainer_ran_with(output: str) -> set[str]:
  """MaxText prints its config at start ("Config param grain_worker_count: N"), once per start."""
  return {line.rsplit(":", 1)[1].strip() for line in output.splitlines()
          if "Config param grain_worker_count:" in line}


def tail(text: str, chars: int = 4000) -> str:
  return text[-chars:]
