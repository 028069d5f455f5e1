"""Real MaxText, data-bound on this machine's CPU: which grain_worker_count each method picks,
and what it delivers.

One run (scripts/bench-real-maxtext.sh):
  1. A calibration run of the tiny model on small records (the pipeline far faster than the
     model): its steady step time is the compute step a fed trainer runs at.
  2. A sweep of worker counts on large records (512 KiB of text each, truncated to 256 tokens:
     tokenizing a batch costs several compute steps), in interleaved rounds (each round runs
     every count once, the order rotated), each run's machine load (1-minute load average,
     before and after) recorded beside its figure. MaxText's -1 is swept too, and the Grain
     worker processes it started are counted from /proc.
  3. The oracle: the fewest workers reaching 97% of the best median steps/s.
  4. Picks: MaxText's default (base.yml: 1), MaxText's -1 (counted), graintune's first pick
     (`graintune recommend` for this host: its cores and memory, 4 GiB and no core kept for
     the trainer, whose compute stands in for a TPU's; the calibrated compute step) and its picks after one and two restarts
     (`graintune recommend --history`, fed the step times MaxText wrote at the earlier picks;
     a pick the sweep lacks is run then). Each as its median steps/s over the best.
  5. A table and one JSON line.
Every MaxText run is `nice`, single-threaded XLA, no network needed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

WARMUP_STEPS = 2  # step 0 compiles; step 1 still pays for it (as graintune's trials assume)


@dataclass
class Run:
  workers: int  # as asked; -1 for MaxText's own pick
  step_seconds: list[float]
  load_before: float
  load_after: float
  grain_processes: int  # most Grain worker processes seen at once

  @property
  def steps_per_second(self) -> float:
    steady = self.step_seconds[WARMUP_STEPS:]
    return len(steady) / sum(steady) if steady and sum(steady) > 0 else 0.0


@dataclass
class Sweep:
  runs: dict[int, list[Run]] = field(default_factory=dict)

  def median(self, workers: int) -> float:
    return statistics.median(r.steps_per_second for r in self.runs[workers])

  def median_run(self, workers: int) -> Run:
    runs = sorted(self.runs[workers], key=lambda r: r.steps_per_second)
    return runs[len(runs) // 2]


def descendants(pid: int) -> list[int]:
  """Every process below `pid`, from /proc."""
  children: dict[int, list[int]] = {}
  for entry in os.listdir("/proc"):
    if not entry.isdigit():
      continue
    try:
      with open(f"/proc/{entry}/stat") as f:
        stat = f.read()
    except OSError:
      continue
    ppid = int(stat[stat.rindex(")") + 2:].split()[1])
    children.setdefault(ppid, []).append(int(entry))
  out, todo = [], [pid]
  while todo:
    for child in children.get(todo.pop(), []):
      out.append(child)
      todo.append(child)
  return out


def grain_workers(pid: int) -> int:
  """Grain's worker processes under the trainer: multiprocessing children, not its helpers."""
  count = 0
  for child in descendants(pid):
    try:
      with open(f"/proc/{child}/cmdline", "rb") as f:
        cmd = f.read().replace(b"\0", b" ")
    except OSError:
      continue
    if b"resource_tracker" in cmd or b"forkserver" in cmd:
      continue
    count += 1
  return count


def run_maxtext(env: dict, records: str, workers: int, steps: int, workdir: Path) -> Run:
  metrics = workdir / f"metrics-{workers}-{time.monotonic_ns()}.jsonl"
  argv = ["nice", env["GRAINTUNE_MAXTEXT_PYTHON"], "-m", "maxtext.trainers.pre_train.train",
          *env["GRAINTUNE_MAXTEXT_TINY_ARGS"].split(), f"grain_train_files={records}",
          f"tokenizer_path={env['GRAINTUNE_MAXTEXT_TOKENIZER']}", "run_name=bench",
          f"base_output_directory={workdir / 'out'}", f"steps={steps}",
          f"grain_worker_count={workers}", f"metrics_file={metrics}"]
  child_env = dict(os.environ, JAX_PLATFORMS="cpu", HF_HUB_OFFLINE="1",
                   XLA_FLAGS="--xla_cpu_multi_thread_eigen=false")
  load_before = os.getloadavg()[0]
  with open(workdir / "maxtext.log", "ab") as log:
    proc = subprocess.Popen(argv, env=child_env, stdout=log, stderr=subprocess.STDOUT)
    most = 0
    while proc.poll() is None:
      most = max(most, grain_workers(proc.pid))
      time.sleep(0.5)
  if proc.returncode != 0:
    sys.exit(f"MaxText exited {proc.returncode} with grain_worker_count={workers}; see {workdir / 'maxtext.log'}")
  seconds = []
  for line in metrics.read_text().splitlines():
    record = json.loads(line)
    if "perf/step_time_seconds" in record:
      seconds.append(float(record["perf/step_time_seconds"]))
  return Run(workers, seconds, load_before, os.getloadavg()[0], most)


