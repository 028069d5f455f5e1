"""From a manifest to what MaxText's own config loader sees, before and after graintune.

The chain, for every Pod, Job and JobSet of a manifest:
  1. `graintune explain --output json` (the webhook's planner, standalone) gives the value chosen
     per -1 and the JSONPatch; the patch is applied with the `jsonpatch` package.
  2. A JobSet keeps -1 in its spec (the webhook only annotates it), so its child Jobs are made the
     way the JobSet controller makes them (replicated Job template + jobset-name and
     restart-attempt labels) and go through step 1 as Jobs: that is where the value lands.
  3. Each container that starts MaxText is run for real: its command + args (with Kubernetes'
     $(VAR) expansion) under bash/sh with its env, on a PATH where `python3`/`python` are a
     capture shim. So the shell's own parsing of a rewritten `bash -c` script decides what
     MaxText's argv is, and an `export M_...` in the script reaches the environment.
  4. Each captured invocation is replayed in a fresh interpreter through
     maxtext.configs.pyconfig.initialize_pydantic(argv) with the captured M_* environment, and
     the resulting grain_worker_count / grain_worker_count_eval (or MaxText's error) come back.

Filesystem: the container image's layout is not ours. A sandbox root stands in for `/`:
ConfigMap volumes are written under it at their mountPath, absolute paths in MaxText's argv that
exist there are mapped into it, MaxText/configs and src/MaxText/configs (the layouts of a MaxText
checkout) point at the installed package's configs, and `cd` to an absolute path in a bash script
stays in that checkout (BASH_ENV defines a `cd` function; scripts are otherwise untouched).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import jsonpatch
import yaml

HERE = Path(__file__).resolve().parent
SHIM_NAMES = ("python3", "python", "pip", "pip3", "sleep", "gsutil", "gcloud")
MAXTEXT_HINT = re.compile(r"python|maxtext", re.IGNORECASE)


@dataclasses.dataclass
class Invocation:
  """One start of MaxText inside a container, as the capture shim saw it."""

  argv: list[str]  # pyconfig's argv: [script, config.yml?, key=value, ...]
  env: dict[str, str]  # the M_* variables and JOBSET_NAME MaxText reads


@dataclasses.dataclass
class ContainerRun:
  pod: str  # object the pod spec came from, e.g. "Job default/foo"
  container: str
  invocations: list[Invocation]
  shell_status: int


@dataclasses.dataclass
class MaxTextView:
  """What MaxText's config loader made of one invocation."""

  grain_worker_count: int | None = None
  grain_worker_count_eval: int | None = None
  error: str | None = None
  # The settings that decide whether and where the run checkpoints (load_maxtext_config.py's
  # RESUME_KEYS, as MaxText resolved them) and the loader's working directory.
  resume: dict[str, Any] | None = None
  # With a start check (MaxTextLoader.checked_view): what graintune's start check saw and did
  # (its report), the view above being of the start as the check left it.
  check: dict[str, Any] | None = None


def graintune_bin() -> str:
  path = os.environ.get("GRAINTUNE_BIN")
  if not path or not os.access(path, os.X_OK):
    raise RuntimeError("GRAINTUNE_BIN must name the built graintune CLI (scripts/check-maxtext-config.sh sets it)")
  return path


def load_manifest(path: Path) -> list[dict[str, Any]]:
  return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def explain(docs: list[dict[str, Any]], workdir: Path) -> list[dict[str, Any]]:
  """Runs `graintune explain --output json` on the documents; one report entry per workload."""
  manifest = workdir / f"explain-{len(list(workdir.glob('explain-*')))}.yaml"
  manifest.write_text("\n---\n".join(json.dumps(d) for d in docs))
  done = subprocess.run([graintune_bin(), "explain", str(manifest), "--output", "json"],
                        capture_output=True, text=True, timeout=60, check=False)
  if done.returncode != 0:
    raise RuntimeError(f"graintune explain failed ({done.returncode}): {done.stderr}")
  return json.loads(done.stdout)


