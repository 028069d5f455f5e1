"""A raw-text corpus and a tokenizer made from text that ships on this machine.

Nothing is downloaded at run time: the records are the Debian packages' copyright files, the
licence texts in /usr/share/common-licenses and the running Python's standard-library sources,
split into paragraphs and regrouped into documents of about 4 KiB (web-text documents are of
that order), written as an ArrayRecord file, the format MaxText's Grain pipeline reads
(grain_file_type=arrayrecord). The tokenizer is a byte-level BPE trained on the same text with
the `tokenizers` package (vocabulary 32k, like Llama 2's). Both are cached in the work directory
and rebuilt only when missing.
"""

from __future__ import annotations

import glob
import os
import sysconfig
from pathlib import Path

from array_record.python import array_record_module
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

DOCUMENT_BYTES = 4096
VOCAB_SIZE = 32000


def source_files() -> list[str]:
  files = sorted(glob.glob("/usr/share/doc/*/copyright")) + sorted(glob.glob("/usr/share/common-licenses/*"))
  files += sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py")))
  return [f for f in files if os.path.isfile(f)]


def documents() -> list[str]:
  """Paragraphs of every source file, regrouped into ~DOCUMENT_BYTES documents, in a fixed order."""
  docs, current = [], []
  size = 0
  for path in source_files():
    try:
      text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
      continue
    for paragraph in text.split("\n\n"):
      if not paragraph.strip():
        continue
      current.append(paragraph)
      size += len(paragraph) + 2
      if size >= DOCUMENT_BYTES:
        docs.append("\n\n".join(current))
        current, size = [], 0
  if current:
    docs.append("\n\n".join(current))
  return docs


def build(workdir: Path) -> tuple[Path, Path, dict]:
  """Returns (array_record path, tokenizer.json path, facts about the corpus)."""
  workdir.mkdir(parents=True, exist_ok=True)
  records = workdir / "corpus.array_record"
  tokenizer_path = workdir / "tokenizer.json"
  docs = None
  if not records.exists():
    docs = documents()
    tmp = workdir / "corpus.array_record.tmp"
    writer = array_record_module.ArrayRecordWriter(str(tmp), "group_size:1")
    for doc in docs:
      writer.write(doc.encode("utf-8"))
    writer.close()
    tmp.rename(records)
  if not tokenizer_path.exists():
    docs = docs or documents()
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(docs, trainer=trainer)
    tokenizer.save(str(tokenizer_path) + ".tmp")
    os.rename(str(tokenizer_path) + ".tmp", tokenizer_path)
  reader = array_record_module.ArrayRecordReader(str(records))
  facts = {"documents": reader.num_records(), "bytes": records.stat().st_size, "files": len(source_files())}
  reader.close()
  return records, tokenizer_path, facts
