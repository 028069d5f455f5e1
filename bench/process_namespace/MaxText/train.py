"""Stand-in for MaxText's trainer (its path holds "MaxText", so graintune's webhook rewrites its
grain_worker_count and the exporter finds it). Starts real Grain worker processes
(grain_worker_count of them, Grain 0.2.18 mp_prefetch: spawned processes), then waits for
SIGTERM/SIGINT/SIGHUP with sigwaitinfo so it can log who sent the signal (si_pid as seen in its PID
namespace; 0 = from outside it, i.e. the container runtime). On SIGTERM it "saves a checkpoint"
(3 s, as JAX's preemption path would) and exits 143 the normal way (Grain stops its workers).
It also makes one orphan (double fork) that exits after 2 s, to see who reaps it.
Every line goes to stdout and to <base_output_directory>/<run_name>.trainer.log (a hostPath), so
the timeline survives the pod's deletion."""
import os, signal, sys, threading, time

CAUGHT = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
if __name__ == "__mp_main__":  # a spawned Grain worker: it inherited the blocked mask; undo it
  signal.pthread_sigmask(signal.SIG_UNBLOCK, CAUGHT)


def slow(x):
  time.sleep(0.05)
  return x


def cmd(pid):
  try:
    with open("/proc/%s/cmdline" % pid, "rb") as f:
      return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:110]
  except OSError as e:
    return "<%s>" % e.strerror


def status_field(pid, key):
  try:
    with open("/proc/%s/status" % pid) as f:
      for line in f:
        if line.startswith(key + ":"):
          return line.split(":", 1)[1].strip()
  except OSError:
    return "?"
  return "?"


def main():
  args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
  workers = int(args.get("grain_worker_count", "1"))
  run = args.get("run_name", "probe")
  out = args.get("base_output_directory", "/tmp")
  logpath = os.path.join(out, run + ".trainer.log")

  def log(msg):
    t = time.time()
    line = time.strftime("%H:%M:%S", time.gmtime(t)) + ".%03d" % int((t % 1) * 1000) + " trainer[%d] %s" % (os.getpid(), msg)
    print(line, flush=True)
    with open(logpath, "a") as f:
      f.write(line + "\n")

  log("start pid=%d ppid=%d uid=%d workers=%d" % (os.getpid(), os.getppid(), os.getuid(), workers))
  log("PID 1 cmdline: %r SigCgt=%s SigIgn=%s" % (cmd(1)[:60], status_field(1, "SigCgt"), status_field(1, "SigIgn")))
  ready = threading.Event()

  def grain_loop():
    from absl import flags
    flags.FLAGS.mark_as_parsed()  # MaxText parses absl flags before Grain starts; we have none
    import grain
    ds = grain.MapDataset.range(10**9).map(slow).to_iter_dataset()
    it = iter(ds.mp_prefetch(grain.MultiprocessingOptions(num_workers=workers)))
    next(it)
    ready.set()
    while True:
      next(it)

  # Blocked in every thread (Grain's too, which inherit it), taken only by sigwaitinfo below.
  signal.pthread_sigmask(signal.SIG_BLOCK, CAUGHT)
  threading.Thread(target=grain_loop, daemon=True).start()
  if not ready.wait(120):
    log("Grain did not start in 120 s")
  me = str(os.getpid())
  procs = sorted(int(d) for d in os.listdir("/proc") if d.isdigit())
  desc, frontier = [], [me]
  while frontier:
    kids = [str(p) for p in procs if status_field(p, "PPid") in frontier]
    desc += kids
    frontier = kids
  log("grain running; trainer's descendants: %s" % "; ".join("%s(ppid %s: %s)" % (k, status_field(k, "PPid"), cmd(k)[-45:]) for k in desc))

  # The orphan: a child forks a grandchild and exits at once; the grandchild (reparented to this
  # PID namespace's init, or the nearest subreaper) exits after 2 s. Who reaps it?
  c = os.fork()
  if c == 0:
    g = os.fork()
    if g == 0:
      time.sleep(2)
      os._exit(0)
    with open(os.path.join(out, run + ".orphan"), "w") as f:
      f.write(str(g))
    os._exit(0)
  os.waitpid(c, 0)
  time.sleep(0.2)
  orphan = open(os.path.join(out, run + ".orphan")).read().strip()
  log("orphan pid %s, ppid now %s (%s)" % (orphan, status_field(orphan, "PPid"), cmd(status_field(orphan, "PPid"))[:30]))

  def watch_orphan():
    for wait, t in ((1, 1), (3, 4), (4, 8)):
      time.sleep(wait)
      st = status_field(orphan, "State")
      log("orphan %s after ~%ds: %s" % (orphan, t, "gone (reaped)" if st == "?" else "State=" + st + " PPid=" + status_field(orphan, "PPid")))

  threading.Thread(target=watch_orphan, daemon=True).start()
  done = []

  def on_signal(signo, who):
    log("got %s %s" % (signal.Signals(signo).name, who))
    if signo == signal.SIGTERM and not done:
      done.append(1)
      log("saving checkpoint (3 s)")
      time.sleep(3)
      log("checkpoint saved; exit 143")
      sys.exit(143)  # normal interpreter exit: Grain stops its workers

  # A thread that a native library started with SIGTERM unblocked may take a process-directed
  # signal: the Python handler catches that case (without the sender).
  for s in CAUGHT:
    signal.signal(s, lambda signo, frame: on_signal(signo, "(through the handler: sender unknown)"))
  log("READY: waiting for signals")
  while True:
    info = signal.sigtimedwait(CAUGHT, 0.5)
    if info is None:
      continue
    sender = info.si_pid
    on_signal(info.si_signo, "si_pid=%d si_uid=%d si_code=%d sender=%s" % (
        sender, info.si_uid, info.si_code, cmd(sender) if sender else "(0: from outside this PID namespace)"))

if __name__ == "__main__":
  main()
