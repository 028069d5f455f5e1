# Run inside a container: for every other process it can see, what it can read and do.
me=$$
echo "as uid=$(id -u) caps(CapEff)=$(grep CapEff /proc/self/status | cut -f2)"
for d in /proc/[0-9]*; do
  p=${d#/proc/}; [ "$p" = "$me" ] && continue
  c=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null | cut -c1-60); [ -z "$c" ] && continue
  case "$c" in *reads_inside*|"bash -c "*"reads_inside"*|cut*|tr*) continue ;; esac
  uid=$(grep '^Uid:' "$d/status" 2>/dev/null | cut -f2)
  env=$(cat "$d/environ" 2>&1 | tr "\0" "\n" | grep -E 'TOKEN|SECRET|KEY|GRAINTUNE_POD_UID|denied' | tr '\n' ' ' | cut -c1-90)
  root=$(ls "$d/root/" 2>&1 | head -4 | tr '\n' ' ' | cut -c1-60)
  fds=$(ls "$d/fd" 2>&1 | wc -l); ls "$d/fd" >/dev/null 2>&1 || fds=denied
  hwm=$(grep VmHWM "$d/status" 2>/dev/null | tr -s ' \t' ' ')
  ticks=$(cut -d' ' -f14,15 "$d/stat" 2>/dev/null)
  kill -0 "$p" 2>/dev/null && sig=yes || sig=no
  echo "pid=$p uid=$uid cmdline='$c'"
  echo "    environ: ${env:-<readable, no match>} | root/: $root | fd: $fds | $hwm | utime,stime: $ticks | can signal: $sig"
done
