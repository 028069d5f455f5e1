"""graintune's start check: what MaxText's trainer will really run, read at its real start.

Called by graintune's sitecustomize (launcher/python/sitecustomize.py) inside the trainer's own
interpreter, before MaxText parses anything (docs/start-check.md). It

  1. loads the trainer's config with MaxText's own loader (maxtext.configs.pyconfig.initialize,
     in the image's own Python) in a forked child, on CPU, with MaxText's JAX distributed
     initialization replaced by a no-op (the trainer does it itself right after);
  2. reads the run's checkpoint where that config puts it: the latest committed step and the
     Grain iterator state saved with it, one process_<i>-of-<n>.json per host whose
     `iterators_in_use_states` holds one entry per worker (mp_prefetch), or one shared
     process_0.json (ElasticIterator, any count restores);
  3. decides the count the trainer starts with (decide()): a run that restores a per-worker
     iterator gets exactly the count it saved; otherwise the count as written, lowered to what
     MaxText accepts (hf: at most 1; tfrecord/parquet: at most the files per host), with
     graintune's fill value in place of a -1 when it was given one;
  4. when that differs from what the trainer would run, edits sys.argv (the last
     grain_worker_count= word, or a new one) or M_GRAIN_WORKER_COUNT where the count is set, and
     loads the edited start again with MaxText's loader: a start MaxText refuses is put back;
  5. writes what it saw to the report file graintune's exporter serves.

Fails open and bounded: MaxText that cannot be imported, a checkpoint that cannot be read, a
loader that errs or takes longer than the timeout all leave the start exactly as written, with
the reason in the report and on stderr. Nothing here raises to the caller.

Settings (GRAINTUNE_START_CHECK, JSON): {"report": PATH, "timeout_seconds": N,
"admission_value": N (what graintune wrote, for the report), "fill_value": N (graintune's value
for a start that leaves the count to MaxText, -1: admission could not rewrite where the start
sets it, docs/start-check.md)}.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from typing import Any, Callable

KEY = "grain_worker_count"
ENV_KEY = "M_GRAIN_WORKER_COUNT"
# MaxText's trainer modules (python -m ...) and script names.
TRAINER_MODULES = ("maxtext.trainers.pre_train.train", "MaxText.train", "maxtext.train",
                   "MaxText.trainers.pre_train.train")
MAX_STATE_FILES = 4096
MAX_STATE_BYTES = 16 << 20
# The settings of MaxText's config that decide the count, as the report names them.
REPORTED_KEYS = ("dataset_type", "grain_worker_count", "grain_worker_count_eval", "enable_checkpointing",
                 "checkpoint_dir", "grain_use_elastic_iterator", "colocated_python_data_input",
                 "enable_emergency_checkpoint", "enable_multi_tier_checkpointing", "grain_file_type",
                 "grain_train_files", "run_name", "base_output_directory")


def _program(orig_argv: list[str]) -> tuple[str, str] | None:
  """("module", NAME) or ("script", PATH) that an interpreter's command line runs, or None."""
  i = 1
  while i < len(orig_argv):
    word = orig_argv[i]
    if word == "-m" and i + 1 < len(orig_argv):
      return ("module", orig_argv[i + 1])
    if word.startswith("-m") and len(word) > 2:
      return ("module", word[2:])
    if word in ("-c",) or word.startswith("-c"):
      return None
    if word in ("-W", "-X", "--check-hash-based-pycs"):
      i += 2
      continue
    if word.startswith("-"):
      i += 1
      continue
    return ("script", word)
  return None


def is_maxtext_trainer(orig_argv: list[str]) -> bool:
  """Whether an interpreter started as `orig_argv` runs MaxText's pre-training trainer."""
  program = _program(list(orig_argv))
  if program is None:
    return False
  kind, name = program
  if kind == "module":
    return name in TRAINER_MODULES
  parts = os.path.normpath(name).split(os.sep)
  return parts[-1] == "train.py" and any(p.lower() == "maxtext" for p in parts[:-1])


def _plain(value: Any) -> Any:
  value = getattr(value, "value", value)
  return value if isinstance(value, (bool, int, float, type(None))) else str(value)


# --- What MaxText and the checkpoint say (in the child) -----------------------------------------


