"""Prints xpk's TPU system characteristics (xpk/core/system_characteristics.py) as CSV, for the
machine-table unit tests (tuner/slice_names_test.cc): every device type of the generations
graintune knows, with its topology, GKE accelerator, VM machine type, chips per VM and VMs per
slice. Usage: dump_xpk_systems.py VERSION-LABEL, with xpk importable (scripts/render-xpk-corpus.sh
runs it in the pinned xpk environment)."""

import sys

from xpk.core.system_characteristics import AcceleratorType
from xpk.core.system_characteristics import UserFacingNameToSystemCharacteristics as SYSTEMS

GENERATIONS = ("v4-", "v5p-", "v5litepod-", "v6e-")


def main() -> int:
  print(f"# xpk {sys.argv[1]}: xpk.core.system_characteristics (tests/maxtext_config/dump_xpk_systems.py)")
  print("device_type,topology,gke_accelerator,machine_type,chips_per_vm,vms_per_slice")
  for name, s in sorted(SYSTEMS.items()):
    if s.accelerator_type != AcceleratorType.TPU or name != s.device_type or not name.startswith(GENERATIONS):
      continue
    print(f"{name},{s.topology},{s.gke_accelerator},{s.gce_machine_type},{s.chips_per_vm},{s.vms_per_slice}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