WORKLOAD_KINDS = {("v1", "Pod"), ("batch/v1", "Job"), ("jobset.x-k8s.io/v1alpha2", "JobSet")}


def is_workload(doc: dict[str, Any]) -> bool:
  return (doc.get("apiVersion"), doc.get("kind")) in WORKLOAD_KINDS


def object_name(doc: dict[str, Any]) -> str:
  meta = (doc.get("metadata") or {})
  return f"{doc['kind']} {meta.get('namespace', 'default')}/{meta.get('name', '')}"


def child_jobs(jobset: dict[str, Any], attempt: int = 0) -> list[tuple[dict[str, Any], int]]:
  """The Jobs the JobSet controller creates for one attempt, with their replica counts (one per
  replicated Job; replicas share a template, so one stands for all; in xpk's multislice JobSets
  each replica is one slice)."""
  meta = (jobset.get("metadata") or {})
  name, namespace = meta.get("name", ""), meta.get("namespace", "default")
  jobs = []
  for rj in (jobset.get("spec") or {}).get("replicatedJobs", []):
    template = copy.deepcopy((rj.get("template") or {}))
    labels = {"jobset.sigs.k8s.io/jobset-name": name,
              "jobset.sigs.k8s.io/replicatedjob-name": rj.get("name", ""),
              "jobset.sigs.k8s.io/restart-attempt": str(attempt)}
    coordinator = (jobset.get("spec") or {}).get("coordinator", {})
    if coordinator.get("replicatedJob"):  # JobSet's coordinator label: the first pod's DNS name
      labels["jobset.sigs.k8s.io/coordinator"] = (
          f"{name}-{coordinator['replicatedJob']}-{coordinator.get('jobIndex', 0)}-"
          f"{coordinator.get('podIndex', 0)}.{name}")
    job_meta = (template.get("metadata") or {})
    job_meta.update({"name": f"{name}-{rj.get('name', '')}-0", "namespace": namespace})
    _mapping_at(job_meta, "labels").update(labels)
    pod_meta = template.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {})
    _mapping_at(pod_meta, "labels").update(labels)
    # The JobSet controller puts the same keys on the pods as annotations (xpk's JOBSET_NAME
    # fieldRef reads the annotation).
    _mapping_at(pod_meta, "annotations").update(labels)
    jobs.append(({"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": template["spec"]},
                 int(rj.get("replicas", 1))))
  return jobs


def _mapping_at(meta: dict[str, Any], key: str) -> dict[str, Any]:
  """meta[key] as a dict to update: xpk writes keys with no value (`annotations:`), read as null."""
  if not isinstance(meta.get(key), dict):
    meta[key] = {}
  return meta[key]


@dataclasses.dataclass
class PlannedPod:
  """A pod spec a trainer would run with, and what graintune said about it."""

  source: str  # "Job default/foo" (a JobSet's pods come from its child Jobs)
  spec: dict[str, Any]
  namespace: str
  findings: list[dict[str, Any]]  # explain's "found" entries: container, key, value, where
  announced: int | None = None  # a JobSet's first-attempt value, for its child Jobs to match
  slices: int = 1  # TPU slices the job spans (the JobSet's replicas), for MaxText's DCN checks
  meta: dict[str, Any] = dataclasses.field(default_factory=dict)  # the pod's name, labels, annotations


def pod_spec_of(doc: dict[str, Any]) -> dict[str, Any]:
  if doc["kind"] == "Pod":
    return (doc.get("spec") or {})
  return (doc.get("spec") or {}).get("template", {}).get("spec", {})


