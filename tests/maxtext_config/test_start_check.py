"""graintune's start check (launcher/python) in front of MaxText's own trainer (label maxtext).

The check runs inside the trainer's interpreter through graintune's sitecustomize, loads the
start with MaxText's own pyconfig and reads the run's checkpoint, and edits the start before
MaxText parses it (docs/start-check.md). Judged by MaxText itself:
  - a run resumed with a count other than the one its checkpoint saved (the command line said 1,
    the iterator was saved with 2) starts with 2 and trains to its last step, where the same
    start without the check stops early ("Training stopped");
  - the same through M_GRAIN_WORKER_COUNT;
  - a parquet start asking for more workers than its files per host, which MaxText refuses,
    trains with the files per host;
  - an hf start asking for 4 workers, which MaxText's config refuses, gets past MaxText's config
    with 1 (into its hf pipeline, which this environment cannot run: no `datasets` package);
  - a -1 admission could not rewrite starts with graintune's value (the launcher's fill), lowered
    to the parquet files per host, and trains;
  - the check fails open: Python without MaxText, a loader slower than the timeout;
  - an image's own sitecustomize still runs, and a Python that is not the trainer is left alone.
Needs the GRAINTUNE_MAXTEXT_* variables (scripts/lib/maxtext_trainer.sh).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_parquet import maxtext_env, parquet_dir, tail  # pylint: disable=unused-import  # a fixture

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "launcher" / "python"
sys.path.insert(0, str(HOOK))
import graintune_start_check as check  # pylint: disable=wrong-import-position

TRAINER = "maxtext.trainers.pre_train.train"
CHECKPOINTING = ["enable_checkpointing=true", "checkpoint_period=5", "async_checkpointing=false"]


def settings(report: Path, timeout: float = 300, admission: int | None = None) -> str:
  return json.dumps({"report": str(report), "timeout_seconds": timeout, "admission_value": admission})


def trainer_argv(out: Path, run: str, steps: int, extra: list[str]) -> list[str]:
  return [maxtext_env("GRAINTUNE_MAXTEXT_PYTHON"), "-m", TRAINER, *maxtext_env("GRAINTUNE_MAXTEXT_TINY_ARGS").split(),
          f"grain_train_files={maxtext_env('GRAINTUNE_MAXTEXT_SMALL_RECORDS')}",
          f"tokenizer_path={maxtext_env('GRAINTUNE_MAXTEXT_TOKENIZER')}", f"run_name={run}",
          f"base_output_directory={out}", f"steps={steps}", f"metrics_file={out}/{run}-{steps}.jsonl", *extra]


def run(argv: list[str], cwd: Path, check_settings: str | None = None, env: dict[str, str] | None = None,
        timeout: float = 600) -> subprocess.CompletedProcess:
  full = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_cpu_multi_thread_eigen=false", **(env or {}))
  full.pop("GRAINTUNE_START_CHECK", None)
  if check_settings is not None:
    full["PYTHONPATH"] = str(HOOK) + (":" + full["PYTHONPATH"] if full.get("PYTHONPATH") else "")
    full["GRAINTUNE_START_CHECK"] = check_settings
  cwd.mkdir(parents=True, exist_ok=True)
  return subprocess.run(argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout, check=False)


def steps_in(metrics: Path) -> list[int]:
  if not metrics.exists():
    return []
  return [json.loads(line)["step"] for line in metrics.read_text().splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def two_worker_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
  """A run that saved Grain's iterator with 2 workers at step 5 (no check involved)."""
  out = tmp_path_factory.mktemp("start-check-run")
  done = run(trainer_argv(out, "saved", 6, ["grain_worker_count=2", *CHECKPOINTING]), out)
  assert done.returncode == 0, tail(done.stdout + done.stderr)
  assert (out / "saved" / "checkpoints" / "5" / "iter").is_dir(), tail(done.stdout + done.stderr)
  return out


# --- The check's pieces, without a trainer ------------------------------------------------------


