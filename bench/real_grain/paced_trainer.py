"""A trainer's step loop over the real Grain pipeline, for the trainer emulator's
--pipeline-command (tests/emulator/trainer_emulator_main.cc): prints one line per step,
"<step seconds> <compute seconds>", as each step ends, so the emulator can write MaxText metrics
lines from real worker processes instead of the simulator.

  paced_trainer.py --workers N --steps K --compute-seconds S [--workdir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import corpus
import pipeline


def main() -> int:
  parser = argparse.ArgumentParser()
  parser.add_argument("--workers", type=int, required=True)
  parser.add_argument("--steps", type=int, required=True)
  parser.add_argument("--compute-seconds", type=float, required=True)
  parser.add_argument("--max-target-length", type=int, default=8192)
  parser.add_argument("--batch-size", type=int, default=8)
  parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "graintune" / "real-grain")
  args = parser.parse_args()
  records, tokenizer, _ = corpus.build(args.workdir)
  ds = pipeline.dataset(records, tokenizer, max_target_length=args.max_target_length, batch_size=args.batch_size)
  for seconds in pipeline.paced_steps(ds, args.workers, args.compute_seconds, args.steps):
    print(f"{seconds:.6f} {args.compute_seconds:.6f}", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