def pod_meta_of(doc: dict[str, Any]) -> dict[str, Any]:
  """The metadata a pod of `doc` has: a Pod's own; a Job's pod template's, named after the Job
  and in its namespace."""
  meta = (doc.get("metadata") or {})
  if doc["kind"] == "Pod":
    return meta
  template = copy.deepcopy((doc.get("spec") or {}).get("template", {}).get("metadata", {}))
  template.setdefault("name", f"{meta.get('name', '')}-0-abcde")
  template.setdefault("namespace", meta.get("namespace", "default"))
  return template


def plan_pods(docs: list[dict[str, Any]], workdir: Path, mutate: bool = True) -> list[PlannedPod]:
  """Pod specs after graintune (mutate=True) or as written (mutate=False), JobSets expanded."""
  configmaps = [d for d in docs if d.get("kind") == "ConfigMap"]
  workloads = [d for d in docs if is_workload(d)]
  pods: list[PlannedPod] = []
  if not mutate:
    for doc in workloads:
      for obj, slices in child_jobs(doc) if doc["kind"] == "JobSet" else [(doc, 1)]:
        pods.append(PlannedPod(object_name(obj), pod_spec_of(obj),
                               (obj.get("metadata") or {}).get("namespace", "default"), [], slices=slices,
                               meta=pod_meta_of(obj)))
    return pods

  report = {entry["object"]: entry for entry in explain(configmaps + workloads, workdir)}
  for doc in workloads:
    entry = report[object_name(doc)]
    mutated = jsonpatch.apply_patch(doc, entry["patch"])
    if doc["kind"] != "JobSet":
      pods.append(PlannedPod(object_name(doc), pod_spec_of(mutated),
                             (doc.get("metadata") or {}).get("namespace", "default"), entry["found"],
                             meta=pod_meta_of(mutated)))
      continue
    jobs = child_jobs(mutated)
    job_report = {e["object"]: e for e in explain(configmaps + [job for job, _ in jobs], workdir)}
    announced = entry["workers"] if entry["found"] else None
    for job, slices in jobs:
      job_entry = job_report[object_name(job)]
      job_after = jsonpatch.apply_patch(job, job_entry["patch"])
      pods.append(PlannedPod(object_name(job), pod_spec_of(job_after),
                             (job.get("metadata") or {}).get("namespace", "default"), job_entry["found"],
                             announced, slices, pod_meta_of(job_after)))
  return pods


def expand_kubernetes_vars(text: str, env: dict[str, str]) -> str:
  """Kubernetes' $(VAR) expansion of command/args: defined names expand, $$ escapes, the rest
  stays as written."""
  out, i = [], 0
  while i < len(text):
    if text.startswith("$$", i):
      out.append("$")
      i += 2
    elif text.startswith("$(", i) and (end := text.find(")", i + 2)) != -1 and text[i + 2:end] in env:
      out.append(env[text[i + 2:end]])
      i = end + 1
    else:
      out.append(text[i])
      i += 1
  return "".join(out)


FIELD_PATH = re.compile(r"^metadata\.(labels|annotations)\['([^']+)'\]$")


def field_value(path: str, meta: dict[str, Any]) -> str | None:
  """A downward-API fieldRef of the pod: metadata.name/namespace, or one label or annotation."""
  if path in ("metadata.name", "metadata.namespace"):
    return meta.get(path.split(".")[1])
  if m := FIELD_PATH.match(path):
    return meta.get(m.group(1), {}).get(m.group(2))
  return None


def configmap_data(configmaps: list[dict[str, Any]], namespace: str, name: str) -> dict[str, str] | None:
  for cm in configmaps:
    cm_meta = (cm.get("metadata") or {})
    if cm_meta.get("name") == name and cm_meta.get("namespace", "default") == namespace:
      return {k: str(v) for k, v in (cm.get("data") or {}).items()}
  return None


