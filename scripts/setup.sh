#!/usr/bin/env bash
# Installs every Debian package that graintune's build, tests and benchmarks need.
# Idempotent: when everything is already installed it only checks and returns.
# Runs as root (CI and the dev machines are root); uses sudo when it is not.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libboost-system-dev      # Boost.Beast / Asio (1.74, the Boost cpprestsdk uses)
  libcpprest-dev                        # HTTP client for the Kubernetes API
  libssl-dev                            # TLS, CA and serving-cert generation
  nlohmann-json3-dev                    # JSON and RFC 6902 patches
  libyaml-cpp-dev                       # MaxText YAML configs, manifests
  prometheus-cpp-dev                    # metric types and text exposition
  libgtest-dev libgmock-dev             # unit tests
  python3                               # small test helpers
  prometheus                            # a real Prometheus for the operator's query-API source test
  clang-14 libclang-rt-14-dev           # fuzz targets: libFuzzer, ASan and UBSan (scripts/fuzz.sh)
  buildah mmdebstrap skopeo             # the image from the Dockerfile, daemonless (scripts/image.sh)
  containerd runc containernetworking-plugins  # the real node of the `node` tests (kubelet's runtime)
  curl                                  # the node tests read the exporter over a pod IP
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