@pytest.mark.parametrize("argv,expected", [
    (["python3", "-m", TRAINER, "a=1"], True),
    (["python3", "-u", "-m", "MaxText.train", "MaxText/configs/base.yml"], True),
    (["/usr/bin/python3", "-X", "faulthandler", "/deps/MaxText/train.py", "x=1"], True),
    (["python3", "/app/src/maxtext/trainers/pre_train/train.py"], True),
    (["python3", "-m", "maxtext.trainers.pre_train.train_compile"], False),
    (["python3", "/app/train.py"], False),
    (["python3", "-c", "from multiprocessing.spawn import spawn_main; spawn_main()"], False),
    (["python3"], False),
])
def test_start_check_knows_maxtexts_trainer(argv: list[str], expected: bool) -> None:
  assert check.is_maxtext_trainer(argv) is expected


def _keys(**changes):
  keys = {"dataset_type": "grain", "grain_worker_count": 8, "enable_checkpointing": True,
          "colocated_python_data_input": False, "enable_emergency_checkpoint": False,
          "enable_multi_tier_checkpointing": False, "grain_file_type": "arrayrecord"}
  keys.update(changes)
  return keys


@pytest.mark.parametrize("seen,value", [
    ({"keys": _keys(), "checkpoint": {"layout": "per-worker", "step": 10, "saved_workers": 3}}, 3),
    ({"keys": _keys(), "checkpoint": {"layout": "per-worker", "step": 10, "saved_workers": 8}}, None),
    ({"keys": _keys(grain_worker_count=-1), "checkpoint": {"layout": "per-worker", "step": 4, "saved_workers": 0}}, 0),
    ({"keys": _keys(), "checkpoint": {"layout": "elastic", "step": 10, "why": "elastic"}}, None),
    ({"keys": _keys(), "checkpoint": {"layout": "none", "why": "none"}}, None),
    ({"keys": _keys(enable_checkpointing=False), "checkpoint": None}, None),
    ({"keys": _keys(enable_emergency_checkpoint=True), "checkpoint": {"layout": "per-worker", "step": 1, "saved_workers": 2}}, None),
    ({"keys": _keys(), "checkpoint": {"layout": "unreadable", "why": "403"}}, None),
    ({"keys": _keys(dataset_type="hf"), "checkpoint": None}, 1),
    ({"keys": _keys(dataset_type="hf", grain_worker_count=1), "checkpoint": None}, None),
    ({"keys": _keys(grain_file_type="parquet"), "files_per_host": 3}, 3),
    ({"keys": _keys(grain_file_type="parquet"), "files_per_host": None}, None),
    ({"error": "MaxText refused the start: ValueError: x"}, None),
])
def test_start_check_decides(seen, value) -> None:
  decided, why = check.decide(seen)
  assert decided == value, why
  assert why


@pytest.mark.parametrize("seen,fill,value", [
    # A fresh run: graintune's value in place of MaxText's own pick.
    ({"keys": _keys(grain_worker_count=-1), "checkpoint": {"layout": "none", "why": "none"}}, 12, 12),
    ({"keys": _keys(grain_worker_count=-1, enable_checkpointing=False), "checkpoint": None}, 12, 12),
    # A resume: the count its iterator was saved with, whatever graintune would fill.
    ({"keys": _keys(grain_worker_count=-1), "checkpoint": {"layout": "per-worker", "step": 4, "saved_workers": 5}}, 12, 5),
    # Within what MaxText accepts: hf 1, parquet its files per host.
    ({"keys": _keys(grain_worker_count=-1, dataset_type="hf"), "checkpoint": None}, 12, 1),
    ({"keys": _keys(grain_worker_count=-1, grain_file_type="parquet"), "files_per_host": 3}, 12, 3),
    # A checkpoint the check cannot read: left as written, never a guess.
    ({"keys": _keys(grain_worker_count=-1), "checkpoint": {"layout": "unreadable", "why": "403"}}, 12, None),
    # A count the start sets itself is never replaced by the fill.
    ({"keys": _keys(grain_worker_count=6), "checkpoint": None}, 12, None),
    ({"keys": _keys(grain_worker_count=-1), "checkpoint": None}, None, None),
])
def test_start_check_fills_a_minus_one_with_graintunes_value(seen, fill, value) -> None:
  decided, why = check.decide(seen, fill)
  assert decided == value, why
  assert why


