#!/usr/bin/env bash
# Webhook throughput, side by side in one run on this machine: graintune-webhook against a
# minimal Go net/http webhook (decode the AdmissionReview, answer allowed) and nginx answering a
# static body, all over TLS with keep-alive, driven by wrk at 16, 128 and 512 connections from
# one address (the API server opens one connection per admission in flight); beside
# them, graintune's own server doing only the Go baseline's work (bench/webhook_throughput/
# decode_only_server.cc: nlohmann parse, answer allowed), the ceiling of any mutating path on
# this stack. Prints
# req/s, p50/p99 latency and each server's RSS after ~10k and ~100k requests, the ratios
# graintune/Go and graintune/nginx, the connections graintune-webhook refused or reclaimed at
# each load (its own metric, graintune_webhook_connections_shed_total; the target is 0), the
# Admitter's instructions per request under callgrind
# (repeatable, unlike times), and one JSON line. Installs wrk and nginx-light if missing.
#   [ROUNDS=3] bash scripts/bench-webhook.sh [seconds-per-run, default 4]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${1:-4}"
ROUNDS="${ROUNDS:-3}"
bash scripts/setup.sh
need=()
command -v wrk >/dev/null || need+=(wrk)
[ -x /usr/sbin/nginx ] || need+=(nginx-light)
if [ "${#need[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${need[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "${need[@]}" >/dev/null; }
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build graintune-webhook admission_cost decode_only_server >/dev/null
W="$(mktemp -d /tmp/graintune-bench-XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT INT TERM
D=bench/webhook_throughput
(cd "$D/go_webhook" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -o "$W/go-webhook" .)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$W/tls.key" \
  -out "$W/tls.crt" -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -days 1 2>/dev/null

# graintune-webhook runs with the glibc settings the chart gives it (webhook.glibcTunables).
TUNABLES="$(sed -n 's/^  glibcTunables: *//p' charts/graintune/values.yaml)"
GLIBC_TUNABLES="$TUNABLES" build/webhook/graintune-webhook --standalone --no-exporter --tls-cert-file "$W/tls.crt" \
  --tls-key-file "$W/tls.key" --bind-address 127.0.0.1 --port 9443 --health-port 9447 --threads 2 2>"$W/gt.log" &
pids+=($!); GT=$!
"$W/go-webhook" -addr 127.0.0.1:9444 -cert "$W/tls.crt" -key "$W/tls.key" 2>"$W/go.log" &
pids+=($!); GO=$!
cat > "$W/nginx.conf" <<NGINX
worker_processes 2;
pid $W/nginx.pid;
error_log $W/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $W/body; proxy_temp_path $W/proxy; fastcgi_temp_path $W/fcgi;
  uwsgi_temp_path $W/uwsgi; scgi_temp_path $W/scgi;
  client_max_body_size 4m; client_body_buffer_size 64k;
  server {
    listen 127.0.0.1:9445 ssl; ssl_certificate $W/tls.crt; ssl_certificate_key $W/tls.key;
    ssl_protocols TLSv1.2 TLSv1.3; keepalive_requests 1000000;
    location /mutate { default_type application/json;
      return 200 '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"x","allowed":true}}'; }
  }
}
NGINX
GLIBC_TUNABLES="$TUNABLES" build/bench/decode_only_server --port 9446 --tls-cert-file "$W/tls.crt" --tls-key-file "$W/tls.key" \
  2>"$W/decode.log" &
pids+=($!)
/usr/sbin/nginx -c "$W/nginx.conf" -g 'daemon off;' &
pids+=($!)
sleep 1
rss_kb() { local t=0; for p in "$@"; do t=$((t + $(awk '/VmRSS/{print $2}' /proc/$p/status 2>/dev/null || echo 0))); done; echo $t; }

run() {  # run NAME PORT BODY CONNS SECONDS -> the RESULT line
  BODY_FILE="$3" wrk -t2 -c"$4" -d"${5}s" --latency -s "$D/post.lua" "https://127.0.0.1:$2" 2>/dev/null | grep '^RESULT'
}
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }

