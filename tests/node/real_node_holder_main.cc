// real_node_holder: starts a control plane with a real node, runs a pod on it that never ends,
// prints "ready <control plane folder>" once the pod runs, then waits to be killed. The node
// tests SIGKILL it to leave what a killed test run leaves (its kubelet and containerd die with
// it; containerd's shims and their containers do not) and check that the next control plane's
// start sweeps all of it.
//   real_node_holder NODE_TOOL_BIN
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/wait_for.h"
#include "tests/node/node_images.h"

int main(int argc, char** argv) {
  using namespace graintune::testing;
  if (argc != 2) {
    std::fprintf(stderr, "usage: real_node_holder NODE_TOOL_BIN\n");
    return 2;
  }
  graintune::Result<ControlPlaneOptions> options = OptionsFromEnvironment();
  char images[] = "/tmp/graintune-node-images-XXXXXX";
  if (!options.ok() || !::mkdtemp(images)) {
    std::fprintf(stderr, "%s\n", options.ok() ? "no temporary folder" : options.error().c_str());
    return 1;
  }
  graintune::Result<RealNodeOptions> node = TestNodeOptions(argv[1], images);
  if (!node.ok()) return 1;
  options->real_node = *node;
  graintune::Result<std::unique_ptr<ControlPlane>> cp = ControlPlane::Start(*options);
  std::system(("rm -rf " + std::string(images)).c_str());
  if (!cp.ok()) {
    std::fprintf(stderr, "%s\n", cp.error().c_str());
    return 1;
  }
  // Without hostNetwork: the sandbox gets its own network namespace, a mount to sweep.
  const graintune::kube::Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "held"}, {"namespace", "default"}}},
      {"spec",
       {{"nodeSelector", {{"kubernetes.io/hostname", RealNode::kName}}},
        {"containers",
         {{{"name", "held"}, {"image", kToolImage}, {"imagePullPolicy", "Never"},
           {"args", {"sleep", "0"}}}}}}}};
  auto client = (*cp)->AdminClient();
  if (!client->Create(graintune::kube::resources::kPods, "default", pod).ok()) return 1;
  const bool running = WaitFor(
      [&] {
        auto p = client->Get(graintune::kube::resources::kPods, "default", "held");
        return p.ok() && p->value("status", graintune::kube::Json::object()).value("phase", "") ==
                             "Running";
      },
      std::chrono::seconds(60));
  if (!running) {
    auto p = client->Get(graintune::kube::resources::kPods, "default", "held");
    std::fprintf(stderr, "the pod never ran: %s\nkubelet log:\n%s\n",
                 p.ok() ? p->value("status", graintune::kube::Json()).dump().c_str() : "",
                 TailOfFile((*cp)->real_node()->kubelet_log(), 3000).c_str());
    return 1;
  }
  std::printf("ready %s\n", (*cp)->dir().c_str());
  std::fflush(stdout);
  for (;;) ::pause();
}
