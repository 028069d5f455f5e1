"""Real Grain, side by side: which grain_worker_count each method picks, and what it delivers.

One run (scripts/bench-real-grain.sh) on this machine:
  1. For every worker count from 0 (in-process) to past the core count, the MaxText-shaped
     pipeline of pipeline.py is measured twice: free-running (pipeline capacity, batches/s and
     tokens/s, peak RSS of each worker process) and paced by a consumer that needs one batch per
     compute step of a TPU that wants `--demand-workers` times one worker's output (the training
     throughput that count delivers; its step times are that count's trial).
  2. From the 1-worker run: the per-worker tokens/s and memory graintune's dataset profile
     expects.
  3. Picks, in the same run: MaxText's default (1); MaxText's -1, i.e. Grain's
     pick_performance_config on this very dataset, with MaxText's ram_budget_mb 1024 and with a
     realistic budget (half the host's memory); all cores; graintune's first pick given the
     measured profile and the consumer's demand (`graintune recommend`); graintune after one and
     two restarts, its across-restart logic fed the paced trials measured at its earlier picks
     (`graintune recommend --history`). The oracle is the fewest workers reaching 99% of the
     best paced throughput.
  4. A table (each method's count, the paced and free-running throughput there as fractions of
     the best measured, and the summed peak RSS of its workers) and one JSON summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

import corpus
import pipeline

MIB = 1024 * 1024


@dataclass
class Measurement:
  """One worker count, over several interleaved rounds (figures are medians over rounds)."""

  workers: int
  capacity_samples: list[float] = field(default_factory=list)  # full-batch tokens/s per round
  real_token_samples: list[float] = field(default_factory=list)  # of which not padding
  worker_peak_rss: list[float] = field(default_factory=list)  # bytes, per worker process, all rounds
  worker_peak_uss: list[float] = field(default_factory=list)
  paced_runs: list[list[float]] = field(default_factory=list)  # step seconds per round

  @property
  def capacity_tokens_per_s(self) -> float:
    return statistics.median(self.capacity_samples)

  @property
  def paced_tokens_per_s(self) -> float:
    return statistics.median(steady_tokens_per_s(run, self.batch_tokens) for run in self.paced_runs)

  @property
  def paced_step_seconds(self) -> list[float]:
    """The round whose throughput is the median: a real run's step times, for --history."""
    runs = sorted(self.paced_runs, key=lambda run: steady_tokens_per_s(run, self.batch_tokens))
    return runs[len(runs) // 2] if runs else []

  batch_tokens: int = 1


class ChildMemorySampler:
  """Samples RSS and USS of this process's children (the Grain workers) every 0.25 s."""

  def __init__(self):
    self.peak_rss: dict[int, float] = {}
    self.peak_uss: dict[int, float] = {}
    self._stop = threading.Event()
    self._thread = threading.Thread(target=self._run, daemon=True)

  def __enter__(self):
    self._thread.start()
    return self

  def __exit__(self, *exc):
    self._stop.set()
    self._thread.join()

  def _run(self):
    me = psutil.Process()
    while not self._stop.wait(0.25):
      for child in me.children(recursive=True):
        try:
          if any("resource_tracker" in part or "forkserver" in part for part in child.cmdline()):
            continue  # multiprocessing's helpers, not Grain workers
          info = child.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
          continue
        self.peak_rss[child.pid] = max(self.peak_rss.get(child.pid, 0), info.rss)
        self.peak_uss[child.pid] = max(self.peak_uss.get(child.pid, 0), info.uss)


def measure_capacity(base, m: Measurement, seconds: float, warmup_batches: int) -> None:
  """Adds one free-running round to `m`."""
  it = iter(pipeline.with_workers(base, m.workers))
  with ChildMemorySampler() as sampler:
    # Every worker delivers twice before the window opens: worker start-up (spawn, imports,
    # tokenizer load) is not the steady state being measured.
    for _ in range(max(warmup_batches, 2 * m.workers)):
      next(it)
    batches = real = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
      real += pipeline.real_tokens(next(it))
      batches += 1
    elapsed = time.perf_counter() - start
  pipeline.close(it)
  m.capacity_samples.append(batches * m.batch_tokens / elapsed)
  m.real_token_samples.append(real / elapsed)
  if m.workers > 0:  # in-process: no worker processes to measure
    m.worker_peak_rss += sampler.peak_rss.values()
    m.worker_peak_uss += sampler.peak_uss.values()


def measure_paced(base, workers: int, compute_seconds: float, steps: int) -> list[float]:
  return list(pipeline.paced_steps(base, workers, compute_seconds, steps))


def steady_tokens_per_s(step_seconds: list[float], batch_tokens: int) -> float:
  """Tokens/s over the later half of a run: steady state, as graintune's SummarizeSteps judges
  it (the earlier half still has workers starting and buffers filling)."""
  steady = step_seconds[len(step_seconds) // 2:]
  return batch_tokens * len(steady) / sum(steady)


def grain_pick(base, ram_budget_mb: int) -> int:
  """MaxText's grain_worker_count=-1: Grain's own pick on the batched dataset."""
  import grain  # pylint: disable=import-outside-toplevel
  config = grain.experimental.pick_performance_config(ds=base, ram_budget_mb=ram_budget_mb, max_workers=None,
                                                      max_buffer_size=None)
  return config.multiprocessing_options.num_workers


def graintune_recommend(binary: str, flags: list[str], history: list[dict] | None) -> dict:
  cmd = [binary, "recommend", *flags, "--output", "json"]
  with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
    if history:  # the first pick has none
      json.dump(history, f)
      f.flush()
      cmd += ["--history", f.name]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
  if done.returncode != 0:
    raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr}")
  return json.loads(done.stdout)


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--graintune", required=True, help="the graintune CLI")
  parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "graintune" / "real-grain")
  parser.add_argument("--max-target-length", type=int, default=8192)
  parser.add_argument("--batch-size", type=int, default=8, help="sequences per host batch")
  parser.add_argument("--max-workers", type=int, default=2 * (os.cpu_count() or 1))
  parser.add_argument("--seconds", type=float, default=6.0, help="free-running window per count and round")
  parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; figures are medians")
  parser.add_argument("--warmup-batches", type=int, default=3)
  parser.add_argument("--steps", type=int, default=40, help="paced steps per count and round")
  parser.add_argument("--demand-workers", type=float, default=1.5,
                      help="the consumer needs this many workers' output (scale-free demand)")
  parser.add_argument("--reserved-cpu", type=float, default=0.25,
                      help="cores graintune leaves to the consumer process")
  args = parser.parse_args()

  records, tokenizer, facts = corpus.build(args.workdir)
  base = pipeline.dataset(records, tokenizer, max_target_length=args.max_target_length, batch_size=args.batch_size)
  batch_tokens = args.batch_size * args.max_target_length
  cores = os.cpu_count() or 1
  host_memory = psutil.virtual_memory().total
  print(f"corpus: {facts['documents']} documents, {facts['bytes'] / MIB:.1f} MiB from {facts['files']} local files; "
        f"batch {args.batch_size} x {args.max_target_length} tokens; host {cores} cores, {host_memory / 2**30:.1f} GiB",
        flush=True)

  measured: dict[int, Measurement] = {}
  counts = list(range(0, args.max_workers + 1))

  def report_capacity(m: Measurement) -> None:
    rss = f"{max(m.worker_peak_rss) / MIB:.0f} MiB" if m.worker_peak_rss else "-"
    spread = ", ".join(f"{x / 1e3:.0f}k" for x in m.capacity_samples)
    print(f"  capacity  workers={m.workers:2d}  {m.capacity_tokens_per_s / 1e3:7.1f}k tok/s (rounds: {spread})  "
          f"worker peak RSS {rss}", flush=True)

  def capacity(n: int) -> Measurement:
    """Measures a count not in the sweep (a method picked it) for all rounds."""
    if n not in measured:
      measured[n] = Measurement(n, batch_tokens=batch_tokens)
      for _ in range(args.rounds):
        measure_capacity(base, measured[n], args.seconds, args.warmup_batches)
      report_capacity(measured[n])
    return measured[n]

  # Rounds interleave the counts, so drift on this shared machine hits every count alike.
  for n in counts:
    measured[n] = Measurement(n, batch_tokens=batch_tokens)
  for _ in range(args.rounds):
    for n in counts:
      measure_capacity(base, measured[n], args.seconds, args.warmup_batches)
  for n in counts:
    report_capacity(measured[n])
  one = measured[1]
  per_worker_rate = one.capacity_tokens_per_s
  per_worker_memory = max(one.worker_peak_rss)
  demand = args.demand_workers * per_worker_rate
  compute_seconds = batch_tokens / demand
  print(f"profile from 1 worker: {per_worker_rate / 1e3:.1f}k tok/s per worker, {per_worker_memory / MIB:.0f} MiB "
        f"peak RSS per worker; consumer demand {demand / 1e3:.1f}k tok/s ({args.demand_workers} workers' worth, "
        f"compute step {compute_seconds * 1e3:.0f} ms)", flush=True)

  def report_paced(m: Measurement) -> None:
    print(f"  paced     workers={m.workers:2d}  {m.paced_tokens_per_s / 1e3:7.1f}k tok/s delivered "
          f"({m.paced_tokens_per_s / demand:.2f} of demand)", flush=True)

  def paced(n: int) -> Measurement:
    m = capacity(n)
    if not m.paced_runs:
      for _ in range(args.rounds):
        m.paced_runs.append(measure_paced(base, n, compute_seconds, args.steps))
      report_paced(m)
    return m

  for _ in range(args.rounds):
    for n in counts:
      measured[n].paced_runs.append(measure_paced(base, n, compute_seconds, args.steps))
  for n in counts:
    report_paced(measured[n])

  flags = ["--host-cpu", str(cores), "--host-memory", str(host_memory), "--tpu-chips", "1",
           "--per-device-batch-size", str(args.batch_size), "--max-target-length", str(args.max_target_length),
           "--step-seconds", f"{compute_seconds:.6f}", "--dataset-kind", "raw-text",
           "--tokens-per-second-per-worker", f"{per_worker_rate:.0f}", "--worker-memory", f"{per_worker_memory:.0f}",
           "--reserved-cpu", str(args.reserved_cpu), "--reserved-memory", str(2 * 2**30)]
  first = graintune_recommend(args.graintune, flags, None)
  picks = {"graintune_first_pick": first["workers"]}
  history: list[dict] = []
  current = first["workers"]
  reasons = {"graintune_first_pick": first["reason"]}
  for restart in ("graintune_after_one_restart", "graintune_after_two_restarts"):
    m = paced(current)
    history.append({"workers": current, "step_seconds": m.paced_step_seconds,
                    "worker_memory_bytes": max(m.worker_peak_rss) if m.worker_peak_rss else 0})
    nxt = graintune_recommend(args.graintune, flags, history)
    current = picks[restart] = nxt["workers"]
    reasons[restart] = nxt["reason"]

  picks["maxtext_default"] = 1
  picks["maxtext_auto_grain_ram_1024"] = grain_pick(base, 1024)
  realistic_mb = int(host_memory / 2 / MIB)
  picks["maxtext_auto_grain_ram_half_host"] = grain_pick(base, realistic_mb)
  picks["all_cores"] = cores
  for n in picks.values():
    paced(n)

  best_paced = max(m.paced_tokens_per_s for m in measured.values())
  best_capacity = max(m.capacity_tokens_per_s for m in measured.values())
  oracle = min(n for n, m in measured.items() if m.paced_step_seconds and m.paced_tokens_per_s >= 0.99 * best_paced)
  picks = {"oracle": oracle, **picks}

  print()
  print(f"{'workers':>8} {'batches/s':>10} {'capacity':>10} {'paced':>10} {'of best':>8} {'peak RSS/worker':>16}")
  for n in sorted(measured):
    m = measured[n]
    rss = f"{max(m.worker_peak_rss) / MIB:.0f} MiB" if m.worker_peak_rss else "-"
    paced_text = f"{m.paced_tokens_per_s / 1e3:8.1f}k" if m.paced_step_seconds else "-"
    frac = f"{m.paced_tokens_per_s / best_paced:8.3f}" if m.paced_step_seconds else "-"
    print(f"{n:>8} {m.capacity_tokens_per_s / batch_tokens:10.2f} {m.capacity_tokens_per_s / 1e3:9.1f}k "
          f"{paced_text:>10} {frac:>8} {rss:>16}")
  print()
  print(f"{'method':<34} {'workers':>7} {'paced/best':>10} {'capacity/best':>13} {'worker RSS':>11}")
  rows = {}
  for name, n in picks.items():
    m = measured[n]
    # What the count costs the host: its workers times the peak RSS per worker column above.
    worker_rss = n * max(m.worker_peak_rss) if m.worker_peak_rss else 0
    rows[name] = {"workers": n, "paced_ratio": round(m.paced_tokens_per_s / best_paced, 4),
                  "capacity_ratio": round(m.capacity_tokens_per_s / best_capacity, 4),
                  "worker_rss_bytes": round(worker_rss)}
    print(f"{name:<34} {n:>7} {rows[name]['paced_ratio']:>10.3f} {rows[name]['capacity_ratio']:>13.3f} "
          f"{worker_rss / MIB:>7.0f} MiB")
  for name, reason in reasons.items():
    print(f"  {name}: {reason}")
  summary = {
      "host_cores": cores, "batch_tokens": batch_tokens,
      "per_worker_tokens_per_second": round(per_worker_rate), "per_worker_peak_rss_bytes": round(per_worker_memory),
      "demand_tokens_per_second": round(demand), "best_paced_tokens_per_second": round(best_paced),
      "oracle_workers": oracle, "methods": rows,
      "capacity_tokens_per_second": {str(n): round(m.capacity_tokens_per_s) for n, m in sorted(measured.items())},
  }
  print(json.dumps(summary, separators=(",", ":")))
  return 0


if __name__ == "__main__":
  sys.exit(main())
