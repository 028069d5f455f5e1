"""host_watch.py POD_UID SECONDS: from the host, every 0.2 s, the processes in the pod's cgroup
(pid, ppid, state, pid in the pod's namespace, command), printing each appearance/disappearance
and state change with seconds since start. Ends early once only the pause process (or nothing)
is left for 2 s."""
import os, sys, time
uid, limit = sys.argv[1], float(sys.argv[2])
t0 = time.time()


def snap():
  out = {}
  for d in os.listdir("/proc"):
    if not d.isdigit():
      continue
    try:
      if "pod" + uid not in open("/proc/%s/cgroup" % d).read():
        continue
      st = dict(l.split(":", 1) for l in open("/proc/%s/status" % d) if ":" in l)
      cmd = open("/proc/%s/cmdline" % d, "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()[:70]
      out[int(d)] = (st["PPid"].strip(), st["State"].strip()[0], st["NSpid"].split()[-1], cmd, st["SigCgt"].strip())
    except (OSError, KeyError):
      pass
  return out


def now():
  t = time.time()
  return time.strftime("%H:%M:%S", time.gmtime(t)) + ".%03d" % int((t % 1) * 1000)


prev, quiet = {}, None
while time.time() - t0 < limit:
  cur = snap()
  t = time.time() - t0
  for p in sorted(set(prev) | set(cur)):
    if p not in cur:
      print(now() + " %6.2fs gone   pid=%d (ns %s) %s" % (t, p, prev[p][2], prev[p][3]), flush=True)
    elif p not in prev or prev[p][1] != cur[p][1]:
      a = cur[p]
      print(now() + " %6.2fs %-6s pid=%d ppid=%s ns-pid=%s state=%s SigCgt=%s %s" % (t, "seen" if p not in prev else "state", p, a[0], a[2], a[1], a[4][-8:], a[3]), flush=True)
  prev = cur
  rest = [c for c in cur.values() if "pause" not in c[3]]
  if not rest:
    quiet = quiet or time.time()
    if time.time() - quiet > 2:
      break
  else:
    quiet = None
  time.sleep(0.2)