def recommend(graintune: str, compute_step: float, history: list[Run] | None, workdir: Path) -> int:
  cores = os.cpu_count() or 1
  memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
  argv = [graintune, "recommend", "--host-cpu", str(cores), "--host-memory", f"{memory_gib:.0f}Gi",
          "--tpu-chips", "1", "--per-device-batch-size", "8", "--max-target-length", "256",
          "--step-seconds", f"{compute_step:.4f}", "--reserved-cpu", "0", "--reserved-memory", "4Gi",
          "--output", "json"]
  if history:
    path = workdir / "history.json"
    path.write_text(json.dumps([{"workers": r.workers, "step_seconds": r.step_seconds} for r in history]))
    argv += ["--history", str(path)]
  out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
  return int(json.loads(out)["workers"])


def main() -> None:
  ap = argparse.ArgumentParser()
  ap.add_argument("--graintune", required=True)
  ap.add_argument("--workers", default="0,1,2,3,4", help="worker counts to sweep (besides -1)")
  ap.add_argument("--rounds", type=int, default=2)
  ap.add_argument("--steps", type=int, default=16)
  ap.add_argument("--workdir", default="")
  args = ap.parse_args()
  env = {k: v for k, v in os.environ.items() if k.startswith("GRAINTUNE_MAXTEXT_")}
  workdir = Path(args.workdir or tempfile.mkdtemp(prefix="graintune-bench-maxtext-"))
  workdir.mkdir(parents=True, exist_ok=True)
  print(f"# MaxText logs and metrics files: {workdir}", file=sys.stderr)

  calibration = run_maxtext(env, env["GRAINTUNE_MAXTEXT_SMALL_RECORDS"], 2, args.steps, workdir)
  compute_step = statistics.median(calibration.step_seconds[WARMUP_STEPS:])
  print(f"calibration (small records, 2 workers): compute step {compute_step:.3f} s, "
        f"load {calibration.load_before:.1f}->{calibration.load_after:.1f}", file=sys.stderr)

  counts = [int(w) for w in args.workers.split(",")] + [-1]
  sweep = Sweep()
  for round_index in range(args.rounds):
    order = counts[round_index % len(counts):] + counts[:round_index % len(counts)]
    for w in order:
      run = run_maxtext(env, env["GRAINTUNE_MAXTEXT_LARGE_RECORDS"], w, args.steps, workdir)
      sweep.runs.setdefault(w, []).append(run)
      print(f"round {round_index} workers {w:2d}: {run.steps_per_second:.3f} steps/s, "
            f"{run.grain_processes} Grain processes, load {run.load_before:.1f}->{run.load_after:.1f}",
            file=sys.stderr)

  def measured(w: int) -> Run:
    if w not in sweep.runs:
      run = run_maxtext(env, env["GRAINTUNE_MAXTEXT_LARGE_RECORDS"], w, args.steps, workdir)
      sweep.runs[w] = [run]
      print(f"extra run workers {w:2d}: {run.steps_per_second:.3f} steps/s, load "
            f"{run.load_before:.1f}->{run.load_after:.1f}", file=sys.stderr)
    return sweep.median_run(w)

  swept = [w for w in counts if w >= 0]
  best = max(sweep.median(w) for w in swept)
  oracle = min(w for w in swept if sweep.median(w) >= 0.97 * best)
  maxtext_pick = sweep.median_run(-1).grain_processes
  first = recommend(args.graintune, compute_step, None, workdir)
  history = [measured(first)]
  after_one = recommend(args.graintune, compute_step, history, workdir)
  history.append(measured(after_one))
  after_two = recommend(args.graintune, compute_step, history, workdir)
  measured(after_two)
  best = max(sweep.median(w) for w in sweep.runs)

  print(f"\n{'workers':>8} {'steps/s (median)':>17} {'of best':>8}  rounds (steps/s @ load before->after)")
  for w in sorted(sweep.runs):
    rounds = ", ".join(f"{r.steps_per_second:.3f} @ {r.load_before:.1f}->{r.load_after:.1f}"
                       for r in sweep.runs[w])
    label = "-1" if w == -1 else str(w)
    print(f"{label:>8} {sweep.median(w):17.3f} {sweep.median(w) / best:8.2f}  {rounds}")
  picks = {"oracle": oracle, "maxtext_default": 1, "maxtext_minus_one": -1,
           "graintune_first": first, "graintune_after_one_restart": after_one,
           "graintune_after_two_restarts": after_two}
  print(f"\n{'method':<30} {'workers':>7} {'of best':>8}")
  summary = {"compute_step_seconds": round(compute_step, 4), "steps": args.steps, "rounds": args.rounds,
             "cores": os.cpu_count(), "best_steps_per_second": round(best, 4), "picks": {}}
  for name, w in picks.items():
    if w == 1:
      measured(1)
    shown = f"{maxtext_pick} (-1)" if w == -1 else str(w)
    fraction = sweep.median(w) / best
    print(f"{name:<30} {shown:>7} {fraction:8.2f}")
    summary["picks"][name] = {"workers": maxtext_pick if w == -1 else w, "of_best": round(fraction, 3)}
  summary["sweep"] = {str(w): {"steps_per_second": [round(r.steps_per_second, 4) for r in runs],
                               "load_before": [r.load_before for r in runs],
                               "load_after": [r.load_after for r in runs],
                               "grain_processes": [r.grain_processes for r in runs]}
                      for w, runs in sorted(sweep.runs.items())}
  print(json.dumps(summary))


if __name__ == "__main__":
  main()
