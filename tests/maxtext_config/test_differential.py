"""graintune's resume decision against MaxText's own config loader, container by container.

Every manifest of corpus/ (written by hand: argv, scripts, env, valueFrom/envFrom, ConfigMap
chains, init containers, sidecars, several replicatedJobs) and of corpus/xpk/ (JobSets rendered
by xpk itself with scripts/render-xpk-corpus.sh; XpkRenderedJobSetsAreXpksOwn re-renders them)
goes through differential.differences: MaxText's
answer comes from running each container's command under the capture shim and loading every
MaxText start with maxtext 0.2.5's pyconfig; graintune's from `graintune explain -o json`. The
test passes when there is no difference (differential.py lists the kinds; holding where
graintune says it cannot read something is allowed).

Run by ctest (label maxtext: maxtext_config_differential, maxtext_config_differential_Xpk) with
the pinned MaxText environment's python (scripts/run-maxtext-pytest.sh).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import differential
import harness

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


# Differences graintune still has, each an open bug with its reason. strict: once graintune is
# fixed the case passes, and the test then fails until its entry is removed here.
KNOWN_DIFFERENCES = {
}


def corpus_cases() -> list[Any]:
  cases = []
  for path in sorted(CORPUS.glob("*.yaml")) + sorted(CORPUS.glob("xpk/*.yaml")):
    known = KNOWN_DIFFERENCES.get(str(path.relative_to(CORPUS)))
    marks = [pytest.mark.xfail(reason=known, strict=True)] if known else []
    cases.append(pytest.param(path, id=str(path.relative_to(CORPUS)), marks=marks))
  return cases


def test_every_known_difference_names_a_corpus_file() -> None:
  for name in KNOWN_DIFFERENCES:
    assert (CORPUS / name).is_file(), name


def test_the_corpus_is_large_enough() -> None:
  assert len(list(CORPUS.glob("*.yaml"))) >= 40


def test_the_xpk_corpus_is_rendered() -> None:
  assert len(list(CORPUS.glob("xpk/*.yaml"))) >= 5, "run scripts/render-xpk-corpus.sh and commit corpus/xpk/"


@pytest.mark.parametrize("path", corpus_cases())
def test_graintune_resumes_as_maxtext_does(path: Path, tmp_path: Path, loader) -> None:  # pylint: disable=redefined-outer-name
  docs = harness.load_manifest(path)
  diffs, compared = differential.differences(str(path.relative_to(CORPUS)), docs, loader, tmp_path)
  for d in diffs:
    print(f"DIFFERENCE {d}")
  annotated = any("graintune.dev/worker-count" in d.get("metadata", {}).get("annotations", {})
                  for d in docs if harness.is_workload(d))
  # Not vacuous: MaxText saw a -1 in some container (or the workload asks by annotation).
  assert compared > 0 or annotated, f"{path.name}: MaxText never sees -1 in any container"
  assert not diffs, "\n".join(str(d) for d in diffs)