def container_env(container: dict[str, Any], configmaps: list[dict[str, Any]], namespace: str,
                  meta: dict[str, Any]) -> dict[str, str]:
  """The environment the kubelet gives the container: envFrom first (ConfigMaps, with their
  prefix), then env in order (value with $(VAR) of earlier variables, valueFrom.configMapKeyRef,
  valueFrom.fieldRef), a later entry replacing an earlier one. A source that is not in the
  manifest leaves its variable unset, as an optional reference would."""
  env: dict[str, str] = {}
  for source in (container.get("envFrom") or []):
    ref = source.get("configMapRef")
    data = configmap_data(configmaps, namespace, ref.get("name", "")) if ref else None
    for key, value in (data or {}).items():
      env[source.get("prefix", "") + key] = value
  for var in (container.get("env") or []):
    name = var.get("name", "")
    if "value" in var:
      env[name] = expand_kubernetes_vars(str(var["value"]), env)
      continue
    source = (var.get("valueFrom") or {})
    value = None
    if ref := source.get("configMapKeyRef"):
      value = (configmap_data(configmaps, namespace, ref.get("name", "")) or {}).get(ref.get("key", ""))
    elif ref := source.get("fieldRef"):
      value = field_value(ref.get("fieldPath", ""), meta)
    if value is not None:
      env[name] = value
  return env


def make_checkout(directory: Path, configs_dir: Path) -> None:
  """The layouts of a MaxText checkout MaxText/configs/... paths resolve in (MaxText/configs and
  src/MaxText/configs), pointing at the installed package's configs."""
  for rel in ("MaxText", "src/MaxText"):
    (directory / rel).mkdir(parents=True, exist_ok=True)
    link = directory / rel / "configs"
    if not link.exists():
      link.symlink_to(configs_dir)


class Sandbox:
  """A stand-in filesystem root plus the shim directory, for one pod."""

  def __init__(self, root: Path, configs_dir: Path):
    self.root = root
    self.bin = root / "_shim"
    self.captures = root / "_captures"
    self.checkout = root / "deps"  # MaxText images start in their checkout (/deps)
    for d in (self.bin, self.captures):
      d.mkdir(parents=True, exist_ok=True)
    make_checkout(self.checkout, configs_dir)
    wrapper = f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "capture_shim.py"}" "$(basename "$0")" "$@"\n'
    for name in SHIM_NAMES:
      shim = self.bin / name
      shim.write_text(wrapper)
      shim.chmod(0o755)
    # bash reads this first: `cd` into, and `.`/`source` of, an absolute path that the sandbox
    # holds (a mounted ConfigMap file) go to the sandbox's copy. A file sourced this way runs
    # inside a function: `export` and plain assignments reach the script as they would, a
    # `declare`/`local` in it would stay local (no generated or corpus file has one).
    (root / "_bash_env").write_text(
        'cd() { case "$1" in /*) if [ -d "$GRAINTUNE_SANDBOX$1" ]; then builtin cd "$GRAINTUNE_SANDBOX$1"; '
        'fi ;; *) builtin cd "$@" ;; esac; }\n'
        'source() { __graintune_file="$1"; shift; case "$__graintune_file" in /*) '
        'if [ -e "$GRAINTUNE_SANDBOX$__graintune_file" ]; then __graintune_file="$GRAINTUNE_SANDBOX$__graintune_file"; '
        'fi ;; esac; builtin source "$__graintune_file" "$@"; }\n'
        '.() { source "$@"; }\n')
    # A login shell (`bash -lc`, `sh -lc`) reads /etc/profile, which resets PATH, then the
    # profile in HOME (the sandbox root): there the shim goes first again, as an image's python
    # stays on its own profile's PATH.
    (root / ".bash_profile").write_text(f'PATH="{self.bin}:$PATH"; export PATH\n. "$BASH_ENV"\n')
    (root / ".profile").write_text(f'PATH="{self.bin}:$PATH"; export PATH\n')

  def mount_configmaps(self, spec: dict[str, Any], namespace: str, configmaps: list[dict[str, Any]],
                       container: dict[str, Any]) -> None:
    volumes = {v.get("name"): v for v in (spec.get("volumes") or [])}
    for mount in (container.get("volumeMounts") or []):
      volume = volumes.get(mount.get("name"), {})
      cm_name = (volume.get("configMap") or {}).get("name")
      if not cm_name:
        continue
      for cm in configmaps:
        meta = (cm.get("metadata") or {})
        if meta.get("name") == cm_name and meta.get("namespace", "default") == namespace:
          target = self.root / mount["mountPath"].lstrip("/")
          target.mkdir(parents=True, exist_ok=True)
          for key, value in (cm.get("data") or {}).items():
            (target / key).write_text(value)


