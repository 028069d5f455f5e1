// A leader-election candidate as its own process, for the handover test: it campaigns for a
// Lease and prints "leading <identity>" / "stopped <identity>" lines. SIGTERM makes it stop and
// release the Lease; SIGKILL (a crash) leaves the Lease to expire.
#include <signal.h>

#include <cstdio>
#include <stop_token>
#include <string>
#include <thread>

#include "kube/config.h"
#include "kube/leader_election.h"

namespace {
std::stop_source g_stop;
void OnSignal(int) { g_stop.request_stop(); }  // request_stop is lock-free for std::stop_source
}  // namespace

int main(int argc, char** argv) {
  using namespace graintune::kube;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s KUBECONFIG NAMESPACE LEASE IDENTITY\n", argv[0]);
    return 2;
  }
  auto config = LoadKubeconfig(argv[1]);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.error().c_str());
    return 1;
  }
  auto client = Client::FromConfig(*config);
  if (!client.ok()) return 1;
  LeaderElectionConfig le{.lease_namespace = argv[2], .lease_name = argv[3], .identity = argv[4],
                          .lease_duration = std::chrono::seconds(4),
                          .renew_deadline = std::chrono::seconds(3),
                          .retry_period = std::chrono::milliseconds(500)};
  if (auto s = ValidateLeaderElection(le); !s.ok()) return 1;
  const std::string id = argv[4];
  LeaderElector elector(*client, le,
                        {.on_started_leading = [&] { std::printf("leading %s\n", id.c_str()); std::fflush(stdout); },
                         .on_stopped_leading = [&] { std::printf("stopped %s\n", id.c_str()); std::fflush(stdout); }});
  struct sigaction sa{};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  elector.Run(g_stop.get_token());
  return 0;
}