def read_checkpoint(checkpoint_dir: str) -> dict[str, Any]:
  """The Grain iterator state saved with the latest committed step under `checkpoint_dir`:
  {"step", "layout": "none" | "no-iterator" | "per-worker" | "elastic", "saved_workers",
  "why"}. "per-worker" states name their count; two hosts that saved different counts is an
  error (raised)."""
  from etils import epath  # pylint: disable=import-outside-toplevel  # MaxText's own path library

  root = epath.Path(checkpoint_dir)
  if not root.exists():
    return {"layout": "none", "why": f"no checkpoint in {checkpoint_dir}"}
  steps = []
  for child in root.iterdir():
    if child.name.isdigit() and ((child / "commit_success.txt").exists() or
                                 (child / "_CHECKPOINT_METADATA").exists()):
      steps.append(int(child.name))
  if not steps:
    return {"layout": "none", "why": f"no committed step in {checkpoint_dir}"}
  step = max(steps)
  state_dir = root / str(step) / "iter"
  if not state_dir.exists():
    return {"layout": "no-iterator", "step": step, "why": f"step {step} saved no Grain iterator"}
  names = sorted(p.name for p in state_dir.iterdir())[:MAX_STATE_FILES]
  per_host = [n for n in names if n.startswith("process_") and "-of-" in n and n.endswith(".json")]
  if not per_host and "process_0.json" in names:
    return {"layout": "elastic", "step": step, "why": f"step {step} saved an elastic iterator (any count restores)"}
  counts = {}
  for name in per_host:
    text = (state_dir / name).read_bytes()[:MAX_STATE_BYTES]
    state = json.loads(text)
    counts[name] = len(state["iterators_in_use_states"]) if isinstance(state, dict) and \
        "iterators_in_use_states" in state else 0
  if not counts:
    raise ValueError(f"{state_dir} holds no Grain iterator state this check knows ({names[:5]})")
  if len(set(counts.values())) != 1:
    raise ValueError(f"the hosts of step {step} saved different worker counts: {counts}")
  saved = next(iter(counts.values()))
  return {"layout": "per-worker", "step": step, "saved_workers": saved,
          "why": f"step {step} saved Grain's iterator with {saved} workers ({len(counts)} host file(s))"}


def _host_count() -> int | None:
  """Data-loading hosts of the job, from what GKE and JobSet give a TPU or CPU pod; None: unknown."""
  hosts = os.environ.get("TPU_WORKER_HOSTNAMES")
  slices = int(os.environ.get("MEGASCALE_NUM_SLICES", "1") or 1)
  if hosts:
    return len([h for h in hosts.split(",") if h]) * slices
  for name in ("JAX_PROCESS_COUNT", "PROCESSES_IN_JOB"):
    if os.environ.get(name, "").isdigit():
      return int(os.environ[name]) * slices
  return None


def files_per_host(config) -> int | None:
  """For tfrecord and parquet Grain files: the files each host reads, as MaxText computes it."""
  if _plain(config.dataset_type) != "grain" or _plain(config.grain_file_type) not in ("tfrecord", "parquet"):
    return None
  hosts = _host_count()
  if hosts is None:
    return None
  from maxtext.input_pipeline import grain_data_processing  # pylint: disable=import-outside-toplevel
  from maxtext.input_pipeline import input_pipeline_utils  # pylint: disable=import-outside-toplevel
  files = grain_data_processing.find_data_files(config.grain_train_files)
  counts = [input_pipeline_utils.compute_file_sharding(len(files), i, hosts)[1] for i in range(hosts)]
  return min(counts)


def load(argv: list[str]) -> dict[str, Any]:
  """MaxText's view of `argv` (as train.py's main receives it) in this process's environment:
  {"keys": {...}, "checkpoint": {...}, "files_per_host": N|None} or {"error": ...}."""
  os.environ["JAX_PLATFORMS"] = "cpu"  # the check never takes the trainer's accelerators
  from maxtext.configs import pyconfig  # pylint: disable=import-outside-toplevel
  from maxtext.utils import max_utils  # pylint: disable=import-outside-toplevel
  max_utils.maybe_initialize_jax_distributed_system = lambda raw_keys: None
  slices_from_devices = max_utils.get_num_slices

  def get_num_slices(raw_keys, config=None):
    if raw_keys.get("num_slices", -1) != -1:
      return slices_from_devices(raw_keys, config)
    return int(os.environ.get("MEGASCALE_NUM_SLICES", "1") or 1)

  max_utils.get_num_slices = get_num_slices
  try:
    config = pyconfig.initialize(argv)
  except (ValueError, TypeError, KeyError, AssertionError) as e:  # MaxText's own refusals
    return {"error": f"MaxText refused the start: {type(e).__name__}: {e}"[:2000]}
  keys = {k: _plain(getattr(config, k, None)) for k in REPORTED_KEYS}
  answer: dict[str, Any] = {"keys": keys}
  if keys["enable_checkpointing"] and keys["checkpoint_dir"]:
    try:
      answer["checkpoint"] = read_checkpoint(str(keys["checkpoint_dir"]))
    except Exception as e:  # pylint: disable=broad-except
      answer["checkpoint"] = {"layout": "unreadable", "why": f"{type(e).__name__}: {e}"[:1000]}
  try:
    answer["files_per_host"] = files_per_host(config)
  except Exception as e:  # pylint: disable=broad-except
    answer["files_per_host"] = None
    answer["files_per_host_error"] = f"{type(e).__name__}: {e}"[:500]
  return answer


