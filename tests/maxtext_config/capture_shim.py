"""Stands in for `python3`, `python`, `pip`, `sleep`, ... inside a container's command.

A `python3`/`python` start is recorded as one JSON file (argv and the environment MaxText's
config reads: the M_* overrides and JOBSET_NAME, its default run_name; and the start check's
settings, GRAINTUNE_START_CHECK, when graintune-launcher started the command) in
$GRAINTUNE_CAPTURES, numbered in start order; every shimmed command then exits 0 at
once, so scripts run to the end (`&&` chains, `wait $PID`, xpk's polling loop) without training.
"""

import json
import os
import sys


def main() -> int:
  name, argv = sys.argv[1], sys.argv[2:]
  if name in ("python3", "python"):
    captures = os.environ["GRAINTUNE_CAPTURES"]
    index = len([f for f in os.listdir(captures) if f.endswith(".json")])
    env = {k: v for k, v in os.environ.items()
           if k.startswith("M_") or k in ("JOBSET_NAME", "GRAINTUNE_START_CHECK")}
    with open(os.path.join(captures, f"{index}.json"), "w", encoding="utf-8") as out:
      json.dump({"argv": [name] + argv, "env": env}, out)
  return 0


if __name__ == "__main__":
  sys.exit(main())
