#!/usr/bin/env bash
# summarize.sh: one line per probe pod in out/run*/: mode-variant, PID 1, who sent the trainer its
# SIGTERM (si_pid; 0 = the runtime), s from delete to the trainer's SIGTERM, checkpoint done?,
# s from delete to the trainer container's end, exit code, the orphan's fate, exporter restarts.
cd "${GRAINTUNE_SPN_PROBE_DIR:-/tmp/graintune-spn-probe}/out"
for d in run*; do for f in $d/*.delete; do
  b=${f%.delete}; n=$(basename $b)
  del=$(grep -o 'delete at [0-9:.]*' $f | cut -d' ' -f3)
  tl=$d/$n.trainer.log; [ -f $tl ] || tl=$(ls $d/*$n*.trainer.log 2>/dev/null | head -1)
  p1=$(grep -o "PID 1 cmdline: '[^ ']*" $tl | cut -d"'" -f2)
  sig=$(grep -o 'got SIGTERM [^ ]*' $tl | head -1 | cut -d' ' -f3)
  sigt=$(grep 'got SIGTERM' $tl | head -1 | cut -c1-12)
  ck=$(grep -q 'checkpoint saved' $tl && echo yes || echo NO)
  orph=$(grep -o 'after ~8s: .*' $tl | cut -d' ' -f3-4)
  ex=$(grep -o '"maxtext":{"terminated":{[^}]*}' $b.status-watch | tail -1 | grep -o '"exitCode":[0-9]*' | cut -d: -f2)
  fin=$(grep 'gone' $b.host-timeline | grep -v 'pause\|graintune-exporter' | tail -1 | cut -c1-12)
  s() { [ -n "$1" ] && python3 -c "import sys;h=lambda t:sum(float(x)*m for x,m in zip(t.split(':'),(3600,60,1)));print('%.1f'%(h(sys.argv[2])-h(sys.argv[1])))" "$del" "$1" || echo -; }
  printf '%-5s %-17s pid1=%-7s sigterm_from=%-12s t_sigterm=%-5s ckpt=%-3s t_gone=%-5s exit=%s orphan8s=%-12s\n' \
    $d $n "$p1" "${sig:-none}" "$(s "$sigt")" $ck "$(s "$fin")" "$ex" "${orph:-?}"
done; done