def test_start_check_loads_the_filled_start_again() -> None:
  loads = []

  def loader(argv, env, timeout):
    loads.append((list(argv), dict(env)))
    count = int(argv[-1].split("=")[1]) if argv[-1].startswith("grain_worker_count=") else -1
    return {"keys": _keys(grain_worker_count=count, enable_checkpointing=False)}

  argv, env, report = check.check(["train.py", "base.yml"], {}, {"fill_value": 7, "timeout_seconds": 5}, loader)
  assert argv == ["train.py", "base.yml", "grain_worker_count=7"] and env == {}
  assert report["started_value"] == 7 and report["written_value"] == -1 and report["changed"]
  assert len(loads) == 2  # the start as written, then as filled
  argv, env, report = check.check(["train.py", "base.yml"], {}, {"timeout_seconds": 5}, loader)
  assert argv == ["train.py", "base.yml"] and report["started_value"] == -1 and "changed" not in report


def test_start_check_edits_where_the_start_sets_the_count() -> None:
  argv = ["train.py", "base.yml", "grain_worker_count=4", "x=1", "grain_worker_count=5"]
  assert check.with_count(argv, {}, 2) == (argv[:4] + ["grain_worker_count=2"], {})
  assert check.with_count(["train.py", "x=1"], {"M_GRAIN_WORKER_COUNT": "4"}, 2) == (
      ["train.py", "x=1"], {"M_GRAIN_WORKER_COUNT": "2"})
  assert check.with_count(["train.py", "base.yml"], {}, 2) == (["train.py", "base.yml", "grain_worker_count=2"], {})


def _state(workers: int) -> str:
  return json.dumps({"next_index_in_cycle": 0, "iterators_in_use_indices": list(range(workers)),
                     "iterators_in_use_states": [{"parent": {"next_index": 4}}] * workers,
                     "exhausted": [0] * workers, "future_states": {}})


