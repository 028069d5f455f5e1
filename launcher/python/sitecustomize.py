"""graintune's start check hook (docs/start-check.md), installed by graintune-launcher.

graintune-launcher starts a trainer with this folder first on PYTHONPATH and the check's
settings in GRAINTUNE_START_CHECK. Python imports this module at every interpreter start, before
the program runs. It returns at once unless this interpreter is MaxText's trainer and the
settings are present; then graintune_start_check.run() reads what MaxText will really run (its
own config loader, in a child process, bounded in time) and the run's checkpoint, and may edit
sys.argv / os.environ before MaxText parses them. Any error leaves the trainer as it was written.
The variable is removed first, so the trainer's children (Grain's workers) never check again.

An image's own sitecustomize, the next one on sys.path, is then run as it would have been.
"""


def _graintune_start_check():
  import os  # pylint: disable=import-outside-toplevel
  import sys  # pylint: disable=import-outside-toplevel
  if not os.environ.get("GRAINTUNE_START_CHECK"):
    return
  if not any("train" in word for word in sys.orig_argv[1:8]):
    return  # not MaxText's trainer, cheaply: the check's module is not even imported
  settings = os.environ.pop("GRAINTUNE_START_CHECK")
  here = os.path.dirname(os.path.abspath(__file__))
  try:
    sys.path.insert(0, here)
    import graintune_start_check  # pylint: disable=import-outside-toplevel
    if graintune_start_check.is_maxtext_trainer(sys.orig_argv):
      graintune_start_check.run(settings)
    else:
      os.environ["GRAINTUNE_START_CHECK"] = settings  # not the trainer: a later Python may be
  except BaseException as e:  # pylint: disable=broad-except  # never break the start
    sys.stderr.write(f"graintune start check: skipped ({type(e).__name__}: {e})\n")
  finally:
    if sys.path and sys.path[0] == here:
      del sys.path[0]


def _image_sitecustomize():
  """Runs the sitecustomize this one shadows (the next on sys.path), if any."""
  import importlib.machinery  # pylint: disable=import-outside-toplevel
  import importlib.util  # pylint: disable=import-outside-toplevel
  import os  # pylint: disable=import-outside-toplevel
  import sys  # pylint: disable=import-outside-toplevel
  here = os.path.dirname(os.path.abspath(__file__))
  rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
  spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
  if spec is None or spec.loader is None:
    return
  module = importlib.util.module_from_spec(spec)
  sys.modules["sitecustomize"] = module
  spec.loader.exec_module(module)


_graintune_start_check()
try:
  _image_sitecustomize()
except Exception as _e:  # pylint: disable=broad-except  # as Python itself reports it
  import sys as _sys
  _sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(_e).__name__}: {_e}\n")
