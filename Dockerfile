# graintune's images, from one Dockerfile (docs/images.md):
#   graintune (the default, last stage): graintune-webhook, graintune-operator,
#     graintune-exporter (the entrypoint) and graintune-launcher (static: an init container copies
#     it into trainers' pods for a practice lap) on debian:bookworm-slim, run as uid 65532; the chart
#     picks the webhook's and operator's binary with `command`. `docker build -t graintune .` builds it.
#   graintune-test (--target graintune-test): the node tests' trainer stand-ins, trainer_emulator
#     and grain_workers (tests/emulator/), on the same runtime layer (plus the libraries a
#     mounted Python needs, for the MaxText node test).
#   pause (--target pause): the test node's sandbox image, tests/node/pause.c built statically.
# scripts/image.sh builds all three without a daemon (buildah, --pull=never, base images made
# with mmdebstrap) and writes OCI archives. .dockerignore keeps the context to the sources.
FROM debian:bookworm AS toolchain
RUN apt-get update && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config libboost-dev libboost-system-dev \
      libcpprest-dev libssl-dev nlohmann-json3-dev libyaml-cpp-dev prometheus-cpp-dev \
      libgtest-dev libgmock-dev && rm -rf /var/lib/apt/lists/*

FROM toolchain AS build
# Parallel compile jobs: the default suits a 2-core machine; --build-arg JOBS=N for more.
ARG JOBS=2
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
 && ninja -C /build -j"${JOBS}" graintune-webhook graintune-operator graintune-exporter \
      graintune-launcher trainer_emulator grain_workers

FROM toolchain AS pause-build
COPY tests/node/pause.c /pause.c
RUN gcc -static -Os -s -Wall -Wextra -o /pause /pause.c

FROM scratch AS pause
COPY --from=pause-build /pause /pause
USER 65535:65535
ENTRYPOINT ["/pause"]

# The shared libraries the binaries link (ldd), nothing else.
FROM debian:bookworm-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends \
      libcpprest2.10 libssl3 libyaml-cpp0.7 libprometheus-cpp-core1.0 ca-certificates \
 && rm -rf /var/lib/apt/lists/*

FROM runtime AS graintune-test
# The MaxText node test runs this image with a Python built on this Debian release mounted from
# the host (tests/node/maxtext_on_node_test.cc); what that Python's modules load beyond the
# runtime layer: sqlite3 (imported on MaxText's train path, by xprof) and expat (xml).
RUN apt-get update && apt-get install -y --no-install-recommends libsqlite3-0 libexpat1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/tests/emulator/trainer_emulator /build/tests/emulator/grain_workers \
     /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/trainer_emulator"]

# The entrypoint is the exporter: the webhook injects the exporter sidecar with this image and
# no command (the chart's default webhook.exporter.image), while the chart starts the webhook and
# operator with their own `command`.
FROM runtime AS graintune
COPY --from=build /build/webhook/graintune-webhook /build/operator/graintune-operator \
     /build/exporter/graintune-exporter /build/launcher/graintune-launcher /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/graintune-exporter"]