def test_start_check_reads_grains_saved_state(tmp_path: Path) -> None:
  root = tmp_path / "checkpoints"
  for step, committed in ((5, True), (10, True), (15, False)):
    (root / str(step) / "iter").mkdir(parents=True)
    if committed:
      (root / str(step) / "commit_success.txt").write_text("ok")
    for host in range(2):
      (root / str(step) / "iter" / f"process_{host}-of-2.json").write_text(_state(step // 5 + 2))
  seen = check.read_checkpoint(str(root))
  assert (seen["layout"], seen["step"], seen["saved_workers"]) == ("per-worker", 10, 4), seen
  (root / "10" / "iter" / "process_1-of-2.json").write_text(_state(3))
  with pytest.raises(ValueError, match="different worker counts"):
    check.read_checkpoint(str(root))
  elastic = tmp_path / "elastic"
  (elastic / "7" / "iter").mkdir(parents=True)
  (elastic / "7" / "_CHECKPOINT_METADATA").write_text("{}")
  (elastic / "7" / "iter" / "process_0.json").write_text("4")
  assert check.read_checkpoint(str(elastic))["layout"] == "elastic"
  assert check.read_checkpoint(str(tmp_path / "absent"))["layout"] == "none"


# --- With MaxText's trainer ---------------------------------------------------------------------


@pytest.mark.parametrize("through", ["argv", "env"])
def test_StartCheck_a_resume_with_another_count_gets_the_saved_count_and_trains_to_the_end(
    two_worker_checkpoint: Path, through: str) -> None:
  out = two_worker_checkpoint
  report = out / f"report-{through}.json"
  extra, env = (["grain_worker_count=1"], {}) if through == "argv" else ([], {"M_GRAIN_WORKER_COUNT": "1"})
  done = run(trainer_argv(out, "saved", 8 if through == "argv" else 10, [*extra, *CHECKPOINTING]), out,
             settings(report, admission=1), env)
  output = done.stdout + done.stderr
  assert done.returncode == 0, tail(output)
  seen = json.loads(report.read_text())
  assert (seen["written_value"], seen["started_value"], seen["changed"]) == (1, 2, True), seen
  assert seen["checkpoint"]["saved_workers"] == 2 and seen["checkpoint"]["layout"] == "per-worker", seen
  assert "Training stopped" not in output, tail(output)
  last = 7 if through == "argv" else 9
  assert steps_in(out / f"saved-{8 if through == 'argv' else 10}.jsonl")[-1] == last, tail(output)


def test_StartCheck_the_hazard_without_the_check_stops_early(two_worker_checkpoint: Path, tmp_path: Path) -> None:
  """The control: the same resume without the check is the early stop the check prevents."""
  import shutil  # pylint: disable=import-outside-toplevel
  out = tmp_path / "copy"
  shutil.copytree(two_worker_checkpoint / "saved" / "checkpoints", out / "saved" / "checkpoints")
  for step in (p for p in (out / "saved" / "checkpoints").iterdir() if p.name != "5"):
    shutil.rmtree(step)
  done = run(trainer_argv(out, "saved", 8, ["grain_worker_count=1", *CHECKPOINTING]), out)
  output = done.stdout + done.stderr
  assert "Training stopped" in output or steps_in(out / "saved-8.jsonl")[-1:] != [7], tail(output)


def test_StartCheck_parquet_more_workers_than_files_trains_with_the_files_per_host(
    parquet_dir: Path, tmp_path: Path) -> None:  # pylint: disable=redefined-outer-name
  report = tmp_path / "report.json"
  argv = [maxtext_env("GRAINTUNE_MAXTEXT_PYTHON"), "-m", TRAINER, *maxtext_env("GRAINTUNE_MAXTEXT_TINY_ARGS").split(),
          "grain_file_type=parquet", f"grain_train_files={parquet_dir}/*.parquet",
          f"tokenizer_path={maxtext_env('GRAINTUNE_MAXTEXT_TOKENIZER')}", "run_name=parquet",
          f"base_output_directory={tmp_path}", "steps=3", "grain_worker_count=5", f"metrics_file={tmp_path}/m.jsonl"]
  done = run(argv, tmp_path, settings(report, admission=5), {"JAX_PROCESS_COUNT": "1"})
  output = done.stdout + done.stderr
  assert done.returncode == 0, tail(output)
  seen = json.loads(report.read_text())
  assert (seen["files_per_host"], seen["started_value"]) == (3, 3), seen
  assert steps_in(tmp_path / "m.jsonl")[-1] == 2, tail(output)


def test_StartCheck_a_minus_one_admission_left_starts_with_graintunes_value_within_maxtexts_limit(
    parquet_dir: Path, tmp_path: Path) -> None:  # pylint: disable=redefined-outer-name
  """A start whose count admission could not rewrite (here -1 on the command line, as a sourced
  file would leave it) and whose limit admission could not tell: the launcher gives the check
  graintune's value (fill_value 12); the check reads parquet with 3 files per host and starts the
  trainer with 3, which trains. Without the check, MaxText's own -1 would pick by RAM."""
  argv = [maxtext_env("GRAINTUNE_MAXTEXT_PYTHON"), "-m", TRAINER, *maxtext_env("GRAINTUNE_MAXTEXT_TINY_ARGS").split(),
          "grain_file_type=parquet", f"grain_train_files={parquet_dir}/*.parquet",
          f"tokenizer_path={maxtext_env('GRAINTUNE_MAXTEXT_TOKENIZER')}", "run_name=filled",
          f"base_output_directory={tmp_path}", "steps=3", "grain_worker_count=-1", f"metrics_file={tmp_path}/m.jsonl"]
  report = tmp_path / "report.json"
  fill = json.dumps({"report": str(report), "timeout_seconds": 300, "admission_value": 12, "fill_value": 12})
  done = run(argv, tmp_path, fill, {"JAX_PROCESS_COUNT": "1"})
  output = done.stdout + done.stderr
  assert done.returncode == 0, tail(output)
  seen = json.loads(report.read_text())
  assert (seen["written_value"], seen["fill_value"], seen["started_value"], seen["changed"]) == (-1, 12, 3, True), seen
  assert steps_in(tmp_path / "m.jsonl")[-1] == 2, tail(output)


def test_StartCheck_an_hf_count_maxtext_refuses_gets_past_its_config_with_one(tmp_path: Path) -> None:
  argv = [maxtext_env("GRAINTUNE_MAXTEXT_PYTHON"), "-m", TRAINER, *maxtext_env("GRAINTUNE_MAXTEXT_TINY_ARGS").split(),
          "dataset_type=hf", "hf_path=parquet", f"hf_train_files={tmp_path}/*.parquet", "run_name=hf",
          f"tokenizer_path={maxtext_env('GRAINTUNE_MAXTEXT_TOKENIZER')}", f"base_output_directory={tmp_path}",
          "steps=2", "grain_worker_count=4"]
  refused = run(argv, tmp_path)
  assert "Only supports <= 1" in refused.stdout + refused.stderr, tail(refused.stdout + refused.stderr)
  report = tmp_path / "report.json"
  done = run(argv, tmp_path, settings(report, admission=4))
  output = done.stdout + done.stderr
  seen = json.loads(report.read_text())
  assert (seen["started_value"], seen["changed"], seen["keys"]["dataset_type"]) == (1, True, "hf"), seen
  # Past MaxText's config, into its hf pipeline (this environment has no `datasets` package, so
  # the trainer stops there; the refusal above stopped it in its config).
  assert "make_hf_train_iterator" in output, tail(output)


def _stub_trainer(root: Path) -> Path:
  """A script MaxText's trainer's path would have, that prints the argv and env it got."""
  script = root / "maxtext" / "train.py"
  script.parent.mkdir(parents=True)
  script.write_text("import json, os, sys\nprint(json.dumps({'argv': sys.argv[1:], "
                    "'env': os.environ.get('M_GRAIN_WORKER_COUNT'), 'check': os.environ.get('GRAINTUNE_START_CHECK')}))\n")
  return script


def test_StartCheck_a_python_without_maxtext_starts_the_trainer_as_written(tmp_path: Path) -> None:
  script = _stub_trainer(tmp_path)
  report = tmp_path / "report.json"
  done = run(["/usr/bin/python3", str(script), "grain_worker_count=7"], tmp_path, settings(report, 60, 7))
  assert done.returncode == 0, done.stderr
  assert json.loads(done.stdout.splitlines()[-1]) == {"argv": ["grain_worker_count=7"], "env": None, "check": None}
  seen = json.loads(report.read_text())
  assert seen["checked"] is False and "No module named" in seen["why"], seen


def test_StartCheck_a_loader_slower_than_the_timeout_starts_the_trainer_within_it(tmp_path: Path) -> None:
  script = _stub_trainer(tmp_path / "app")
  slow = tmp_path / "slow" / "maxtext" / "configs"
  slow.mkdir(parents=True)
  (slow.parent / "__init__.py").write_text("")
  (slow / "__init__.py").write_text("")
  (slow / "pyconfig.py").write_text("import time\ntime.sleep(60)\n")
  report = tmp_path / "report.json"
  began = time.monotonic()
  done = run(["/usr/bin/python3", str(script), "grain_worker_count=7"], tmp_path, settings(report, 2, 7),
             {"PYTHONPATH": str(tmp_path / "slow")})
  took = time.monotonic() - began
  assert json.loads(done.stdout.splitlines()[-1])["argv"] == ["grain_worker_count=7"], done.stderr
  seen = json.loads(report.read_text())
  assert "longer than 2 s" in seen["why"], seen
  assert took < 30, f"the trainer started after {took:.0f} s"


def test_StartCheck_leaves_other_pythons_and_the_images_own_sitecustomize_alone(tmp_path: Path) -> None:
  image = tmp_path / "image-site"
  image.mkdir()
  (image / "sitecustomize.py").write_text("import os\nos.environ['IMAGE_SITECUSTOMIZE'] = 'ran'\n")
  report = tmp_path / "report.json"
  done = run(["/usr/bin/python3", "-c", "import os; print(os.environ.get('IMAGE_SITECUSTOMIZE'), "
              "os.environ.get('GRAINTUNE_START_CHECK') is not None)"], tmp_path, settings(report),
             {"PYTHONPATH": str(image)})
  assert done.stdout.split() == ["ran", "True"], done.stdout + done.stderr
  assert not report.exists()
