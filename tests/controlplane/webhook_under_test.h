// graintune-webhook as a test (or the demo) runs it against the local control plane: the real
// binary with a fresh CA and serving certificate for 127.0.0.1, registered through a real
// MutatingWebhookConfiguration (url + caBundle), and removed again when this object goes away.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/pki.h"
#include "tests/controlplane/control_plane.h"

namespace graintune::testing {

struct WebhookUnderTestOptions {
  std::string binary;                     // path of graintune-webhook
  std::vector<std::string> extra_args;    // e.g. --exclude-namespace
  std::string configuration_name = "graintune";
  bool register_configuration = true;     // false: the caller applies its own (the chart's)
  std::string kubeconfig;                 // empty: the control plane's admin kubeconfig
  std::vector<std::string> env;           // NAME=VALUE for the process (e.g. GLIBC_TUNABLES)
};

class WebhookUnderTest {
 public:
  // Starts the binary with the control plane's admin kubeconfig, waits for /readyz (its caches
  // synced), then registers it for CREATE of Jobs, JobSets and Pods.
  static Result<std::unique_ptr<WebhookUnderTest>> Start(ControlPlane& cp,
                                                         const WebhookUnderTestOptions& options);
  ~WebhookUnderTest();

  int port() const { return port_; }
  int health_port() const { return health_port_; }  // /healthz, /readyz, /metrics over HTTP
  const std::string& ca_pem() const { return ca_pem_; }
  ChildProcess& process() { return process_; }
  std::string Log() const { return TailOfFile(process_.log_path(), 4000); }
  // Issues a new serving certificate from the same CA, with subject CN `common_name` (for
  // telling certificates apart) and SAN 127.0.0.1, and swaps the files in as a Secret volume
  // does: written aside, then renamed over the old ones.
  Status RotateCertificate(const std::string& common_name);

 private:
  WebhookUnderTest() = default;
  ControlPlane* cp_ = nullptr;
  std::string name_;
  int port_ = 0;
  int health_port_ = 0;
  std::string ca_pem_;
  server::CertificateAuthority ca_;
  std::string cert_base_;  // the serving pair is cert_base_ + ".crt" / ".key"
  ChildProcess process_;
};

// The MutatingWebhookConfiguration graintune registers (same rules as the Helm chart):
// CREATE of batch/v1 jobs, jobset.x-k8s.io/v1alpha2 jobsets and v1 pods, failurePolicy Ignore,
// a short timeout, sideEffects None, reinvocation IfNeeded, kube-system excluded.
kube::Json WebhookConfiguration(const std::string& name, const std::string& url,
                                const std::string& ca_pem);

}  // namespace graintune::testing
