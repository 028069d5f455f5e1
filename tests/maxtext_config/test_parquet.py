"""MaxText's own trainer, on real parquet files, starts with the value graintune writes.

MaxText 0.2.5 refuses to start a Grain pipeline over tfrecord or parquet files whose
grain_worker_count exceeds the data files per host (input_pipeline/grain_data_processing.py:
"Lower grain_worker_count to at most N"); -1 passes that check. Here three parquet files are
written with pyarrow and a single-host Job reads them with grain_worker_count=-1:
  - with the graintune.dev/data-files annotation, `graintune explain` writes at most 3 (a v6e
    host would otherwise get far more), and MaxText's trainer (the pinned environment, the tiny
    model on CPU) trains with it;
  - one worker more stops the same trainer at start with MaxText's own error, so the limit is
    MaxText's and not a guess of graintune's;
  - without the annotation graintune keeps -1 and says why, and the trainer starts with it as
    it would without graintune.
Needs GRAINTUNE_BIN and the GRAINTUNE_MAXTEXT_* variables (scripts/lib/maxtext_trainer.sh).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import harness

REPO = Path(__file__).resolve().parents[2]
FILES = 3
STEPS = 3


def maxtext_env(name: str) -> str:
  value = os.environ.get(name)
  if not value:
    raise RuntimeError(f"{name} is not set (scripts/lib/maxtext_trainer.sh exports it)")
  return value


@pytest.fixture(scope="module")
def parquet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
  """FILES parquet files with a `text` column (MaxText's default train_data_columns): lines of
  this repository's documentation, so the tokenizer has words to cut."""
  lines = [line.strip() for doc in sorted((REPO / "docs").glob("*.md"))
           for line in doc.read_text().splitlines() if len(line.strip()) > 40]
  assert len(lines) > 300, "too little text to fill the files"
  directory = tmp_path_factory.mktemp("parquet")
  for i in range(FILES):
    rows = lines[i::FILES]
    pq.write_table(pa.table({"text": rows}), directory / f"part-{i}.parquet")
  return directory


def job(parquet_dir: Path, annotations: dict[str, str]) -> dict[str, Any]:
  """A single-host (v6e 2x2) Job whose trainer reads the parquet files with -1."""
  return {
      "apiVersion": "batch/v1", "kind": "Job",
      "metadata": {"name": "parquet", "namespace": "default", "annotations": annotations},
      "spec": {"template": {"spec": {
          "restartPolicy": "Never",
          "nodeSelector": {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                           "cloud.google.com/gke-tpu-topology": "2x2"},
          "containers": [{
              "name": "maxtext", "image": "maxtext:latest",
              "command": ["python3", "-m", "maxtext.trainers.pre_train.train", "dataset_type=grain",
                          "grain_file_type=parquet", f"grain_train_files={parquet_dir}/*.parquet",
                          "enable_checkpointing=false", "grain_worker_count=-1"],
              "resources": {"limits": {"google.com/tpu": 4}}}]}}}}


def explained(parquet_dir: Path, annotations: dict[str, str], tmp_path: Path) -> dict[str, Any]:
  reports = harness.explain([job(parquet_dir, annotations)], tmp_path)
  assert len(reports) == 1, reports
  return reports[0]


def written_value(report: dict[str, Any]) -> int | None:
  """The grain_worker_count graintune writes; None when it leaves the -1."""
  if report.get("outcome") != "Tuned":
    return None
  values = [f.get("value") for f in report.get("found", []) if f.get("key") == "grain_worker_count"]
  assert len(values) == 1, report
  return values[0]


def train(parquet_dir: Path, workers: int, out: Path) -> tuple[int, str, list[str]]:
  """MaxText's trainer, the tiny model on CPU, STEPS steps over the parquet files with `workers`:
  its exit status, its output and its metrics file's lines."""
  out.mkdir(parents=True, exist_ok=True)
  argv = [maxtext_env("GRAINTUNE_MAXTEXT_PYTHON"), "-m", "maxtext.trainers.pre_train.train",
          *maxtext_env("GRAINTUNE_MAXTEXT_TINY_ARGS").split(),
          # The later duplicate wins: the tiny model's arrayrecord gives way to parquet.
          "grain_file_type=parquet", f"grain_train_files={parquet_dir}/*.parquet",
          f"tokenizer_path={maxtext_env('GRAINTUNE_MAXTEXT_TOKENIZER')}", "run_name=parquet",
          f"base_output_directory={out}", f"steps={STEPS}", f"grain_worker_count={workers}",
          f"metrics_file={out}/metrics.jsonl"]
  env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_cpu_multi_thread_eigen=false")
  done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, env=env, cwd=out)
  metrics = out / "metrics.jsonl"
  lines = metrics.read_text().splitlines() if metrics.exists() else []
  return done.returncode, done.stdout + done.stderr, lines


def tail(text: str, chars: int = 3000) -> str:
  return text[-chars:]


def test_graintunes_value_for_parquet_files_trains_in_maxtexts_trainer(parquet_dir: Path, tmp_path: Path) -> None:
  report = explained(parquet_dir, {"graintune.dev/data-files": str(FILES)}, tmp_path)
  value = written_value(report)
  assert value == FILES, report  # a v6e host would get far more than 3 without the limit
  status, output, metrics = train(parquet_dir, value, tmp_path / "run")
  assert status == 0, tail(output)
  assert len(metrics) == STEPS, tail(output)


def test_one_worker_more_than_the_files_stops_maxtext_at_start(parquet_dir: Path, tmp_path: Path) -> None:
  status, output, metrics = train(parquet_dir, FILES + 1, tmp_path / "run")
  assert status != 0, tail(output)
  assert f"Lower grain_worker_count to at most {FILES}" in output, tail(output)
  assert not metrics


def test_without_a_file_count_graintune_keeps_minus_one_and_maxtext_starts(parquet_dir: Path, tmp_path: Path) -> None:
  # Nothing is written into the start; the start check, which reads the files, fills the -1
  # within MaxText's limit (test_start_check.py trains that start).
  report = explained(parquet_dir, {}, tmp_path)
  assert report.get("outcome") == "LeftToStartCheck" and written_value(report) is None, report
  assert [f.get("start_fill") for f in report["found"]] == [report["workers"]], report
  assert any("graintune.dev/data-files" in w for w in report.get("warnings", [])), report
  status, output, metrics = train(parquet_dir, -1, tmp_path / "run")
  assert status == 0, tail(output)
  assert len(metrics) == STEPS, tail(output)

