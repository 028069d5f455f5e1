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
  5. Runs that keep one value (checkpointed: MaxText saves Grain's iterator, so a run cannot
     change its count): run 1 with graintune's value for a first run (`recommend --runs []`),
     run 2 with the value run 1 taught (`recommend --runs` fed run 1's step times, its workers'
     busy share from /proc cpu time and their peak memory, as the exporter measures them), each
     with checkpointing on and its own run_name, beside the oracle's and -1's steps/s; and run 1
     after a practice lap: run 1's value for --steps steps with checkpointing off (the lap),
     then a run with the value `recommend --lap` gives from the lap's figures.
  6. A table and one JSON line.
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
  busy_fraction: float = -1.0  # the workers' cpu time / (their lifetime x workers), as measured
  worker_memory_bytes: float = 0.0  # the largest worker's peak resident memory

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


def grain_worker_pids(pid: int) -> list[int]:
  """Grain's worker processes under the trainer: multiprocessing children, not its helpers."""
  out = []
  for child in descendants(pid):
    try:
      with open(f"/proc/{child}/cmdline", "rb") as f:
        cmd = f.read().replace(b"\0", b" ")
    except OSError:
      continue
    if b"resource_tracker" in cmd or b"forkserver" in cmd:
      continue
    out.append(child)
  return out


def cpu_seconds_and_rss(pid: int) -> tuple[float, float] | None:
  """utime + stime in seconds and resident bytes of one process, from /proc."""
  try:
    with open(f"/proc/{pid}/stat") as f:
      fields = f.read().rsplit(")", 1)[1].split()
  except OSError:
    return None
  ticks = os.sysconf("SC_CLK_TCK")
  return (int(fields[11]) + int(fields[12])) / ticks, int(fields[21]) * os.sysconf("SC_PAGE_SIZE")


def run_maxtext(env: dict, records: str, workers: int, steps: int, workdir: Path,
                checkpointed_run: str = "") -> Run:
  metrics = workdir / f"metrics-{workers}-{time.monotonic_ns()}.jsonl"
  argv = ["nice", env["GRAINTUNE_MAXTEXT_PYTHON"], "-m", "maxtext.trainers.pre_train.train",
          *env["GRAINTUNE_MAXTEXT_TINY_ARGS"].split(), f"grain_train_files={records}",
          f"tokenizer_path={env['GRAINTUNE_MAXTEXT_TOKENIZER']}",
          f"run_name={checkpointed_run or 'bench'}",
          f"base_output_directory={workdir / 'out'}", f"steps={steps}",
          f"grain_worker_count={workers}", f"metrics_file={metrics}"]
  if checkpointed_run:  # later overrides win: a run that checkpoints Grain's iterator
    argv += ["enable_checkpointing=true", f"checkpoint_period={max(2, steps // 2)}"]
  child_env = dict(os.environ, JAX_PLATFORMS="cpu", HF_HUB_OFFLINE="1",
                   XLA_FLAGS="--xla_cpu_multi_thread_eigen=false")
  load_before = os.getloadavg()[0]
  with open(workdir / "maxtext.log", "ab") as log:
    proc = subprocess.Popen(argv, env=child_env, stdout=log, stderr=subprocess.STDOUT)
    most = 0
    cpu: dict[int, float] = {}  # worker pid -> its latest cpu seconds
    first_seen: dict[int, float] = {}
    last_seen: dict[int, float] = {}
    peak_rss = 0.0
    while proc.poll() is None:
      pids = grain_worker_pids(proc.pid)
      most = max(most, len(pids))
      now = time.monotonic()
      for p in pids:
        figures = cpu_seconds_and_rss(p)
        if figures is None:
          continue
        cpu[p] = figures[0]
        peak_rss = max(peak_rss, figures[1])
        first_seen.setdefault(p, now)
        last_seen[p] = now
      time.sleep(0.5)
  lived = sum(last_seen[p] - first_seen[p] for p in cpu)
  busy = min(1.0, sum(cpu.values()) / lived) if lived > 1 else -1.0
  if proc.returncode != 0:
    sys.exit(f"MaxText exited {proc.returncode} with grain_worker_count={workers}; see {workdir / 'maxtext.log'}")
  seconds = []
  for line in metrics.read_text().splitlines():
    record = json.loads(line)
    if "perf/step_time_seconds" in record:
      seconds.append(float(record["perf/step_time_seconds"]))
  return Run(workers, seconds, load_before, os.getloadavg()[0], most, busy, peak_rss)


def figures_entry(r: Run) -> dict:
  """A run's figures as the exporter measures them, in `recommend`'s --history format."""
  entry = {"workers": r.workers, "step_seconds": r.step_seconds}
  if r.busy_fraction >= 0:
    entry["worker_busy_fraction"] = round(r.busy_fraction, 4)
  if r.worker_memory_bytes > 0:
    entry["worker_memory_bytes"] = r.worker_memory_bytes
  return entry