def load_in_child(argv: list[str], timeout: float) -> dict[str, Any]:
  """load() in a forked child (so this interpreter imports nothing and holds nothing of it),
  stopped after `timeout` seconds."""
  read_end, write_end = os.pipe()
  pid = os.fork()
  if pid == 0:  # the child: its prints go to stderr, its answer down the pipe
    try:
      os.close(read_end)
      os.dup2(2, 1)
      answer = load(argv)
    except BaseException as e:  # pylint: disable=broad-except
      answer = {"error": f"the check's loader failed: {type(e).__name__}: {e}"[:2000]}
    try:
      os.write(write_end, json.dumps(answer).encode())
    finally:
      os._exit(0)
  os.close(write_end)
  chunks = []
  deadline = time.monotonic() + timeout
  try:
    while True:
      left = deadline - time.monotonic()
      if left <= 0:
        os.kill(pid, signal.SIGKILL)
        return {"error": f"MaxText's loader took longer than {timeout:.0f} s"}
      ready, _, _ = select.select([read_end], [], [], left)
      if ready:
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
          break
        chunks.append(chunk)
  finally:
    os.close(read_end)
    os.waitpid(pid, 0)
  try:
    return json.loads(b"".join(chunks) or b'{"error": "the check\'s loader died"}')
  except ValueError:
    return {"error": "the check's loader answered something that is not JSON"}


# --- The decision (pure) ------------------------------------------------------------------------


def decide(seen: dict[str, Any], fill: int | None = None) -> tuple[int | None, str]:
  """The count the trainer must start with, given load()'s answer; None: as written. With why.
  `fill`: graintune's value for a start that leaves the count to MaxText (-1), which admission
  could not rewrite where the start sets it."""
  if "error" in seen:
    return None, seen["error"]
  keys = seen["keys"]
  current = keys[KEY]
  checkpoint = seen.get("checkpoint") or {}
  restores = (keys["dataset_type"] == "grain" and keys["enable_checkpointing"] and
              not keys["colocated_python_data_input"] and
              not keys["enable_emergency_checkpoint"] and not keys["enable_multi_tier_checkpointing"])
  if restores and checkpoint.get("layout") == "unreadable":
    return None, "the checkpoint could not be read (" + checkpoint["why"] + "): the start is left as written"
  if restores and checkpoint.get("layout") == "per-worker":
    saved = checkpoint["saved_workers"]
    if saved == current:
      return None, f"it resumes step {checkpoint['step']} with the {saved} workers its iterator was saved with"
    return saved, (f"it resumes step {checkpoint['step']}, whose Grain iterator was saved with {saved} workers "
                   f"(the start said {current})")
  why = checkpoint.get("why") or "nothing restores a per-worker iterator"
  wanted, said = current, f"the start said {current}"
  if current == -1 and fill is not None and fill >= 1:
    wanted, said = fill, f"graintune's value {fill} for the start's -1 ({why})"
  if keys["dataset_type"] == "hf" and (wanted is None or wanted > 1):
    return 1, f"MaxText accepts at most 1 worker for dataset_type=hf ({said})"
  limit = seen.get("files_per_host")
  if limit is not None and limit >= 1 and wanted is not None and wanted > limit:
    return limit, f"MaxText accepts at most {limit} workers: the {keys['grain_file_type']} files per host ({said})"
  if wanted != current:
    return wanted, said
  return None, f"{current} workers as written ({why})"


def with_count(argv: list[str], env: dict[str, str], value: int) -> tuple[list[str], dict[str, str]]:
  """argv and env with the train count set to `value` where the start sets it: the last
  grain_worker_count= word, else M_GRAIN_WORKER_COUNT, else a new word (the count came from a
  YAML file, which a command-line key overrides)."""
  argv, env = list(argv), dict(env)
  words = [i for i, w in enumerate(argv) if i > 0 and w.startswith(KEY + "=")]
  if words:
    argv[words[-1]] = f"{KEY}={value}"
  elif ENV_KEY in env:
    env[ENV_KEY] = str(value)
  else:
    argv.append(f"{KEY}={value}")
  return argv, env


# --- The check, in the trainer's interpreter ----------------------------------------------------


def _env_count() -> dict[str, str]:
  return {ENV_KEY: os.environ[ENV_KEY]} if ENV_KEY in os.environ else {}


