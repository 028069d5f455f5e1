"""Loads one MaxText configuration through MaxText's own loader and prints what it decided.

Usage: load_maxtext_config.py '<json argv>'   (argv as MaxText's train.py receives it, the
M_* overrides and JOBSET_NAME in the environment). Prints one JSON line: grain_worker_count,
grain_worker_count_eval and "resume", the settings of RESUME_KEYS as MaxText resolved them (its
derived checkpoint_dir among them) with the loader's working directory; or {"error": ...} with
MaxText's exception (exit status 0 either way; a crash of the loader itself exits non-zero).
Or load_maxtext_config.py --serve: many loads from one import of MaxText (serve()).

One step of initialize_pydantic is not config parsing: joining the slice's JAX distributed
runtime (max_utils.maybe_initialize_jax_distributed_system), which on a TPU config waits for a
coordinator that does not exist here. It is replaced by a no-op. And the slice count MaxText
reads off the TPU devices (max_utils.get_num_slices, for its DCN parallelism checks) comes from
$GRAINTUNE_NUM_SLICES, the JobSet's replicas, unless the config sets num_slices itself.
Everything else is MaxText's.
"""

import json
import os
import sys
from pathlib import Path

# What decides whether a start checkpoints and restores Grain's iterator, and where
# (maxtext_resume.py reads them).
RESUME_KEYS = ("dataset_type", "enable_checkpointing", "enable_emergency_checkpoint",
               "enable_multi_tier_checkpointing", "grain_use_elastic_iterator",
               "colocated_python_data_input", "base_output_directory", "run_name", "checkpoint_dir")


def plain(value):
  """A config value as JSON: enums by their value, paths as text."""
  value = getattr(value, "value", value)
  return value if isinstance(value, (bool, int, float, type(None))) else str(value)


def prepare_maxtext():
  """Imports MaxText's config loader with the two stand-ins above in place."""
  from maxtext.configs import pyconfig  # pylint: disable=import-outside-toplevel
  from maxtext.utils import max_utils  # pylint: disable=import-outside-toplevel

  max_utils.maybe_initialize_jax_distributed_system = lambda raw_keys: None
  slices_from_devices = max_utils.get_num_slices

  def get_num_slices(raw_keys, config=None):
    if raw_keys.get("num_slices", -1) != -1:
      return slices_from_devices(raw_keys, config)
    return int(os.environ.get("GRAINTUNE_NUM_SLICES", "1"))

  max_utils.get_num_slices = get_num_slices
  return pyconfig


def load(pyconfig, argv) -> dict:
  try:
    config = pyconfig.initialize_pydantic(argv)
  except (ValueError, TypeError, KeyError) as e:  # MaxText's own refusals: conflicts, bad values
    return {"error": f"{type(e).__name__}: {e}"}
  resume = {key: plain(getattr(config, key)) for key in RESUME_KEYS}
  resume["cwd"] = os.getcwd()
  return {"grain_worker_count": config.grain_worker_count,
          "grain_worker_count_eval": config.grain_worker_count_eval, "resume": resume}


def check_then_load(pyconfig, argv) -> dict:
  """The start as graintune's start check (launcher/python/graintune_start_check.py) leaves it,
  with the settings graintune-launcher gave it ($GRAINTUNE_START_CHECK), loaded by MaxText: load()'s
  answer with the check's report under "check". The check loads with its own load() in this
  process (MaxText is imported already), where in a pod it forks for each load."""
  sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "launcher" / "python"))
  import graintune_start_check as start_check  # pylint: disable=import-outside-toplevel

  settings = json.loads(os.environ.pop("GRAINTUNE_START_CHECK"))
  # The slices the check reads from the pod's MEGASCALE_NUM_SLICES are the JobSet's replicas here.
  os.environ.setdefault("MEGASCALE_NUM_SLICES", os.environ.get("GRAINTUNE_NUM_SLICES", "1"))

  def in_process(start, env, _timeout):
    with start_check._env_count_set(env):  # pylint: disable=protected-access
      return start_check.load(start)

  count = {start_check.ENV_KEY: os.environ[start_check.ENV_KEY]} if start_check.ENV_KEY in os.environ else {}
  argv, env, report = start_check.check(argv, count, settings, in_process)
  os.environ.update(env)
  answer = load(pyconfig, argv)
  answer["check"] = report
  return answer


def serve(pyconfig) -> int:
  """--serve: MaxText is imported once, then each request line on stdin ({"argv", "env", "cwd"},
  and "check": true to load the start as graintune's start check leaves it) is loaded in a child
  forked for it (its own environment and working directory, nothing left behind for the next)
  and answered with one JSON line on stdout, in order."""
  for line in sys.stdin:
    request = json.loads(line)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
      os.close(read_end)
      os.dup2(2, 1)  # MaxText's own prints go to stderr: stdout carries only answers
      try:
        for key in [k for k in os.environ if k.startswith("M_") or k == "JOBSET_NAME"]:
          del os.environ[key]
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        if request.get("check"):
          answer = json.dumps(check_then_load(pyconfig, request["argv"]))
        else:
          answer = json.dumps(load(pyconfig, request["argv"]))
      except Exception as e:  # pylint: disable=broad-except  # the loader itself broke
        answer = json.dumps({"error": f"loader crashed: {type(e).__name__}: {e}"})
      with os.fdopen(write_end, "w") as out:
        out.write(answer)
      os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as answer_in:
      answer = answer_in.read()
    os.waitpid(pid, 0)
    print(answer or json.dumps({"error": "loader child died"}), flush=True)
  return 0


def main() -> int:
  pyconfig = prepare_maxtext()
  if sys.argv[1:] == ["--serve"]:
    return serve(pyconfig)
  print(json.dumps(load(pyconfig, json.loads(sys.argv[1]))))
  return 0


if __name__ == "__main__":
  sys.exit(main())
