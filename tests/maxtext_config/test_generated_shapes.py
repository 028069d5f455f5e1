"""graintune's reading of generated container shapes, judged by bash and MaxText's own loader.

shapes.generate(seed) writes a Pod the way users write MaxText starts, combined at random from
a seed (shells and their option forms, settings from words, env, ConfigMaps, script variables,
defaults, arrays, `set --`, functions, positional parameters, sourced files, here-documents,
`if` and `case`). Each is judged as the corpus is (differential.differences: the container run
under real bash with the capture shim, every MaxText start loaded by maxtext 0.2.5's pyconfig,
against `graintune explain`), and every value graintune writes is loaded by MaxText again after
the rewrite. Outcomes are counted per (container, key) site and printed:
  right, "held, saying it cannot read" (over-pinned on purpose: allowed), and the differences
  (unsafe, missed, over-pin, directory, extra); plus "refused as written" (a generated start
  MaxText itself refuses: the shape, not graintune) and "refused value" (MaxText refuses what
  graintune wrote).
Then the trainer's start, as graintune's start check leaves it: where admission leaves a -1 it
cannot rewrite and wraps the trainer with the start check (explain's `start_fill`), every MaxText
start of the tuned container runs graintune's real check (launcher/python, with the settings the
build's graintune-launcher gave it, every bucket empty as for a first start: empty_buckets.py)
and MaxText loads what the check left. Counted per site:
  "filled at the start check" (MaxText starts with graintune's value, not its own pick),
  "still -1 at the start" (the check left it: why is printed), or no MaxText start at all (the
  script stops before it, as `set -u` on an unset variable does); a start MaxText refuses after
  the check fails the test. "right at the start" is admission's right plus the filled, over the
  sites whose MaxText starts.
The test fails on any unsafe, missed or refused value. GRAINTUNE_SHAPES cases (300 by default)
from GRAINTUNE_SHAPES_SEED on; docs/development.md gives a longer run on other seeds.
"""

from __future__ import annotations

import os
from pathlib import Path

import differential
import harness
import shapes
from test_maxtext_config import views_of

CASES = int(os.environ.get("GRAINTUNE_SHAPES", "300"))
FIRST_SEED = int(os.environ.get("GRAINTUNE_SHAPES_SEED", "48000"))
FAILING = ("unsafe", "missed", "refused value")


def as_graintune_wrote_it(docs, loader, workdir: Path, at_start: dict[str, int]) -> list[str]:
  """Every container graintune changed, run as it wrote it (graintune-launcher in front where it
  added one): MaxText's refusals of what graintune wrote, as MaxText loads each start after the
  rewrite. A container whose -1 admission left to the start check (explain's start_fill) is
  loaded as the check leaves each start, and counted into `at_start` per container."""
  configmaps = [d for d in docs if d.get("kind") == "ConfigMap"]
  refusals = []
  for pod in harness.plan_pods(docs, workdir, mutate=True):
    if not pod.findings:
      continue
    filled = {f.get("container") for f in pod.findings if "start_fill" in f}
    for container in harness.maxtext_containers(pod):
      checked = container.get("name") in filled
      _, views = views_of(pod, container, configmaps, workdir, loader, check=checked)
      refusals += [f"{inv.argv} env {inv.env}: {view.error}" for inv, view in views if view.error]
      if not checked:
        continue
      counts = [view.grain_worker_count for _, view in views if not view.error]
      outcome = ("no MaxText start (the script stops first)" if not views
                 else "filled at the start check" if counts and all(c is not None and c >= 1 for c in counts)
                 else "still -1 at the start")
      if outcome == "still -1 at the start":
        print(f"  {pod.source} {container.get('name')}: still -1: " +
              "; ".join(str((view.check or {}).get("why", view.error))[:200] for _, view in views))
      at_start[outcome] = at_start.get(outcome, 0) + 1
  return refusals


def test_generated_shapes_are_read_on_the_safe_side(loader, tmp_path: Path) -> None:
  tally: dict[str, int] = {}
  at_start: dict[str, int] = {}
  failures: list[str] = []
  for seed in range(FIRST_SEED, FIRST_SEED + CASES):
    docs = shapes.generate(seed)
    work = tmp_path / f"shape-{seed}"
    work.mkdir()
    as_written: dict[str, int] = {}
    diffs, _ = differential.differences(f"shape-{seed}", docs, loader, work, as_written)
    if as_written.get("refused"):
      tally["refused as written"] = tally.get("refused as written", 0) + 1
      continue
    for outcome, count in as_written.items():
      if outcome != "refused":
        tally[outcome] = tally.get(outcome, 0) + count
    failures += [f"seed {seed}: {d}" for d in diffs if d.kind in FAILING]
    refusals = as_graintune_wrote_it(docs, loader, work, at_start)
    if refusals:
      tally["refused value"] = tally.get("refused value", 0) + 1
      failures += [f"seed {seed}: MaxText refuses what graintune wrote (or its start check left): {r}"
                   for r in refusals]
  sites = sum(v for k, v in tally.items() if k != "refused as written")
  print(f"\n{CASES} generated shapes (seeds {FIRST_SEED}..{FIRST_SEED + CASES - 1}), {sites} sites:")
  for outcome in sorted(tally, key=lambda k: -tally[k]):
    print(f"  {outcome:32} {tally[outcome]:5}" + (f"  ({tally[outcome] / sites:.1%})" if sites and
                                                   outcome != "refused as written" else ""))
  print("At the trainer's start (graintune's start check, where admission left a -1 to it):")
  for outcome in sorted(at_start, key=lambda k: -at_start[k]):
    print(f"  {outcome:32} {at_start[outcome]:5}")
  right = tally.get("right", 0) + at_start.get("filled at the start check", 0)
  starting = sites - at_start.get("no MaxText start (the script stops first)", 0)
  print(f"  {'right at the start':32} {right:5}" +
        (f"  ({right / starting:.1%} of the {starting} sites whose MaxText starts)" if starting else ""))
  assert not failures, "\n".join(failures[:40])
