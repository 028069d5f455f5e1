# Run inside a container (bash, no procps): PID 1 and every process this container can see.
echo "PID 1 cmdline: $(tr '\0' ' ' < /proc/1/cmdline)"
echo "bash: $BASH_VERSION  me: uid=$(id -u 2>/dev/null || echo ?)"
for d in /proc/[0-9]*; do
  p=${d#/proc/}; ppid= uid= st= cg=
  while read -r k v _; do
    case $k in PPid:) ppid=$v ;; Uid:) uid=$v ;; State:) st=$v ;; SigCgt:) cg=$v ;; esac
  done < "$d/status" 2>/dev/null
  c=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null | cut -c1-90)
  printf '  pid=%-4s ppid=%-4s uid=%-5s %s SigCgt=%s %s\n' "$p" "$ppid" "$uid" "$st" "$cg" "$c"
done