def recommend(graintune: str, compute_step: float, history: list[Run] | None, workdir: Path,
              runs: list[Run] | None = None, lap: Run | None = None) -> int:
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
  if runs is not None:
    path = workdir / "runs.json"
    path.write_text(json.dumps([figures_entry(r) for r in runs]))
    argv += ["--runs", str(path)]
  if lap is not None:
    path = workdir / "lap.json"
    path.write_text(json.dumps(figures_entry(lap)))
    argv += ["--lap", str(path)]
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

  # Runs that keep one value: checkpointed, each its own run_name; run 2 from what run 1 taught.
  run1_workers = recommend(args.graintune, compute_step, None, workdir, runs=[])
  run1 = run_maxtext(env, env["GRAINTUNE_MAXTEXT_LARGE_RECORDS"], run1_workers, args.steps, workdir,
                     checkpointed_run="pinned-run-1")
  run2_workers = recommend(args.graintune, compute_step, None, workdir, runs=[run1])
  run2 = run_maxtext(env, env["GRAINTUNE_MAXTEXT_LARGE_RECORDS"], run2_workers, args.steps, workdir,
                     checkpointed_run="pinned-run-2")
  # A practice lap: run 1's value, the lap's steps, checkpointing off (as graintune-launcher runs
  # it), then the run with the value `recommend --lap` gives from the lap's figures.
  lap_started = time.monotonic()
  lap = run_maxtext(env, env["GRAINTUNE_MAXTEXT_LARGE_RECORDS"], run1_workers, args.steps, workdir)
  lap_seconds = time.monotonic() - lap_started
  lap_workers = recommend(args.graintune, compute_step, None, workdir, lap=lap)
  from_lap = run_maxtext(env, env["GRAINTUNE_MAXTEXT_LARGE_RECORDS"], lap_workers, args.steps, workdir,
                         checkpointed_run="pinned-run-from-lap")
  for name, r in (("lap", lap), ("run from its lap", from_lap), ("run 1", run1), ("run 2", run2)):
    print(f"checkpointed {name}: {r.workers} workers, {r.steps_per_second:.3f} steps/s, workers busy "
          f"{r.busy_fraction:.2f}, peak worker memory {r.worker_memory_bytes / 2**20:.0f} MiB, "
          f"load {r.load_before:.1f}->{r.load_after:.1f}", file=sys.stderr)
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
  print(f"\n{'runs that keep one value':<30} {'workers':>7} {'steps/s':>8} {'of best':>8}")
  for name, r in (("oracle", sweep.median_run(oracle)), ("maxtext -1", sweep.median_run(-1)),
                  ("graintune run 1 (no knowledge)", run1), ("graintune run 2 (from run 1)", run2),
                  ("graintune run 1 after a lap", from_lap)):
    shown = f"{maxtext_pick} (-1)" if r.workers == -1 else str(r.workers)
    print(f"{name:<30} {shown:>7} {r.steps_per_second:8.3f} {r.steps_per_second / best:8.2f}")
  summary["pinned_runs"] = {
      "run1": {"workers": run1.workers, "steps_per_second": round(run1.steps_per_second, 4),
               "of_best": round(run1.steps_per_second / best, 3), "busy_fraction": round(run1.busy_fraction, 3),
               "worker_memory_bytes": run1.worker_memory_bytes},
      "run2": {"workers": run2.workers, "steps_per_second": round(run2.steps_per_second, 4),
               "of_best": round(run2.steps_per_second / best, 3), "busy_fraction": round(run2.busy_fraction, 3),
               "worker_memory_bytes": run2.worker_memory_bytes},
      "run1_after_lap": {"workers": from_lap.workers, "steps_per_second": round(from_lap.steps_per_second, 4),
                         "of_best": round(from_lap.steps_per_second / best, 3),
                         "lap_workers": lap.workers, "lap_seconds": round(lap_seconds, 1),
                         "lap_busy_fraction": round(lap.busy_fraction, 3),
                         "lap_worker_memory_bytes": lap.worker_memory_bytes},
      "oracle_steps_per_second": round(sweep.median(oracle), 4),
      "maxtext_minus_one_steps_per_second": round(sweep.median(-1), 4)}
  summary["sweep"] = {str(w): {"steps_per_second": [round(r.steps_per_second, 4) for r in runs],
                               "load_before": [r.load_before for r in runs],
                               "load_after": [r.load_after for r in runs],
                               "grain_processes": [r.grain_processes for r in runs]}
                      for w, runs in sorted(sweep.runs.items())}
  print(json.dumps(summary))


if __name__ == "__main__":
  main()
