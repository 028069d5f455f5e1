"""graintune's resume answer against MaxText's, container by container, for one manifest.

For every Pod, Job and JobSet of a manifest (a JobSet through the child Jobs its controller makes,
one per replicatedJob, as harness.child_jobs does), every container is run as written (no
graintune rewrite) under the capture shim with the environment the kubelet would give it
(harness.container_env: env, valueFrom, envFrom from the manifest's ConfigMaps, fieldRef), and
each MaxText start it makes is loaded by maxtext's own pyconfig. MaxText's answer per container
(maxtext_resume.py): which keys it sees at -1, whether a start restores a per-worker Grain
iterator, and from which checkpoint directory.

graintune's answer is `graintune explain -o json` on the same object: for each element of
`found` (container, key), its `resume` (per container), or the object's `resume` where an
element carries none.

A Difference is one of:
  unsafe      MaxText restores a per-worker iterator for this key; graintune lets the value change.
  over-pin    graintune holds the value where nothing restores it, without saying it cannot read
              something (a `why` with "cannot").
  directory   both hold, and graintune names another run directory than MaxText (or a directory
              that still holds an unexpanded `$`).
  missed      MaxText sees -1 for a key graintune did not find in that container (unless graintune
              deferred the object: it cannot size the host yet, says so, and leaves -1 to MaxText).
  extra       graintune rewrites a key MaxText does not see at -1 there (annotation sites, where
              graintune injects the key itself, excepted).
  refused     MaxText refused the config as written (the manifest is broken, not graintune).
Holding (pins_workers true) with a `why` that says graintune cannot read something is allowed
wherever MaxText would not restore: the safe direction.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import empty_buckets
import harness
import maxtext_resume

KEYS = ("grain_worker_count", "grain_worker_count_eval")
CANNOT = re.compile(r"\bcannot\b", re.IGNORECASE)
START_MINUTE = re.compile(r"_\d{4}-\d{2}-\d{2}-\d{2}-\d{2}$")


@dataclasses.dataclass
class Difference:
  manifest: str
  obj: str  # "Job default/x" (a JobSet's child Job for its containers)
  container: str
  key: str
  kind: str
  detail: str

  def __str__(self) -> str:
    return f"{self.manifest}: {self.obj} container {self.container} {self.key}: {self.kind}: {self.detail}"


class MaxTextLoader:
  """One load_maxtext_config.py --serve process (MaxText imported once, each load in a fork of
  it) for the whole session: each start is loaded in its own checkout (harness.make_checkout) with
  its own argv, M_ variables and working directory, without importing MaxText again for it."""

  def __init__(self, configs_dir: Path):
    self.configs_dir = configs_dir
    self.home = tempfile.TemporaryDirectory(prefix="graintune-loader-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("M_") and k != "JOBSET_NAME"}
    env.update({"JAX_PLATFORMS": "cpu", "HOME": self.home.name})
    # The start check reads each run's checkpoint: every bucket is empty (empty_buckets.py).
    self.buckets = empty_buckets.EmptyBuckets()
    env["STORAGE_EMULATOR_HOST"] = self.buckets.url
    self.log = open(Path(self.home.name) / "loader.log", "w+", encoding="utf-8")  # pylint: disable=consider-using-with
    self.proc = subprocess.Popen(  # pylint: disable=consider-using-with
        [sys.executable, str(harness.HERE / "load_maxtext_config.py"), "--serve"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=self.log, text=True, env=env, cwd=self.home.name)

  def view(self, inv: harness.Invocation, slices: int, check: bool = False) -> harness.MaxTextView:
    """MaxText's view of the start `inv`; `check`: of the start as graintune's start check leaves
    it, with the settings graintune-launcher gave it (inv.env's GRAINTUNE_START_CHECK)."""
    with tempfile.TemporaryDirectory(prefix="graintune-pyconfig-") as tmp:
      harness.make_checkout(Path(tmp), self.configs_dir)
      request = {"argv": inv.argv, "env": {**inv.env, "GRAINTUNE_NUM_SLICES": str(slices)}, "cwd": tmp,
                 "check": check}
      self.proc.stdin.write(json.dumps(request) + "\n")
      self.proc.stdin.flush()
      line = self.proc.stdout.readline()
    if not line:
      self.log.seek(0)
      raise RuntimeError(f"the MaxText loader exited: {self.log.read()[-3000:]}")
    return harness.MaxTextView(**json.loads(line))

  def close(self) -> None:
    self.proc.stdin.close()
    self.proc.wait(timeout=60)
    self.log.close()
    self.home.cleanup()
    self.buckets.close()


@dataclasses.dataclass
class ContainerTruth:
  """MaxText's view of one container: per key, whether a start sees -1; whether any start that
  sees it restores a per-worker iterator, and the directories those starts restore from.
  `annotated` is the same over every start, for a value graintune injects itself (an annotation
  site reaches every MaxText start of the container through its env)."""

  minus_one: dict[str, bool]
  pins: dict[str, bool]
  dirs: dict[str, set[str]]
  why: dict[str, str]
  refused: list[str]
  starts: int
  annotated: "ContainerTruth | None" = None


def container_truth(pod: harness.PlannedPod, container: dict[str, Any], configmaps: list[dict[str, Any]],
                    loader: MaxTextLoader, root: Path) -> ContainerTruth:
  run = harness.run_container(pod, container, configmaps, loader.configs_dir, root)
  def empty() -> ContainerTruth:
    return ContainerTruth({k: False for k in KEYS}, {k: False for k in KEYS}, {k: set() for k in KEYS},
                          {k: "" for k in KEYS}, [], 0)

  def record(t: ContainerTruth, key: str, start: maxtext_resume.StartResume) -> None:
    # The eval iterator is never checkpointed (maxtext_resume.py): its count is restored by nothing.
    if start.pins and key == "grain_worker_count":
      t.pins[key] = True
      t.dirs[key].add(start.checkpoint_dir)
    t.why[key] = t.why[key] or start.why

  truth, annotated = empty(), empty()
  truth.annotated = annotated
  for inv in run.invocations:
    entry = maxtext_resume.entry_of(inv.argv)
    if entry is None:
      continue
    truth.starts += 1
    view = loader.view(inv, pod.slices)
    if view.error is not None:
      truth.refused.append(f"{inv.argv}: {view.error[-300:]}")
      continue
    start = maxtext_resume.resume_of_start(entry, view.resume or {})
    for key in KEYS:
      record(annotated, key, start)
      if getattr(view, key) == -1:
        truth.minus_one[key] = True
        record(truth, key, start)
  return truth


def graintune_resume(entry: dict[str, Any], report: dict[str, Any]) -> dict[str, Any] | None:
  return entry.get("resume") or report.get("resume")


def same_dir(graintune_dir: str, maxtext_dir: str) -> bool:
  graintune_dir = graintune_dir.rstrip("/")
  if graintune_dir == maxtext_dir:
    return True
  # A run named by its start minute: graintune shows the minute as a placeholder.
  if graintune_dir.endswith("_<start minute>/checkpoints") and maxtext_dir.endswith("/checkpoints"):
    stem = maxtext_dir[: -len("/checkpoints")]
    return bool(START_MINUTE.search(stem)) and START_MINUTE.sub("", stem) == graintune_dir[: -len(
        "_<start minute>/checkpoints")]
  return False


def compare_container(manifest: str, obj: str, name: str, truth: ContainerTruth,
                      found: list[dict[str, Any]], report: dict[str, Any],
                      tally: dict[str, int] | None = None) -> list[Difference]:
  """The differences of one container; `tally`, when given, counts each key MaxText sees at -1 or
  graintune rewrites by outcome: a Difference's kind, "held, saying it cannot read" (the allowed
  over-pin), or "right"; and MaxText's refusals of the start as written ("refused")."""
  diffs = container_differences(manifest, obj, name, truth, found, report)
  if tally is not None:
    by_key = {f["key"]: f for f in found if f.get("container") == name}
    for key in KEYS:
      kinds = [d.kind for d in diffs if d.key == key]
      if not kinds and not truth.minus_one[key] and key not in by_key:
        continue
      outcome = kinds[0] if kinds else "right"
      if not kinds and key in by_key and "left" in by_key[key]:
        outcome = "left to MaxText, saying why"
      elif not kinds and key in by_key:
        resume = graintune_resume(by_key[key], report)
        seen = truth.annotated if by_key[key].get("where") == "annotation" and truth.annotated else truth
        if resume and resume.get("pins_workers") and not seen.pins[key]:
          outcome = "held, saying it cannot read"
      tally[outcome] = tally.get(outcome, 0) + 1
    tally["refused"] = tally.get("refused", 0) + sum(1 for d in diffs if d.kind == "refused")
  return diffs


def container_differences(manifest: str, obj: str, name: str, truth: ContainerTruth,
                          found: list[dict[str, Any]], report: dict[str, Any]) -> list[Difference]:
  diffs = []

  def diff(key: str, kind: str, detail: str) -> None:
    diffs.append(Difference(manifest, obj, name, key, kind, detail))

  for refusal in truth.refused:
    diff("-", "refused", refusal)
  by_key = {f["key"]: f for f in found if f.get("container") == name}
  for key in KEYS:
    entry = by_key.get(key)
    if entry is None:
      # Deferred: graintune says it cannot size the host yet and leaves -1 to MaxText (its pods
      # are tuned when created): it holds nothing wrongly, so only an unexplained miss counts.
      if truth.minus_one[key] and report.get("outcome") != "Deferred":
        diff(key, "missed", f"MaxText sees -1; graintune found no site (outcome {report.get('outcome')})")
      continue
    if "left" in entry and not truth.minus_one[key]:
      continue  # found as "may be -1", left to MaxText: graintune changes nothing
    if not truth.minus_one[key] and entry.get("where") != "annotation":
      diff(key, "extra", f"graintune rewrites it ({entry.get('where')}); MaxText never sees -1 "
           f"({truth.starts} MaxText start(s))")
      continue
    if entry.get("where") == "annotation" and truth.annotated is not None:
      seen = truth.annotated
    else:
      seen = truth
    resume = graintune_resume(entry, report)
    if resume is None:
      diff(key, "unsafe" if seen.pins[key] else "over-pin", "graintune reports no resume decision")
      continue
    holds, why, gdir = bool(resume.get("pins_workers")), resume.get("why", ""), resume.get("checkpoint_dir", "")
    if seen.pins[key] and not holds:
      diff(key, "unsafe", f"MaxText restores a per-worker iterator from {sorted(seen.dirs[key])}; "
           f"graintune: {why}")
    elif not seen.pins[key] and holds and not CANNOT.search(why):
      diff(key, "over-pin", f"MaxText: {seen.why[key]}; graintune holds: {why}")
    elif seen.pins[key] and holds:
      if "$" in gdir:
        diff(key, "directory", f"graintune records the unexpanded directory {gdir!r}")
      elif gdir or not CANNOT.search(why):
        wrong = [d for d in seen.dirs[key] if not same_dir(gdir, d)]
        if wrong:
          diff(key, "directory", f"MaxText restores from {sorted(seen.dirs[key])}; graintune names {gdir!r}")
  return diffs


def runs_maxtext(container: dict[str, Any]) -> bool:
  """Containers whose command could start MaxText (others, like `nginx` or `tail -F`, would not
  end under the shim)."""
  return bool(harness.MAXTEXT_HINT.search(" ".join((container.get("command") or []) + (container.get("args") or []))))


def containers_of(spec: dict[str, Any]) -> list[dict[str, Any]]:
  return (spec.get("initContainers") or []) + (spec.get("containers") or [])


def compare_object(manifest: str, obj_name: str, report: dict[str, Any],
                   truths: dict[str, ContainerTruth], tally: dict[str, int] | None = None) -> list[Difference]:
  """One explain report against the truths of its containers (by container name)."""
  diffs = []
  for name in sorted({f.get("container", "") for f in report["found"]} - set(truths)):
    for f in (f for f in report["found"] if f.get("container") == name):
      diffs.append(Difference(manifest, obj_name, name, f["key"], "extra",
                              "graintune rewrites a container that never starts MaxText"))
  for name, truth in truths.items():
    diffs += compare_container(manifest, obj_name, name, truth, report["found"], report, tally)
  return diffs


def differences(manifest: str, docs: list[dict[str, Any]], loader: MaxTextLoader, workdir: Path,
                tally: dict[str, int] | None = None) -> tuple[list[Difference], int]:
  """All differences of one manifest and the number of (container, key) sites MaxText sees at -1.

  A Pod or Job is compared as itself. A JobSet is compared twice: each child Job (where every
  attempt's value lands) against its own containers, and the JobSet (its first attempt's value)
  against the containers of all its replicatedJobs, matched by container name."""
  configmaps = [d for d in docs if d.get("kind") == "ConfigMap"]
  diffs: list[Difference] = []
  compared = 0
  for doc in (d for d in docs if harness.is_workload(d)):
    objects = harness.child_jobs(doc) if doc["kind"] == "JobSet" else [(doc, 1)]
    all_truths: dict[str, ContainerTruth] = {}
    for obj, slices in objects:
      report = {e["object"]: e for e in harness.explain(configmaps + [obj], workdir)}[harness.object_name(obj)]
      namespace = (obj.get("metadata") or {}).get("namespace", "default")
      pod = harness.PlannedPod(harness.object_name(obj), harness.pod_spec_of(obj), namespace, report["found"],
                               slices=slices, meta=harness.pod_meta_of(obj))
      truths = {}
      for container in filter(runs_maxtext, containers_of(pod.spec)):
        root = workdir / f"sandbox-{len(list(workdir.glob('sandbox-*')))}"
        root.mkdir()
        truths[container.get("name", "")] = container_truth(pod, container, configmaps, loader, root)
      compared += sum(1 for t in truths.values() for k in KEYS if t.minus_one[k])
      diffs += compare_object(manifest, pod.source, report, truths, tally)
      all_truths.update(truths)
    if doc["kind"] == "JobSet":
      report = {e["object"]: e for e in harness.explain(configmaps + [doc], workdir)}[harness.object_name(doc)]
      diffs += compare_object(manifest, harness.object_name(doc), report, all_truths)
  return diffs, compared
