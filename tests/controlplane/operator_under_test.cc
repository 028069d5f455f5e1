#include "tests/controlplane/operator_under_test.h"

namespace graintune::testing {

Result<ChildProcess> StartOperatorUnderTest(ControlPlane& cp, const std::string& binary,
                                            const std::string& identity, int* metrics_port) {
  Result<int> port = FreeLoopbackPort();
  if (!port.ok()) return port.status();
  if (metrics_port) *metrics_port = *port;
  return ChildProcess::Spawn({binary, "--kubeconfig", cp.kubeconfig_path(), "--identity", identity,
                              "--resync-period-ms", "500", "--status-progress-interval-ms", "1000", "--lease-duration-ms", "4000",
                              "--renew-deadline-ms", "3000", "--retry-period-ms", "500",
                              "--bind-address", "127.0.0.1", "--port", std::to_string(*port)},
                             cp.dir() + "/operator-" + identity + ".log");
}

}  // namespace graintune::testing
