"""A Grain pipeline shaped like MaxText's pre-training input (input_pipeline/grain_data_processing:
pretrain_preprocessing_pipeline with grain_file_type=arrayrecord, packing=true, first_fit):

  ArrayRecord source -> shuffle -> repeat -> decode + tokenize each raw-text record
  -> first-fit packing to max_target_length (inputs/targets with segment ids and positions)
  -> batch -> mp_prefetch(num_workers=N)

Tokenization happens in the Grain workers, one record at a time, as MaxText's TokenizeAndTrim
does; the tokenizer is loaded once per worker process.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from pathlib import Path

import grain
import grain.python as gp
import numpy as np


class TokenizeText(gp.MapTransform):
  """Raw UTF-8 record -> {"inputs", "targets"} int32 token ids, trimmed to max_length."""

  def __init__(self, tokenizer_path: str, max_length: int):
    self._tokenizer_path = tokenizer_path
    self._max_length = max_length
    self._tokenizer = None

  def map(self, element):
    if self._tokenizer is None:  # once per worker process
      from tokenizers import Tokenizer  # pylint: disable=import-outside-toplevel
      self._tokenizer = Tokenizer.from_file(self._tokenizer_path)
    text = element.decode("utf-8", errors="replace")
    ids = np.asarray(self._tokenizer.encode(text).ids[: self._max_length], dtype=np.int32)
    return {"inputs": ids, "targets": ids}


def dataset(records: Path, tokenizer: Path, *, max_target_length: int, batch_size: int,
            seed: int = 0) -> grain.IterDataset:
  """The pipeline up to batching (no multiprocessing yet)."""
  ds = grain.MapDataset.source(gp.ArrayRecordDataSource(str(records)))
  ds = ds.shuffle(seed=seed).repeat()
  ds = ds.map(TokenizeText(str(tokenizer), max_target_length))
  ids = ds.to_iter_dataset()
  packed = grain.experimental.FirstFitPackIterDataset(
      ids, length_struct={"inputs": max_target_length, "targets": max_target_length},
      num_packing_bins=batch_size)
  return packed.batch(batch_size, drop_remainder=True)


def with_workers(ds: grain.IterDataset, workers: int, per_worker_buffer_size: int = 1) -> grain.IterDataset:
  """MaxText's apply_multiprocessing_and_prefetch for a fixed grain_worker_count (0 = in-process)."""
  if workers <= 0:
    return ds
  return ds.mp_prefetch(gp.MultiprocessingOptions(num_workers=workers,
                                                 per_worker_buffer_size=per_worker_buffer_size))


def real_tokens(batch) -> int:
  """Tokens in a batch that are not padding (segment id > 0)."""
  return int(np.count_nonzero(batch["inputs_segment_ids"]))


def close(it) -> None:
  if hasattr(it, "close"):
    it.close()  # stops the worker processes and frees their shared memory
  gc.collect()


def paced_steps(ds: grain.IterDataset, workers: int, compute_seconds: float, steps: int) -> Iterator[float]:
  """Step times of a trainer whose device step takes compute_seconds and that fetches the next
  batch while it runs (MaxText prefetches to device): each step lasts max(compute, the wait for
  its batch). The first batch, which includes worker start-up as MaxText's first step includes
  compilation, is taken before step 1."""
  it = iter(with_workers(ds, workers))
  try:
    next(it)
    for _ in range(steps):
      start = time.perf_counter()
      next(it)
      left = compute_seconds - (time.perf_counter() - start)
      if left > 0:
        time.sleep(left)
      yield time.perf_counter() - start
  finally:
    close(it)
