"""MaxText's own config loader sees the values graintune wrote, and refuses nothing.

For every example manifest, every case of the webhook's admission table and every manifest of
the differential test's corpus (corpus/, corpus/xpk/), each MaxText start
is run as the container would run it (see harness.py) before and after graintune's rewrite, and
loaded through maxtext.configs.pyconfig.initialize_pydantic:
  - after: MaxText loads without error (no key set both on the command line and in the
    environment, nothing it cannot parse), and sees exactly the value graintune reported for
    each key it rewrote; keys graintune did not report are what they were before;
  - before: where graintune found a -1 in the container, MaxText saw -1 (so the comparison is
    not vacuous: the rewrite is what changed it);
  - a JobSet's child Jobs get the value announced on the JobSet.
Run by scripts/check-maxtext-config.sh (needs GRAINTUNE_BIN and the pinned maxtext package).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness

REPO = Path(__file__).resolve().parents[2]
KEYS = ("grain_worker_count", "grain_worker_count_eval")


def configs_dir() -> Path:
  from maxtext.utils.globals import MAXTEXT_CONFIGS_DIR  # pylint: disable=import-outside-toplevel
  return Path(MAXTEXT_CONFIGS_DIR)


def example_cases() -> list[Any]:
  cases = []
  for path in sorted((REPO / "examples").glob("*.yaml")):
    docs = harness.load_manifest(path)
    if any(harness.is_workload(d) for d in docs):
      cases.append(pytest.param(docs, id=f"examples/{path.name}"))
  return cases


def corpus_cases() -> list[Any]:
  """The differential test's manifests (corpus/, and corpus/xpk/: JobSets rendered by xpk)."""
  corpus = Path(__file__).resolve().parent / "corpus"
  return [pytest.param(harness.load_manifest(path), id=f"corpus/{path.relative_to(corpus)}")
          for path in sorted(corpus.glob("*.yaml")) + sorted(corpus.glob("xpk/*.yaml"))]


def admission_table_cases() -> list[Any]:
  table = json.loads((REPO / "webhook" / "testdata" / "admission_table.json").read_text())
  configmaps = [{"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": cm["name"], "namespace": cm["namespace"]},
                 "data": {cm["key"]: cm["data"]}} for cm in table["configmaps"]]
  cases = []
  for case in table["cases"]:
    obj = json.loads(json.dumps(case["object"]))
    obj.setdefault("metadata", {}).setdefault("namespace", case.get("namespace", "default"))
    cases.append(pytest.param(configmaps + [obj], id=f"admission_table/{case['name']}"))
  return cases


def views_of(pod: harness.PlannedPod, container: dict[str, Any], configmaps: list[dict[str, Any]],
             tmp_path: Path, loader, check: bool = False):
  """The container run in a sandbox of its own, and MaxText's view of each MaxText start it made;
  `check`: of each start as graintune's start check leaves it, where graintune-launcher gave it
  one (MaxTextLoader.view)."""
  root = tmp_path / f"sandbox-{len(list(tmp_path.glob('sandbox-*')))}"
  root.mkdir()
  run = harness.run_container(pod, container, configmaps, configs_dir(), root)
  starts = [inv for inv in run.invocations if harness.is_maxtext_start(inv)]
  return run, [(inv, loader.view(inv, pod.slices, check=check and "GRAINTUNE_START_CHECK" in inv.env))
               for inv in starts]


