"""The differential test's own rules, without MaxText: MaxText's resume rule (maxtext_resume.py)
on resolved settings, the comparison's kinds of difference, and the environment the kubelet gives
a container (env, valueFrom, envFrom, fieldRef)."""

from __future__ import annotations

import differential
import harness
import maxtext_resume

GRAIN = {"dataset_type": "grain", "enable_checkpointing": True, "enable_emergency_checkpoint": False,
         "enable_multi_tier_checkpointing": False, "grain_use_elastic_iterator": False,
         "colocated_python_data_input": False, "base_output_directory": "gs://b/runs", "run_name": "r",
         "checkpoint_dir": "gs://b/runs/r/checkpoints/", "cwd": "/w"}


def test_maxtext_rule_pins_only_a_per_worker_grain_state() -> None:
  assert maxtext_resume.resume_of_start("train", GRAIN).pins
  assert maxtext_resume.resume_of_start("train", GRAIN).checkpoint_dir == "gs://b/runs/r/checkpoints"
  assert not maxtext_resume.resume_of_start("train_compile", GRAIN).pins
  for key, value in (("enable_checkpointing", False), ("enable_emergency_checkpoint", True),
                     ("enable_multi_tier_checkpointing", True), ("dataset_type", "hf"),
                     ("dataset_type", "synthetic"), ("grain_use_elastic_iterator", True)):
    assert not maxtext_resume.resume_of_start("train", {**GRAIN, key: value}).pins, key
  # A colocated (Pathways) iterator still writes one state per process.
  assert maxtext_resume.resume_of_start("train", {**GRAIN, "colocated_python_data_input": True}).pins
  local = {**GRAIN, "base_output_directory": "/w/maxtext_output", "checkpoint_dir": "/w/maxtext_output/r/checkpoints/"}
  assert maxtext_resume.resume_of_start("train", local).checkpoint_dir == "maxtext_output/r/checkpoints"
  assert maxtext_resume.entry_of(["train.py", "x.yml"]) == "train"
  assert maxtext_resume.entry_of(["MaxText/train_compile.py"]) == "train_compile"
  assert maxtext_resume.entry_of(["decode.py"]) is None


def truth(pins: bool, dirs: set[str] | None = None, eval_minus_one: bool = False) -> differential.ContainerTruth:
  return differential.ContainerTruth(
      {"grain_worker_count": True, "grain_worker_count_eval": eval_minus_one},
      {"grain_worker_count": pins, "grain_worker_count_eval": False},
      {"grain_worker_count": dirs or set(), "grain_worker_count_eval": set()},
      {"grain_worker_count": "maxtext's reason", "grain_worker_count_eval": ""}, [], 1)


def found(pins: bool, why: str, directory: str = "", key: str = "grain_worker_count") -> dict:
  return {"container": "c", "key": key, "where": "argv",
          "resume": {"pins_workers": pins, "why": why, "checkpoint_dir": directory}}


def kinds(t: differential.ContainerTruth, entries: list[dict], report: dict | None = None) -> list[str]:
  return [d.kind for d in differential.compare_container("m", "Job default/j", "c", t, entries, report or {})]


def test_comparison_kinds() -> None:
  d = "gs://b/runs/r/checkpoints"
  assert kinds(truth(True, {d}), [found(True, "checkpoints", d)]) == []
  assert kinds(truth(True, {d}), [found(False, "dataset_type is synthetic")]) == ["unsafe"]
  assert kinds(truth(False), [found(True, "this run checkpoints")]) == ["over-pin"]
  assert kinds(truth(False), [found(True, "graintune cannot read dataset_type")]) == []  # held, safe
  assert kinds(truth(True, {d}), [found(True, "x", "gs://b/o/$RUN_NAME/checkpoints")]) == ["directory"]
  assert kinds(truth(True, {d}), [found(True, "x", "gs://b/runs/other/checkpoints")]) == ["directory"]
  assert kinds(truth(True, {d}), [found(True, "graintune cannot expand run_name", "")]) == []
  assert kinds(truth(True, {d}), []) == ["missed"]
  assert kinds(truth(True, {d}, eval_minus_one=True), [found(True, "x", d)]) == ["missed"]
  # The eval count is restored by nothing: holding it for a run is an over-pin.
  assert kinds(truth(True, {d}, eval_minus_one=True),
               [found(True, "x", d), found(True, "checkpoints", d, "grain_worker_count_eval")]) == ["over-pin"]
  # The object's resume stands in where an element carries none.
  bare = {"container": "c", "key": "grain_worker_count", "where": "argv"}
  assert kinds(truth(True, {d}), [bare], {"resume": {"pins_workers": False, "why": "off"}}) == ["unsafe"]
  minute = {"gs://b/runs/default_2026-12-03-18-55/checkpoints"}
  assert kinds(truth(True, minute), [found(True, "x", "gs://b/runs/default_<start minute>/checkpoints")]) == []


def test_container_env_as_the_kubelet_sets_it() -> None:
  configmaps = [{"kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}, "data": {"A": "1", "B": "2"}}]
  container = {"envFrom": [{"configMapRef": {"name": "cm"}}, {"prefix": "M_", "configMapRef": {"name": "cm"}},
                           {"configMapRef": {"name": "absent"}}],
               "env": [{"name": "A", "value": "x$(B)"},
                       {"name": "K", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "B"}}},
                       {"name": "J", "valueFrom": {"fieldRef": {
                           "fieldPath": "metadata.annotations['jobset.sigs.k8s.io/jobset-name']"}}},
                       {"name": "P", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                       {"name": "U", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}
  meta = {"name": "pod-0", "annotations": {"jobset.sigs.k8s.io/jobset-name": "js"}}
  env = harness.container_env(container, configmaps, "ns", meta)
  assert env == {"A": "x2", "B": "2", "M_A": "1", "M_B": "2", "K": "2", "J": "js", "P": "pod-0"}
