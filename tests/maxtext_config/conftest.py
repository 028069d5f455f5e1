"""Fixtures shared by the pytest files here."""

from __future__ import annotations

from pathlib import Path

import pytest

import differential


@pytest.fixture(scope="session")
def loader():
  """MaxText's config loader, imported once for the whole session (differential.MaxTextLoader):
  every load is a fork of one interpreter that has MaxText imported, instead of a new Python that
  imports JAX and MaxText again for each start."""
  from maxtext.utils.globals import MAXTEXT_CONFIGS_DIR  # pylint: disable=import-outside-toplevel
  served = differential.MaxTextLoader(Path(MAXTEXT_CONFIGS_DIR))
  yield served
  served.close()
