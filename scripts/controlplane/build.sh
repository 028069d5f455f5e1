#!/usr/bin/env bash
# Builds the real control-plane binaries graintune's integration and e2e tests run against:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, helm, the JobSet
# controller and its CRD, and the kubelet of the harness's one real node (the node tests run
# it beside Debian's containerd and runc, which scripts/setup.sh installs).
#
# Each comes from its Go module at a pinned version, through the Go module proxy, built in a
# throw-away wrapper module (k8s.io/kubernetes needs its staging modules replaced by their
# published versions, as cluster-autoscaler's go.mod does). Outputs go to a cache outside the
# repo keyed by every pinned version, and are reused when present: a warm run costs nothing.
#
# Prints the bin directory on stdout as its last line. Progress goes to stderr.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.8}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
HELM_VERSION="${HELM_VERSION:-v3.20.2}"
JOBSET_VERSION="${JOBSET_VERSION:-v0.10.1}"

CACHE_ROOT="${GRAINTUNE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/graintune}"
KEY="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}_helm-${HELM_VERSION}_jobset-${JOBSET_VERSION}"
OUT="$CACHE_ROOT/controlplane/$KEY"
BIN="$OUT/bin"
mkdir -p "$BIN"

export GOFLAGS="-buildvcs=false -trimpath"
export CGO_ENABLED=0
export GOTOOLCHAIN=local

log() { printf '[controlplane %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Runs "$@" in the background and prints a heartbeat so a person watching knows it is alive.
with_progress() {
  local what="$1"; shift
  local start=$SECONDS
  "$@" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 15 & wait $! || true
    kill -0 "$pid" 2>/dev/null && log "$what: still building ($((SECONDS - start))s)"
  done
  wait "$pid"
  log "$what: done in $((SECONDS - start))s"
}

# wrapper_module DIR MODULE VERSION: a fresh module that requires MODULE@VERSION.
wrapper_module() {
  local dir="$1" module="$2" version="$3"
  rm -rf "$dir"; mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module graintune.dev/controlplane-build

go 1.26

require $module $version
MOD
  printf 'package main\n' >"$dir/doc.go"
}

build_kubernetes() {
  local dir="$OUT/src/kubernetes"
  wrapper_module "$dir" k8s.io/kubernetes "$K8S_VERSION"
  local minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  local staging_version="v0.${K8S_VERSION#v1.}"
  # Replace every staging module with its published version.
  curl -fsS "${GOPROXY_URL:-https://proxy.golang.org}/k8s.io/kubernetes/@v/${K8S_VERSION}.mod" \
    | awk '/=> .\/staging/ {print $1}' | sort -u | while read -r m; do
      echo "replace $m => $m $staging_version" >>"$dir/go.mod"
    done
  (cd "$dir" && go mod download k8s.io/kubernetes && go get "k8s.io/kubernetes@$K8S_VERSION" >/dev/null 2>&1 || true)
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION}"
  ld+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
  ld+=" -X k8s.io/component-base/version.gitTreeState=clean"
  ld+=" -X k8s.io/client-go/pkg/version.gitVersion=${K8S_VERSION}"
  (cd "$dir" && go mod tidy -e >/dev/null 2>&1 || true)
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
    [ -x "$BIN/$cmd" ] && continue
    (cd "$dir" && go get "k8s.io/kubernetes/cmd/$cmd@$K8S_VERSION" >/dev/null 2>&1 || true)
    with_progress "$cmd $K8S_VERSION" \
      bash -c "cd '$dir' && go build -ldflags '$ld' -o '$BIN/$cmd.tmp' k8s.io/kubernetes/cmd/$cmd && mv '$BIN/$cmd.tmp' '$BIN/$cmd'"
  done
}

build_simple() {  # build_simple NAME MODULE VERSION PACKAGE [LDFLAGS]
  local name="$1" module="$2" version="$3" pkg="$4" ld="${5:-}"
  [ -x "$BIN/$name" ] && return 0
  local dir="$OUT/src/$name"
  wrapper_module "$dir" "$module" "$version"
  (cd "$dir" && go get "$pkg@$version" >/dev/null)
  with_progress "$name $version" \
    bash -c "cd '$dir' && go build -ldflags '-s -w $ld' -o '$BIN/$name.tmp' '$pkg' && mv '$BIN/$name.tmp' '$BIN/$name'"
}

fetch_jobset_crd() {
  local crd="$OUT/crds/jobset.x-k8s.io_jobsets.yaml"
  [ -s "$crd" ] && return 0
  mkdir -p "$OUT/crds"
  local src
  src="$(cd "$OUT" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/jobset@$JOBSET_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  cp "$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$crd.tmp"
  mv "$crd.tmp" "$crd"
}

start=$SECONDS
log "cache: $OUT"
build_simple etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3 \
  "-X go.etcd.io/etcd/api/v3/version.GitSHA=${ETCD_VERSION}"
build_kubernetes
build_simple kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok \
  "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION}"
# helm's default Kubernetes version (what `helm template` and `helm lint` assume without a
# cluster) is set at link time, as helm's own release builds set it from their client-go
# (v0.35 for helm v3.20): unset, it is v1.20 and the chart's kubeVersion (>= 1.29) refuses to
# render. A helm built without it (no stamp) is rebuilt.
HELM_KUBE_MINOR=35
[ -f "$BIN/.helm-kube-1.$HELM_KUBE_MINOR" ] || rm -f "$BIN/helm"
helm_ld="-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
for pkg in pkg/chartutil pkg/lint/rules; do
  helm_ld+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$HELM_KUBE_MINOR"
done
build_simple helm helm.sh/helm/v3 "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "$helm_ld"
touch "$BIN/.helm-kube-1.$HELM_KUBE_MINOR"
# The JobSet controller: end-to-end tests fail an attempt and let JobSet restart it.
build_simple jobset-controller sigs.k8s.io/jobset "$JOBSET_VERSION" sigs.k8s.io/jobset \
  "-X sigs.k8s.io/jobset/pkg/version.GitVersion=${JOBSET_VERSION}"
fetch_jobset_crd
rm -rf "$OUT/src"
log "all present in $((SECONDS - start))s"
echo "$BIN"