# Connections graintune-webhook shed so far, all reasons summed (its own metric).
shed_total() {
  curl -s http://127.0.0.1:9447/metrics | awk '/^graintune_webhook_connections_shed_total/ {t+=$2} END {print t+0}'
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

# The machine is shared: each figure is the median of ROUNDS runs, the servers taking turns
# within each round, so a noisy moment hits every server alike rather than one of them.
echo "== graintune-webhook vs Go net/http vs nginx (TLS, keep-alive, wrk -t2, median of $ROUNDS rounds of ${SECS}s)"
printf '%-10s %-22s %6s %10s %8s %8s\n' server body conns req/s p50_ms p99_ms
declare -A RPS SHED
SERVERS="graintune:9443 decode-only:9446 go:9444 nginx:9445"
for body in pod-untouched jobset-minus-one; do
  for conns in 16 128 512; do
    declare -A R=() P50=() P99=() ERR=()
    for round in $(seq "$ROUNDS"); do
      for s in $SERVERS; do
        name=${s%%:*}; port=${s##*:}
        [ "$name" = graintune ] && shed_before=$(shed_total)
        # 512 TLS handshakes alone can outlast a short run on a shared 2-core machine.
        line=$(run "$name" "$port" "$D/$body.json" "$conns" "$([ "$conns" -ge 512 ] && [ "$SECS" -lt 8 ] && echo 8 || echo "$SECS")")
        [ "$name" = graintune ] && SHED[$body.$conns]=$(( ${SHED[$body.$conns]:-0} + $(shed_total) - shed_before ))
        R[$name]+=" $(echo "$line" | field rps)"; P50[$name]+=" $(echo "$line" | field p50_ms)"
        P99[$name]+=" $(echo "$line" | field p99_ms)"; ERR[$name]+=" $(echo "$line" | field errors)"
      done
    done
    for s in $SERVERS; do
      name=${s%%:*}
      rps=$(echo "${R[$name]}" | median); p50=$(echo "${P50[$name]}" | median); p99=$(echo "${P99[$name]}" | median)
      errors=$(echo "${ERR[$name]}" | tr ' ' '\n' | awk '{t+=$1} END {print t+0}')
      RPS[$name.$body.$conns]=$rps
      printf '%-10s %-22s %6s %10s %8s %8s%s\n' "$name" "$body" "$conns" "$rps" "$p50" "$p99" \
        "$([ "$errors" != 0 ] && echo "  ($errors errors)")"
    done
  done
done
echo
echo "== ratios (same run)"
json="{"
for body in pod-untouched jobset-minus-one; do
  for conns in 16 128 512; do
    g=${RPS[graintune.$body.$conns]}; o=${RPS[go.$body.$conns]}; n=${RPS[nginx.$body.$conns]}
    d=${RPS[decode-only.$body.$conns]}
    rg=$(ratio "$g" "$o"); rn=$(ratio "$g" "$n"); rd=$(ratio "$d" "$o"); rdn=$(ratio "$d" "$n")
    shed=${SHED[$body.$conns]}
    printf '%-22s %4s conns: graintune/Go %s   graintune/nginx %s   (ceiling: decode-only/Go %s, /nginx %s); graintune refused or reclaimed %s connections\n' \
      "$body" "$conns" "$rg" "$rn" "$rd" "$rdn" "$shed"
    json+="\"${body}_${conns}\":{\"graintune_shed_connections\":$shed,\"graintune_rps\":$g,\"decode_only_rps\":$d,\"go_rps\":$o,\"nginx_rps\":$n,\"graintune_over_go\":$rg,\"graintune_over_nginx\":$rn,\"decode_only_over_go\":$rd,\"decode_only_over_nginx\":$rdn},"
  done
done
echo
echo "== memory and errors: RSS after 10k and after 100k more requests (jobset-minus-one, 128 conns)"
load_until() {  # load_until PORT N: 2 s runs until at least N requests were answered; prints "count errors"
  local done=0 errors=0 line n e
  while [ "$done" -lt "$2" ]; do
    line=$(run x "$1" "$D/jobset-minus-one.json" 128 2)
    n=$(echo "$line" | field requests)
    done=$((done + ${n:-0}))
    e=$(echo "$line" | field errors)
    errors=$((errors + ${e:-0}))
    [ "${n:-0}" -gt 0 ] || break
  done
  echo "$done $errors"
}
for s in graintune:9443:$GT go:9444:$GO; do
  IFS=: read -r name port pid <<<"$s"
  before=$(rss_kb "$pid")
  read -r first first_errors < <(load_until "$port" 10000)
  at10k=$(rss_kb "$pid")
  read -r second second_errors < <(load_until "$port" 100000)
  after=$(rss_kb "$pid")
  printf '%-10s RSS %6d kB at start, %6d kB after %d requests, %6d kB after %d more (%+.1f%%); %d errors\n' "$name" \
    "$before" "$at10k" "$first" "$after" "$second" "$(awk -v a="$at10k" -v b="$after" 'BEGIN{print 100*(b-a)/a}')" \
    "$((first_errors + second_errors))"
  json+="\"rss_kb_${name}\":[${before},${at10k},${after}],\"errors_${name}\":$((first_errors + second_errors)),"
done
echo
echo "== instructions per admission (valgrind callgrind: Admitter only, no server/TLS; repeatable)"
printf '%-22s %14s %22s\n' body "glibc defaults" "GLIBC_TUNABLES=$TUNABLES"
for body in pod-untouched jobset-minus-one; do
  count() {
    env GLIBC_TUNABLES="$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      build/bench/admission_cost "$D/$body.json" "$1" 2>&1 | sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' | tr -d ,
  }
  if command -v valgrind >/dev/null; then
    plain=$(( ($(count 400 "") - $(count 200 "")) / 200 ))
    tuned=$(( ($(count 400 "$TUNABLES") - $(count 200 "$TUNABLES")) / 200 ))
    printf '%-22s %14d %22d\n' "$body" "$plain" "$tuned"
    json+="\"instructions_${body}\":$tuned,\"instructions_${body}_glibc_defaults\":$plain,"
  fi
done
echo "${json%,}}"
