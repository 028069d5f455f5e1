// spn_holder: the project's real node (kubelet + containerd + runc) with graintune helm-installed
// from scripts/image.sh's archives, exactly as tests/node/chart_on_node.cc's HelmInstallOnNode
// does, except webhook.exporter.shareProcessNamespace = MODE. Prints
//   ready <control plane dir> <kubeconfig> <node dir>
// then waits for SIGTERM/SIGINT and stops everything (ControlPlane's destructor restores the host).
//   spn_holder true|false
#include <signal.h>

#include <cstdio>
#include <string>

#include "tests/controlplane/child_process.h"
#include "tests/controlplane/control_plane.h"
#include "tests/node/chart_on_node.h"
#include "tests/node/node_test_support.h"

using namespace graintune;
using namespace graintune::testing;

int main(int argc, char** argv) {
  if (argc != 2 || (std::string(argv[1]) != "true" && std::string(argv[1]) != "false")) {
    std::fprintf(stderr, "usage: spn_holder true|false\n");
    return 2;
  }
  const std::string mode = argv[1];
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  Result<ControlPlaneOptions> env = NodeEnvironment();
  if (!env.ok()) { std::fprintf(stderr, "%s\n", env.error().c_str()); return 1; }
  Result<BuiltImages> images = BuiltImagesFromEnvironment();
  if (!images.ok()) { std::fprintf(stderr, "%s\n", images.error().c_str()); return 1; }
  Result<std::unique_ptr<ControlPlane>> started = ControlPlane::Start(WithChartImagesOnNode(*env, *images));
  if (!started.ok()) { std::fprintf(stderr, "start: %s\n", started.error().c_str()); return 1; }
  std::unique_ptr<ControlPlane> cp = std::move(started).value();
  const std::string& server = cp->admin_config().server;
  const std::string api_port = server.substr(server.rfind(':') + 1);
  const std::string ref = images->ref;
  Result<int> wp = FreeLoopbackPort(), wpp = FreeLoopbackPort(), opp = FreeLoopbackPort();
  if (!wp.ok() || !wpp.ok() || !opp.ok()) { std::fprintf(stderr, "no free port\n"); return 1; }
  const std::string api_env = R"([{"name":"KUBERNETES_SERVICE_HOST","value":"127.0.0.1"},)"
                              R"({"name":"KUBERNETES_SERVICE_PORT","value":")" + api_port + R"("}])";
  Result<std::string> helm = cp->Helm(
      {"install", kRelease, GRAINTUNE_CHART_DIR, "--namespace", kReleaseNamespace,
       "--create-namespace", "--wait", "--timeout", "180s",
       "--set", "image.repository=" + ref.substr(0, ref.rfind(':')), "--set", "image.tag=" + ref.substr(ref.rfind(':') + 1),
       "--set", "image.pullPolicy=IfNotPresent", "--set", "webhook.replicas=1", "--set", "operator.replicas=1",
       "--set", "webhook.hostNetwork=true", "--set", "operator.hostNetwork=true",
       "--set", "webhook.port=" + std::to_string(*wp), "--set", "webhook.probePort=" + std::to_string(*wpp),
       "--set", "operator.probePort=" + std::to_string(*opp),
       "--set", "webhook.exporter.shareProcessNamespace=" + mode,
       "--set-json", "webhook.extraEnv=" + api_env, "--set-json", "operator.extraEnv=" + api_env});
  if (!helm.ok()) {
    std::fprintf(stderr, "helm install: %s\nkubelet:\n%s\n", helm.error().c_str(),
                 TailOfFile(cp->real_node()->kubelet_log(), 3000).c_str());
    return 1;
  }
  std::printf("ready %s %s %s\n", cp->dir().c_str(), cp->kubeconfig_path().c_str(), cp->real_node()->dir().c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  std::printf("stopping on signal %d\n", sig);
  std::fflush(stdout);
  cp.reset();
  std::printf("stopped\n");
  return 0;
}
