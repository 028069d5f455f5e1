"""Container shapes for the start of MaxText, generated from a seed (test_generated_shapes.py).

Each shape is a manifest (a Pod, with the ConfigMaps it mounts or reads) whose MaxText start is
written the way GKE TPU users write one, combined at random: the shell and its option form, and
for each setting that decides a run's resume (dataset_type, enable_checkpointing,
grain_use_elastic_iterator) and for the -1 itself, one of the places a setting can come from:
a word on MaxText's command line, the container's env (a value or a ConfigMap key), a script
variable, a `${VAR:=default}`, an array, `set --`, a function's argument, a positional
parameter after the script, a sourced env file (from a ConfigMap volume or a here-document), or
one branch of an `if` / `case` on an env variable. None of this is written with graintune's
reading in mind: the judge is bash and MaxText's own config loader (differential.py).
"""

from __future__ import annotations

import random
from typing import Any

SHELLS = [["bash", "-c"], ["bash", "-lc"], ["bash", "-l", "-c"], ["bash", "-e", "-c"], ["bash", "--login", "-c"],
          ["bash", "-o", "pipefail", "-c"], ["bash", "-c", "--"], ["bash", "-xeuc"], ["sh", "-c"], ["/bin/bash", "-ec"]]
# Places a `key=value` can come from; the POSIX ones also work under sh (dash).
POSIX_PLACES = ["word", "env", "env-configmap", "variable", "default", "set-args", "function", "sourced-volume",
                "sourced-heredoc", "if", "case", "positional"]
BASH_PLACES = POSIX_PLACES + ["array"]
TRAINERS = ["python3 -m maxtext.trainers.pre_train.train", "python3 -m MaxText.train", "python3 MaxText/train.py"]


class Shape:
  """One container being built: its script's lines, env, ConfigMaps, and the words of MaxText's
  command (plus what comes after the script)."""

  def __init__(self, rng: random.Random, name: str, bash: bool):
    self.rng, self.name, self.bash = rng, name, bash
    self.lines: list[str] = []
    self.words: list[str] = []
    self.env: list[dict[str, Any]] = []
    self.env_data: dict[str, str] = {}   # the ConfigMap behind env-configmap
    self.file_data: dict[str, str] = {}  # the ConfigMap mounted at /etc/cfg
    self.positional: list[str] = []
    self.function_args: list[str] = []
    self.uses_positional = False
    self.n = 0

  def var(self) -> str:
    self.n += 1
    return f"V{self.n}"

  def place(self, key: str, value: str, places: list[str]) -> str:
    """Writes key=value at a random place; returns the place."""
    where = self.rng.choice(places)
    env_name = "M_" + key.upper()
    if where == "word":
      self.words.append(f"{key}={value}")
    elif where == "env":
      self.env.append({"name": env_name, "value": value})
    elif where == "env-configmap":
      self.env_data[env_name] = value
      self.env.append({"name": env_name, "valueFrom": {"configMapKeyRef": {"name": f"{self.name}-env", "key": env_name}}})
    elif where == "variable":
      v = self.var()
      self.lines.append(f"{v}={value}")
      self.words.append(f"{key}=${v}")
    elif where == "default":
      v = self.var()
      self.lines.append(f': "${{{v}:={value}}}"')
      self.words.append(f"{key}=${{{v}}}")
    elif where == "set-args":
      self.lines.append(f'set -- "$@" {key}={value}')
      self.uses_positional = True
    elif where == "function":
      self.function_args.append(f"{key}={value}")
    elif where == "sourced-volume":
      self.file_data["env.sh"] = self.file_data.get("env.sh", "") + f"export {env_name}={value}\n"
    elif where == "sourced-heredoc":
      f = f"/tmp/{self.var().lower()}.sh"
      self.lines.append(f"cat > {f} <<'EOF'\nexport {env_name}={value}\nEOF\n. {f}")
    elif where == "if":
      v, mode = self.var(), self.rng.choice(["train", "debug"])
      self.env.append({"name": "MODE", "value": self.rng.choice(["train", "debug"])})
      self.lines.append(f'if [ "$MODE" = {mode} ]; then {v}="{key}={value}"; fi')
      self.words.append(f"${v}")
    elif where == "case":
      v = self.var()
      self.env.append({"name": "STAGE", "value": self.rng.choice(["a", "b"])})
      self.lines.append(f'case "$STAGE" in a) {v}="{key}={value}";; *) {v}="";; esac')
      self.words.append(f"${v}")
    elif where == "positional":
      self.positional.append(f"{key}={value}")
      self.uses_positional = True
    elif where == "array":
      self.lines.append(f"ARGS+=({key}={value})")
      self.words.append('"${ARGS[@]}"')
    return where


