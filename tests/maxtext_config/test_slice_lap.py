"""SliceLap: the practice lap on a slice of two hosts that run jax.distributed together.

Each host is its own graintune-launcher around maxtext 0.2.5's trainer (the tiny model,
hardware=cpu), with what xpk sets for a CPU workload: JAX_COORDINATOR_ADDRESS, JOB_INDEX,
JOB_COMPLETION_INDEX, PROCESSES_IN_JOB and JAX_PROCESS_COUNT; MaxText's
initialize_jax_for_cpu then joins the coordinator on port 1234 of host 0. ctest runs this file in
a network namespace of its own (its loopback only), so port 1234 is this test's. The hosts share
the run's output folder (as a slice's hosts share its bucket) and each has its own lap folder,
result file and answer file (as each pod has its emptyDir and downward-API file).

This test plays graintune's operator for the slice (operator/lap_answer.cc, AnswerLaps): as soon
as one host's lap result says it did not complete, it answers "none" on every host; once every
host's lap completed, it answers one value on every host. Each case prints each host's value and
the time from the last lap's end to that host's first trainer step:
  - both laps complete, host 1 started 10 s after host 0 (a slower peer; jax.distributed waits
    for it): the lap initialized jax.distributed and exited, and each trainer initialized it
    again on the same port, started with the slice's value and reached its last step;
  - host 1's lap is killed with SIGKILL after its first step, while host 0's lap waits for it in
    their collectives: host 0's launcher reads the "none" while its lap runs and calls its lap
    off, and both trainers start with admission's value and reach their last step together.
Needs GRAINTUNE_LAUNCHER and the GRAINTUNE_MAXTEXT_* variables (scripts/lib/maxtext_trainer.sh).
"""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from launcher_lap import (ADMISSION, STEPS, VALUE_KEY, Lap, Launched, lap_pids, launch, operators_answer, tail,
                          wait_for, workers_the_trainer_ran_with)

HOSTS = 2
# Long enough that host 0's lap cannot end before host 1's is killed after its first step.
SLICE_LAP_STEPS = 8


@dataclass
class Host:
  index: int
  lap: Lap
  launched: Launched | None = None
  lap_ended: float | None = None  # time.time() when its lap result appeared

  @property
  def pod(self) -> str:
    return f"trainer-{self.index}"

  def env(self) -> dict[str, str]:
    return {"JAX_COORDINATOR_ADDRESS": "127.0.0.1", "JOB_INDEX": "0", "JOB_COMPLETION_INDEX": str(self.index),
            "PROCESSES_IN_JOB": str(HOSTS), "JAX_PROCESS_COUNT": str(HOSTS),
            "M_METRICS_FILE": str(self.metrics_file)}

  @property
  def metrics_file(self) -> Path:
    return self.lap.root / "metrics.jsonl"

  def argv(self) -> list[str]:
    trainer = self.lap.trainer_words(value_word=True, metrics_word=False, distributed=True)
    value_arg = len(trainer) - 1
    flags = [f for f in self.lap.launcher_flags() if not f.startswith(("--lap-steps=", "--trainer-metrics-file="))]
    return flags + [f"--lap-steps={SLICE_LAP_STEPS}", f"--trainer-metrics-file={self.metrics_file}",
                    f"--value-at={value_arg}:{len(VALUE_KEY)}:{len(VALUE_KEY) + 1}",
                    f"--lap-after-arg={value_arg}", "--lap-timeout=600s", "--", *trainer]

  def result(self) -> dict:
    return json.loads(self.lap.result.read_text())


def slice_of(tmp_path: Path) -> list[Host]:
  hosts = []
  for index in range(HOSTS):
    lap = Lap(tmp_path / f"host-{index}")
    lap.root.mkdir()
    lap.out = tmp_path / "run-out"  # shared by the slice's hosts
    hosts.append(Host(index, lap))
  return hosts


def play_the_operator(hosts: list[Host], value: str, stop: threading.Event) -> None:
  """graintune's operator for the slice: "none" on every host at the first lap that did not
  complete, `value` on every host once all completed."""
  while not stop.is_set():
    for h in hosts:
      if h.lap_ended is None and h.lap.result.exists():
        h.lap_ended = time.time()
    failed = [h for h in hosts if h.lap_ended is not None and not h.result()["completed"]]
    if failed:
      answer = operators_answer(failed[0].result(), value, failed[0].pod)
    elif all(h.lap_ended is not None for h in hosts):
      answer = value
    else:
      time.sleep(0.2)
      continue
    for h in hosts:
      h.lap.answer.write_text(answer)
    return


