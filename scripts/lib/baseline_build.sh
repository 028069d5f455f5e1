# Sourced by the benchmarks that can run an earlier revision beside this one
# (bench-scale.sh, bench-webhook-caches.sh).

# baseline_build REV: prints ~/.cache/graintune/bench-baseline-<short REV>, where REV's
# graintune-webhook and graintune-operator are built (RelWithDebInfo, from `git archive`, so
# uncommitted changes never leak in), building them the first time.
baseline_build() {
  local rev dir
  rev="$(git rev-parse --short "$1")"
  dir="$HOME/.cache/graintune/bench-baseline-$rev"
  if [ ! -x "$dir/build/webhook/graintune-webhook" ] || [ ! -x "$dir/build/operator/graintune-operator" ]; then
    echo "== building $rev's webhook and operator into $dir" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    git archive "$rev" | tar -x -C "$dir"
    cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    ninja -C "$dir/build" graintune-webhook graintune-operator >/dev/null
  fi
  echo "$dir"
}