def generate(seed: int) -> list[dict[str, Any]]:
  """The manifest of shape `seed`: ConfigMaps, then one Pod."""
  rng = random.Random(seed)
  name = f"shape-{seed}"
  shell = rng.choice(SHELLS)
  bash = shell[0].endswith("bash")
  places = BASH_PLACES if bash else POSIX_PLACES
  s = Shape(rng, name, bash)
  dataset = rng.choice(["grain", "grain", "hf", "synthetic", None])
  if dataset == "hf":
    s.words.append("hf_path=parquet")
  if dataset == "grain":
    s.words.append("grain_train_files=/data/train*.array_record")
  if dataset is not None:
    s.place("dataset_type", dataset, places)
  checkpointing = rng.choice(["true", "false", None])
  if checkpointing is not None:
    s.place("enable_checkpointing", checkpointing, places)
  if rng.random() < 0.2:
    s.place("grain_use_elastic_iterator", "true", places)
  if rng.random() < 0.9:
    s.place("grain_worker_count", "-1", places)
  s.words += ["base_output_directory=gs://b/runs", f"run_name=r{seed}"]
  trainer = rng.choice(TRAINERS) + " MaxText/configs/base.yml"
  if s.file_data:
    s.lines.insert(0, ". /etc/cfg/env.sh")
  start = f"{trainer} {' '.join(s.words)}" + (' "$@"' if s.uses_positional else "")
  if s.function_args:
    s.lines.append(f'run() {{ {start} "$@"; }}')
    s.lines.append("run " + " ".join(s.function_args))
  else:
    s.lines.append(rng.choice(["", "exec "]) + start)
  script = rng.choice(["\n", "; "]).join(s.lines) if all("\n" not in l for l in s.lines) else "\n".join(s.lines)
  command = shell + [script]
  container: dict[str, Any] = {"name": "maxtext", "image": "maxtext:latest",
                               "resources": {"limits": {"google.com/tpu": 4}}}
  if s.positional or (s.uses_positional and rng.random() < 0.5):
    container["command"], container["args"] = command, ["zero"] + s.positional if rng.random() < 0.7 else s.positional
  else:
    container["command"] = command
  if s.env:
    seen: set[str] = set()
    container["env"] = [e for e in s.env if not (e["name"] in seen or seen.add(e["name"]))]
  docs: list[dict[str, Any]] = []
  volumes = []
  if s.env_data:
    docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-env", "namespace": "default"},
                 "data": s.env_data})
  if s.file_data:
    docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-files", "namespace": "default"},
                 "data": s.file_data})
    volumes.append({"name": "cfg", "configMap": {"name": f"{name}-files"}})
    container["volumeMounts"] = [{"name": "cfg", "mountPath": "/etc/cfg"}]
  spec: dict[str, Any] = {"restartPolicy": "Never",
                          "nodeSelector": {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                                           "cloud.google.com/gke-tpu-topology": "2x2"},
                          "containers": [container]}
  if volumes:
    spec["volumes"] = volumes
  docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec})
  return docs
