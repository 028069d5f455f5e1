# One image with graintune's three binaries (graintune-webhook, graintune-operator,
# graintune-exporter); the chart picks the binary with `command`. Not built in this project's
# CI: the development machine has no container engine. Kept deliberately simple.
FROM debian:bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config libboost-dev libboost-system-dev \
      libcpprest-dev libssl-dev nlohmann-json3-dev libyaml-cpp-dev prometheus-cpp-dev \
      libgtest-dev libgmock-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRAINTUNE_SHARED_DIR=/src \
 && ninja -C /build graintune-webhook graintune-operator graintune-exporter

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      libcpprest2.10 libboost-system1.74.0 libssl3 libyaml-cpp0.7 libprometheus-cpp-core1.0 \
      ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/webhook/graintune-webhook /build/operator/graintune-operator \
     /build/operator/graintune-exporter /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/graintune-webhook"]