# Where graintune's installer puts graintune-launcher in a pod (webhook/lap_injection.h): a tuned
# trainer with a command of its own starts through it (the start check). Here the build's own
# launcher runs in its place, for real, before the container's own command.
POD_LAUNCHER = "/graintune-launcher/graintune-launcher"


def launcher_binary() -> str:
  path = os.environ.get("GRAINTUNE_LAUNCHER", "")
  if not path:
    raise RuntimeError("GRAINTUNE_LAUNCHER is not set (ctest sets it to the build's graintune-launcher): "
                       "a tuned container starts through graintune-launcher")
  return path


def run_container(pod: PlannedPod, container: dict[str, Any], configmaps: list[dict[str, Any]],
                  configs_dir: Path, root: Path) -> ContainerRun:
  """Runs the container's command for real with the shim in place, in the sandbox `root` (which
  must outlive the replay: mounted config files are read then); returns MaxText's starts."""
  box = Sandbox(root, configs_dir)
  box.mount_configmaps(pod.spec, pod.namespace, configmaps, container)
  env = container_env(container, configmaps, pod.namespace, pod.meta)
  argv = [expand_kubernetes_vars(a, env) for a in (container.get("command") or []) + (container.get("args") or [])]
  if argv and argv[0] == POD_LAUNCHER:
    argv[0] = launcher_binary()  # graintune-launcher, as its installer put it in the pod
  full_env = {"PATH": f"{box.bin}:/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8",
              "BASH_ENV": str(box.root / "_bash_env"), "GRAINTUNE_SANDBOX": str(box.root),
              "GRAINTUNE_CAPTURES": str(box.captures), **env}
  done = subprocess.run(argv, cwd=box.checkout, env=full_env, capture_output=True, text=True,
                        timeout=60, check=False)
  invocations = []
  for capture in sorted(box.captures.glob("*.json"), key=lambda p: int(p.stem)):
    seen = json.loads(capture.read_text())
    invocations.append(Invocation(pyconfig_argv(seen["argv"], box.root), seen["env"]))
  return ContainerRun(pod.source, container.get("name", ""), invocations, done.returncode)


def pyconfig_argv(shim_argv: list[str], root: Path) -> list[str]:
  """`python3 -m MaxText.train X.yml k=v` -> pyconfig's ["train.py", "X.yml", "k=v"], with
  absolute paths that exist in the sandbox mapped into it."""
  args = shim_argv[1:]
  if args[:1] == ["-m"]:
    args = [args[1].rsplit(".", 1)[-1] + ".py"] + args[2:]
  mapped = []
  for a in args:
    if a.startswith("/") and (root / a.lstrip("/")).exists():
      a = str(root / a.lstrip("/"))
    mapped.append(a)
  return mapped


def is_maxtext_start(inv: Invocation) -> bool:
  script = inv.argv[0] if inv.argv else ""
  return script.endswith("train.py")


def maxtext_containers(pod: PlannedPod) -> Iterator[dict[str, Any]]:
  """Containers whose command could start MaxText (others, like `nginx` or `tail -f`, are not
  run: they would not end)."""
  for container in (pod.spec.get("initContainers") or []) + (pod.spec.get("containers") or []):
    words = " ".join((container.get("command") or []) + (container.get("args") or []))
    if MAXTEXT_HINT.search(words):
      yield container