@pytest.mark.parametrize("docs", example_cases() + admission_table_cases() + corpus_cases())
def test_maxtext_sees_what_graintune_wrote(docs: list[dict[str, Any]], tmp_path: Path, loader) -> None:
  configmaps = [d for d in docs if d.get("kind") == "ConfigMap"]
  before = {p.source: p for p in harness.plan_pods(docs, tmp_path, mutate=False)}
  after = harness.plan_pods(docs, tmp_path, mutate=True)
  checked = 0
  for pod in after:
    if pod.announced is not None:
      # Rewritten to the announced value, or already holding it from the JobSet's template.
      values = {f["value"] for f in pod.findings if f["key"] == "grain_worker_count" and "left" not in f}
      assert values <= {pod.announced}, f"{pod.source}: child Job got {values}, JobSet announced {pod.announced}"
    for container in harness.maxtext_containers(pod):
      name = container.get("name", "")
      # A -1 graintune found but leaves to MaxText ("left") is not rewritten: it is checked below
      # as a key graintune did not change.
      reported = {f["key"]: f for f in pod.findings if f["container"] == name and "left" not in f}
      run, views = views_of(pod, container, configmaps, tmp_path, loader)
      if not views and run.invocations and all(
          inv.argv and inv.argv[0].endswith("train_compile.py") for inv in run.invocations):
        continue  # an ahead-of-time compile: no trainer to load
      assert views, (f"{pod.source} container {name}: MaxText never started (shell exit "
                     f"{run.shell_status}; captured {[i.argv for i in run.invocations]})")
      original = next(c for c in harness.maxtext_containers(before[pod.source]) if c.get("name") == name)
      _, before_views = views_of(before[pod.source], original, configmaps, tmp_path, loader)
      assert len(before_views) == len(views), f"{pod.source} {name}: the rewrite changed how often MaxText starts"
      for (inv, view), (_, old) in zip(views, before_views):
        assert view.error is None, f"{pod.source} {name}: MaxText refused {inv.argv} env {inv.env}: {view.error}"
        for key in KEYS:
          seen = getattr(view, key)
          if key in reported:
            assert seen == reported[key]["value"], (
                f"{pod.source} {name}: MaxText sees {key}={seen}, graintune chose {reported[key]['value']} "
                f"(argv {inv.argv}, env {inv.env})")
            assert seen >= 1, f"{pod.source} {name}: {key}={seen} is not a worker count"
            if reported[key]["where"] != "annotation":
              assert old.error is None and getattr(old, key) == -1, (
                  f"{pod.source} {name}: before the rewrite MaxText saw {key}={getattr(old, key)} "
                  f"({old.error}), not -1")
          elif pod.announced is not None and key == "grain_worker_count" and getattr(old, key) == -1:
            # A child Job made from the JobSet's rewritten template holds the announced value.
            assert seen == pod.announced, (
                f"{pod.source} {name}: MaxText sees {key}={seen}, the JobSet announced {pod.announced}")
          elif old.error is None:
            assert seen == getattr(old, key), f"{pod.source} {name}: {key} changed from {getattr(old, key)} to {seen} unreported"
        checked += 1
  # Every manifest here starts MaxText at least once (pod-no-maxtext runs nginx: nothing to load).
  if any("python" in json.dumps(harness.pod_spec_of(d)) for d in docs if harness.is_workload(d)):
    assert checked > 0


def test_the_loader_refuses_a_key_set_twice(tmp_path: Path, loader) -> None:
  """The control that makes the test above meaningful: had graintune put the value on the command
  line while the job sets M_GRAIN_WORKER_COUNT, MaxText would refuse to start, and the harness
  reports it."""
  pod = harness.PlannedPod("Pod default/conflict", {}, "default", [])
  container = {"name": "maxtext", "command": ["python3", "-m", "MaxText.train", "MaxText/configs/base.yml",
                                              "grain_worker_count=8"],
               "env": [{"name": "M_GRAIN_WORKER_COUNT", "value": "8"}]}
  _, views = views_of(pod, container, [], tmp_path, loader)
  assert len(views) == 1
  assert views[0][1].error is not None and "overridden by both CLI" in views[0][1].error


def test_bash_decides_the_argv(tmp_path: Path, loader) -> None:
  """Quoting is the shell's: a quoted key=value with a space reaches MaxText as one argument and
  an exported M_ variable reaches its environment."""
  pod = harness.PlannedPod("Pod default/quoting", {}, "default", [])
  script = ("export M_GRAIN_WORKER_COUNT_EVAL=3 && cd /app && "
            "python3 -m MaxText.train MaxText/configs/base.yml run_name='a run' 'grain_worker_count=5'")
  _, views = views_of(pod, {"name": "c", "command": ["bash", "-c", script]}, [], tmp_path, loader)
  assert len(views) == 1
  inv, view = views[0]
  assert "run_name=a run" in inv.argv and inv.env == {"M_GRAIN_WORKER_COUNT_EVAL": "3"}
  assert (view.grain_worker_count, view.grain_worker_count_eval) == (5, 3), view.error