class _env_count_set:  # pylint: disable=invalid-name
  """M_GRAIN_WORKER_COUNT as `env` says while a child loads, then as it was."""

  def __init__(self, env: dict[str, str]):
    self.env, self.before = env, os.environ.get(ENV_KEY)

  def __enter__(self):
    if ENV_KEY in self.env:
      os.environ[ENV_KEY] = self.env[ENV_KEY]

  def __exit__(self, *_):
    if self.before is None:
      os.environ.pop(ENV_KEY, None)
    else:
      os.environ[ENV_KEY] = self.before


def _count_of(argv: list[str], env: dict[str, str]) -> int | None:
  """The train count a start sets itself (last word, else M_ variable); None: not set there."""
  words = [w for w in argv[1:] if w.startswith(KEY + "=")]
  text = words[-1].split("=", 1)[1] if words else env.get(ENV_KEY)
  try:
    return int(text) if text is not None else None
  except ValueError:
    return None


def _write_report(path: str, report: dict[str, Any]) -> None:
  if not path:
    return
  try:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    temporary = f"{path}.tmp.{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as out:
      json.dump(report, out)
    os.replace(temporary, path)
  except OSError as e:
    sys.stderr.write(f"graintune start check: cannot write {path}: {e}\n")


def load_start_in_child(argv: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
  """load_in_child() of the start `argv` with the count's variable as `env` holds it."""
  with _env_count_set(env):
    return load_in_child(argv, timeout)


def check(argv: list[str], env: dict[str, str], settings: dict[str, Any],
          loader: Callable[[list[str], dict[str, str], float], dict[str, Any]] = load_start_in_child
          ) -> tuple[list[str], dict[str, str], dict[str, Any]]:
  """The start to run: `argv` (argv[0] names the program, the rest are MaxText's words) and `env`
  (M_GRAIN_WORKER_COUNT when the start sets it, else empty), checked with `loader` (a start ->
  load()'s answer, within a time) under `settings`. Returns the start's argv and env, edited or
  as given, and what the check saw (the report's keys)."""
  started = time.monotonic()
  timeout = float(settings.get("timeout_seconds", 120))
  fill = settings.get("fill_value")
  fill = fill if isinstance(fill, int) and not isinstance(fill, bool) and fill >= 1 else None

  def left() -> float:
    return max(1.0, timeout - (time.monotonic() - started))

  report: dict[str, Any] = {"admission_value": settings.get("admission_value")}
  if fill is not None:
    report["fill_value"] = fill
  seen = loader(argv, env, timeout)
  if "error" in seen and seen["error"].startswith("MaxText refused"):
    # MaxText's config refuses more than 1 worker for hf itself: is that what it refused?
    one_argv, one_env = with_count(argv, env, 1)
    one = loader(one_argv, one_env, left())
    if "error" not in one and one["keys"]["dataset_type"] == "hf":
      seen = dict(one, refused=seen["error"])
      seen["keys"] = dict(one["keys"], grain_worker_count=_count_of(argv, env))
  report["keys"] = seen.get("keys")
  report["checkpoint"] = seen.get("checkpoint")
  report["files_per_host"] = seen.get("files_per_host")
  value, why = decide(seen, fill)
  written = (seen.get("keys") or {}).get(KEY)
  report.update({"checked": "error" not in seen, "written_value": written, "started_value": written, "why": why})
  if value is not None:
    new_argv, new_env = with_count(argv, env, value)
    again = loader(new_argv, new_env, left())
    if "error" in again or (again.get("keys") or {}).get(KEY) != value:
      report.update({"started_value": written,
                     "why": f"left as written: {why}, but MaxText does not start with {value} "
                            f"({again.get('error', (again.get('keys') or {}).get(KEY))})"})
    else:
      argv, env = new_argv, new_env
      report.update({"started_value": value, "changed": True})
  report["seconds"] = round(time.monotonic() - started, 3)
  return argv, env, report


def run(settings_text: str) -> None:
  """The check around this interpreter's start (sys.argv and os.environ are edited in place)."""
  settings = json.loads(settings_text)
  report: dict[str, Any] = {"pid": os.getpid(), "argv": [w[:500] for w in sys.argv[1:200]], "cwd": os.getcwd()}
  argv, env, seen = check(["train.py"] + sys.argv[1:], _env_count(), settings)
  report.update(seen)
  sys.argv[1:] = argv[1:]
  os.environ.update(env)
  sys.stderr.write(f"graintune start check: the trainer starts with {report['started_value']} workers: "
                   f"{report['why']} ({report['seconds']} s)\n")
  _write_report(settings.get("report", ""), report)
