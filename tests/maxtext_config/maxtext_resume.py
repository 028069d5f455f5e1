"""Whether one MaxText start restores a per-worker Grain iterator state, and from which directory,
read from MaxText's own effective config. This is the judge graintune's resume rule is compared
with; it is written from maxtext 0.2.5's code (the pinned venv's site-packages/maxtext), never
from graintune's:

- Only the trainer restores anything. `trainers/pre_train/train_compile.py` (main, l.299-) builds
  the compile mesh and lowers the step; it creates no checkpoint manager and no data iterator.
  The trainer's `utils/train_utils.py` setup_train_loop (l.284-334) creates both.
- No manager, no restore: `common/checkpointing.py` create_orbax_checkpoint_manager returns None
  when enable_checkpointing is off (l.539-541), and load_state_if_possible only restores
  "this run's existing checkpoint" through a manager (l.700-701).
- Emergency and multi-tier checkpointing: `utils/train_utils.py` create_checkpoint_manager
  (l.107-124) makes the emergency / replicator managers; their restore is "Case 1" of
  load_state_if_possible (`common/checkpointing.py` l.725-733: the train state only) and their
  save the v0 path (l.1326-1327), before any `iter` checkpointable is added. No Grain state.
- The standard Checkpointer saves an `iter` checkpointable only for dataset_type == "grain"
  (l.1340-1345) and restores it only for dataset_type == "grain" when the step has one
  (l.741-747). tfds, hf, synthetic: nothing.
- colocated_python_data_input (Pathways): `input_pipeline/grain_data_processing.py` (l.850-855)
  wraps the iterator in a RemoteIteratorWrapper; the checkpointable hands save and restore to it
  (`common/grain_utility.py` l.113-115, l.162-164), and it writes and reads the same per-process
  `iter/process_<i>-of-<n>.json` states itself (`input_pipeline/multihost_dataloading.py`
  l.436-465): a per-worker state all the same.
- grain_use_elastic_iterator: an ElasticIterator's state is one global position in one shared
  file (`common/grain_utility.py` l.117-131, l.167-176; `multihost_dataloading.py` l.440-448):
  it is restored, but not per worker, so any grain_worker_count restores it.
- Otherwise a per-worker iterator (`process_<i>-of-<n>.json`, one state per Grain worker
  process) is saved with every checkpoint and restored on resume: the attempt must keep the
  count it was saved with.
- The eval iterator is never checkpointed: train.py passes only the training iterator to
  maybe_save_checkpoint (`trainers/pre_train/train.py` l.892, l.1446), so grain_worker_count_eval
  is restored by nothing.

The directory is MaxText's own derived `checkpoint_dir` ({base_output_directory}/{run_name}/
checkpoints/, `configs/types.py` l.4203-4214).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

TRAINER_SCRIPTS = ("train.py",)
COMPILE_SCRIPTS = ("train_compile.py",)


@dataclasses.dataclass
class StartResume:
  pins: bool  # restores a per-worker Grain iterator state (grain_worker_count must not change)
  checkpoint_dir: str  # MaxText's derived directory, "" when the start does not checkpoint
  why: str


def entry_of(argv: list[str]) -> str | None:
  """"train" or "train_compile" for a pyconfig argv (harness.pyconfig_argv), else None."""
  script = os.path.basename(argv[0]) if argv else ""
  if script in TRAINER_SCRIPTS:
    return "train"
  if script in COMPILE_SCRIPTS:
    return "train_compile"
  return None


def resume_of_start(entry: str, resume: dict[str, Any]) -> StartResume:
  """`resume`: load_maxtext_config.py's RESUME_KEYS as MaxText resolved them."""
  if entry != "train":
    return StartResume(False, "", "train_compile creates no checkpoint manager and no iterator")
  if not resume["enable_checkpointing"]:
    return StartResume(False, "", "enable_checkpointing is off: no checkpoint manager")
  directory = normalise_dir(resume["checkpoint_dir"], resume.get("cwd", ""))
  if resume["enable_emergency_checkpoint"] or resume["enable_multi_tier_checkpointing"]:
    return StartResume(False, directory, "the emergency / replicator manager saves no Grain state")
  if resume["dataset_type"] != "grain":
    return StartResume(False, directory, f"dataset_type {resume['dataset_type']}: no iter checkpointable")
  if resume["grain_use_elastic_iterator"]:
    return StartResume(False, directory, "the elastic iterator restores one global position")
  return StartResume(True, directory, "a per-worker Grain iterator is saved and restored")


def normalise_dir(directory: str, cwd: str) -> str:
  """MaxText's checkpoint_dir without its trailing slash, a local maxtext_output relative to the
  trainer's working directory (where MaxText resolved it with os.path.abspath)."""
  directory = directory.rstrip("/")
  if cwd and directory.startswith(cwd.rstrip("/") + "/"):
    directory = directory[len(cwd.rstrip("/")) + 1:]
  return directory
