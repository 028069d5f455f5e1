"""MaxText's training data and tokenizer, made from text that ships on this machine.

MaxText's Grain pipeline (dataset_type=grain grain_file_type=arrayrecord) reads ArrayRecord
files of serialized tf.train.Example protos and tokenizes their `text` bytes feature. This
writes, into one cache folder, with nothing downloaded:

  small.array_record  the documents of ../real_grain/corpus.py (~4 KiB each): a pipeline far
                      faster than the tiny model, for runs that must simply train;
  large.array_record  the same text joined into LARGE_RECORD_BYTES records: tokenizing one costs
                      several times a tiny-model step on CPU, so the pipeline is the bottleneck
                      and the Grain worker count decides the step time;
  tokenizer.model     a SentencePiece model (vocabulary VOCAB_SIZE) trained on that text.

Each file is written under a temporary name and renamed when complete, and rebuilt only when
missing. The Example protos are built with the proto module MaxText parses them with.

  python corpus.py DIR   builds what is missing and prints DIR's files as KEY=VALUE lines
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "real_grain"))

import corpus as text_corpus  # bench/real_grain/corpus.py: the machine's text as documents
import sentencepiece
from array_record.python import array_record_module
from maxtext.input_pipeline.protos import example_pb2

VOCAB_SIZE = 2048
LARGE_RECORD_BYTES = 512 * 1024
LARGE_RECORDS = 48
SMALL_RECORDS = 4096
TOKENIZER_SAMPLE_BYTES = 8 * 1024 * 1024


def serialized_example(text: str) -> bytes:
  example = example_pb2.Example()
  example.features.feature["text"].bytes_list.value.append(text.encode("utf-8"))
  return example.SerializeToString()


def write_records(path: Path, texts: list[str]) -> None:
  tmp = path.with_suffix(".tmp")
  writer = array_record_module.ArrayRecordWriter(str(tmp), "group_size:1")
  for text in texts:
    writer.write(serialized_example(text))
  writer.close()
  tmp.rename(path)


def large_records(docs: list[str]) -> list[str]:
  """Consecutive documents joined into LARGE_RECORD_BYTES records, cycling when text runs out."""
  records, current, size, i = [], [], 0, 0
  while len(records) < LARGE_RECORDS:
    doc = docs[i % len(docs)]
    i += 1
    current.append(doc)
    size += len(doc) + 2
    if size >= LARGE_RECORD_BYTES:
      records.append("\n\n".join(current))
      current, size = [], 0
  return records


def train_tokenizer(path: Path, docs: list[str]) -> None:
  sample, size = [], 0
  for doc in docs[:: max(1, len(docs) // 4000)]:
    sample.extend(line for line in doc.splitlines() if line.strip())
    size += len(doc)
    if size >= TOKENIZER_SAMPLE_BYTES:
      break
  prefix = str(path.with_suffix(""))+ ".tmp"
  sentencepiece.SentencePieceTrainer.train(
      sentence_iterator=iter(sample), model_prefix=prefix, vocab_size=VOCAB_SIZE,
      model_type="bpe", character_coverage=1.0, byte_fallback=True, max_sentence_length=1 << 16,
      pad_id=0, unk_id=1, bos_id=2, eos_id=3, minloglevel=2, num_threads=1)
  os.rename(prefix + ".model", path)
  os.remove(prefix + ".vocab")


def build(workdir: Path) -> dict[str, Path]:
  workdir.mkdir(parents=True, exist_ok=True)
  files = {"small": workdir / "small.array_record", "large": workdir / "large.array_record",
           "tokenizer": workdir / "tokenizer.model"}
  docs = None
  if not all(f.exists() for f in files.values()):
    docs = text_corpus.documents()
  if not files["small"].exists():
    write_records(files["small"], docs[:SMALL_RECORDS])
  if not files["large"].exists():
    write_records(files["large"], large_records(docs))
  if not files["tokenizer"].exists():
    train_tokenizer(files["tokenizer"], docs)
  return files


if __name__ == "__main__":
  if len(sys.argv) != 2:
    sys.exit("usage: corpus.py DIR")
  built = build(Path(sys.argv[1]))
  print(f"GRAINTUNE_MAXTEXT_SMALL_RECORDS={built['small']}")
  print(f"GRAINTUNE_MAXTEXT_LARGE_RECORDS={built['large']}")
  print(f"GRAINTUNE_MAXTEXT_TOKENIZER={built['tokenizer']}")