def run_slice(hosts: list[Host], value: str, delays: list[float], meanwhile=None) -> None:
  stop = threading.Event()
  operator = threading.Thread(target=play_the_operator, args=(hosts, value, stop), daemon=True)
  operator.start()
  if meanwhile:
    threading.Thread(target=meanwhile, daemon=True).start()

  def run(h: Host, delay: float) -> None:
    time.sleep(delay)  # a host whose pod starts later than its peer's
    h.launched = launch(h.argv(), None, h.lap, h.env())

  runners = [threading.Thread(target=run, args=(h, d)) for h, d in zip(hosts, delays)]
  for r in runners:
    r.start()
  for r in runners:
    r.join()
  stop.set()
  operator.join(timeout=10)


# absl's log prefix, e.g. "I1207 23:35:57.771034 139758079400832 metric_logger.py:265] completed step: 3"
ABSL_STEP = re.compile(r"^I(\d{4}) (\d\d:\d\d:\d\d\.\d+) .*\] completed step: (\d+),")


def first_trainer_step_at(output: str) -> float | None:
  """The wall time of the trainer's first step (the first "completed step" after the launcher
  started the trainer), from absl's log prefix."""
  after = output.split("starting the trainer:", 1)
  if len(after) < 2:
    return None
  for line in after[1].splitlines():
    m = ABSL_STEP.match(line)
    if m:
      stamp = datetime.strptime(f"{datetime.now().year}{m.group(1)} {m.group(2)}", "%Y%m%d %H:%M:%S.%f")
      return stamp.timestamp()
  return None


def trainer_steps(output: str) -> int:
  after = output.split("starting the trainer:", 1)
  return len([1 for line in after[-1].splitlines() if ABSL_STEP.match(line)]) if len(after) == 2 else 0


def report(hosts: list[Host]) -> None:
  last_lap_end = max(h.lap_ended or 0 for h in hosts)
  for h in hosts:
    first = first_trainer_step_at(h.launched.output)
    after = f"{first - last_lap_end:.1f} s" if first else "never"
    print(f"{h.pod}: started its trainer with {h.result().get('trainer_workers')} workers "
          f"({h.result().get('trainer_value_why')}); its first step {after} after the last lap ended; "
          f"its lap: {h.result()['outcome']}")


def expect_every_host_trained_with(hosts: list[Host], workers: int, lap_workers: int = ADMISSION) -> None:
  for h in hosts:
    out = h.launched.output
    assert h.launched.status == 0, f"{h.pod}:\n" + tail(out)
    assert h.result()["trainer_workers"] == workers, (h.pod, h.result())
    assert workers_the_trainer_ran_with(out) == {str(lap_workers), str(workers)}, f"{h.pod}:\n" + tail(out)
    assert trainer_steps(out) == STEPS, f"{h.pod}:\n" + tail(out)
    assert "Jax process id is" in out, f"{h.pod}: MaxText did not initialize jax.distributed\n" + tail(out)
  # One JAX job writes one checkpoint folder, the slice's.
  checkpoints = sorted(p.name for p in (hosts[0].lap.out / "run" / "checkpoints").iterdir())
  assert checkpoints and all(name.isdigit() for name in checkpoints), checkpoints


def test_slice_lap_both_hosts_start_with_the_slices_value_after_a_lap_across_processes(tmp_path: Path) -> None:
  hosts = slice_of(tmp_path)
  run_slice(hosts, "2", delays=[0, 10])
  report(hosts)
  assert all(h.result()["completed"] for h in hosts), [h.result() for h in hosts]
  expect_every_host_trained_with(hosts, 2)
  for h in hosts:
    assert "the run's value from its practice lap" in h.launched.output, f"{h.pod}:\n" + tail(h.launched.output)


def test_slice_lap_one_hosts_lap_killed_every_host_starts_with_admissions_value(tmp_path: Path) -> None:
  hosts = slice_of(tmp_path)
  killed: list[int] = []

  def kill_host_1s_lap() -> None:
    lap = hosts[1].lap
    wait_for(lambda: len(lap.metrics_lines(lap.lap_metrics)) >= 1, 600, "host 1's first lap step")
    killed.extend(lap_pids(lap))
    for pid in killed:
      os.kill(pid, signal.SIGKILL)

  run_slice(hosts, "2", delays=[0, 0], meanwhile=kill_host_1s_lap)
  report(hosts)
  assert killed, "host 1's lap was not found to kill"
  assert "killed by signal 9" in hosts[1].result()["outcome"], hosts[1].result()
  # Host 0's lap waited for its peer in their collectives until the operator's "none" called it off.
  assert hosts[0].result()["completed"] is False, hosts[0].result()
  assert hosts[0].result()["outcome"].startswith("called off"), hosts[0].result()
  expect_every_host_trained_with(hosts, ADMISSION)
  for h in hosts:
    assert "admission's value: the lap of trainer-1 killed by signal 9" in h.launched.output, \
        f"{h.pod}:\n" + tail(h.launched.output)
