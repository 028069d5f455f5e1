// A real Kubernetes control plane on loopback for integration and end-to-end tests, and for the
// local demo: etcd and kube-apiserver (RBAC on, client-certificate admin, service-account
// signing keys, random free ports), optionally kube-controller-manager and kube-scheduler (so
// Jobs make Pods and Pods get scheduled) and KWOK (so Pods land on fake TPU Nodes and "run",
// with pod IPs inside 127.0.0.0/8 so traffic to them stays on this machine).
//
// The binaries come from scripts/controlplane/build.sh (pinned Go module versions, cached
// outside the repository); scripts/test.sh exports their folder as GRAINTUNE_CONTROLPLANE_BIN.
//
// Contract: Start() returns a ready control plane (readyz ok, CRDs established) or an error that
// quotes the failing component's log. Everything started is stopped by the destructor, and is
// killed by the kernel if the process that started it dies (see ChildProcess). State lives in a
// temporary folder that is removed on a clean stop; folders of dead runs are swept at start
// (with what their real node left: containers, mounts, cgroups, host settings).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/config.h"
#include "server/pki.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/real_node.h"

namespace graintune::testing {

struct ControlPlaneOptions {
  std::string bin_dir;                 // etcd, kube-apiserver, kube-controller-manager, ...
  std::vector<std::string> crd_files;  // applied (and waited for) once the API server is ready
  bool controllers = false;            // kube-controller-manager + kube-scheduler
  bool kwok = false;                   // KWOK managing Nodes annotated kwok.x-k8s.io/node=fake
  bool jobset = false;                 // the JobSet controller and its defaulting webhook
  std::string kwok_stages_file;        // KWOK Stage documents (required with kwok)
  // KWOK's pod IPs. Empty: a /16 of 127.64.0.0-127.127.255.255 that no other control plane on
  // this machine holds (a lock file per /16 in the temp folder, held while this one runs), so
  // control planes of tests run side by side never hand out the same pod IP, and the exporters
  // bound there never collide.
  std::string kwok_pod_cidr;
  // Flags appended to a component's own (a benchmark's audit log, client rate limits, more KWOK
  // configuration files); empty for tests.
  std::vector<std::string> apiserver_args, controller_manager_args, scheduler_args, kwok_args;
  // One real node (real_node.h), started last; implies `controllers`. The API server then
  // authorizes with Node,RBAC, admits with NodeRestriction and calls kubelets with a client
  // certificate; without it the API server's flags are as before.
  std::optional<RealNodeOptions> real_node;
};

class ControlPlane {
 public:
  static Result<std::unique_ptr<ControlPlane>> Start(const ControlPlaneOptions& options);
  ~ControlPlane();

  const std::string& dir() const { return dir_; }
  // Leaves dir() (every component's log) on disk at shutdown, for a failure to be read after.
  void KeepDir() { keep_dir_ = true; }
  const std::string& kubeconfig_path() const { return kubeconfig_path_; }
  const kube::ClientConfig& admin_config() const { return admin_; }
  std::shared_ptr<kube::Client> AdminClient() const;
  const server::CertificateAuthority& ca() const { return ca_; }
  const std::string& bin_dir() const { return options_.bin_dir; }
  // The real node, or nullptr when the options asked for none.
  RealNode* real_node() const { return real_node_.get(); }

  // Stops kube-apiserver (etcd keeps the data) and starts it again on the same port.
  Status RestartApiServer();
  Status StopApiServer();
  Status StartApiServer();
  // Stops etcd (the API server stays up and answers errors), and starts it again on its data,
  // waiting until the API server is ready.
  Status StopEtcd();
  Status ResumeEtcd();

  // A kubeconfig-equivalent for a service account (created if missing), authenticated with a
  // token from the TokenRequest API. Also written as a kubeconfig file at the returned path.
  Result<kube::ClientConfig> ServiceAccountConfig(const std::string& ns, const std::string& name,
                                                  std::string* kubeconfig_path = nullptr);

  // Runs kubectl against this control plane; the combined output, or an error holding it.
  Result<std::string> Kubectl(const std::vector<std::string>& args,
                              const std::string& stdin_text = "") const;

  // Runs the cached helm against this control plane, with its own cache/config folders: its
  // standard output (manifests for `template`), or an error holding stdout and stderr. stderr
  // stays apart because helm warns there (e.g. about the chart's crds symlink).
  Result<std::string> Helm(const std::vector<std::string>& args) const;

  // Applies the manifests in the files and waits until CRDs among them are Established.
  Status ApplyCrds(const std::vector<std::string>& files);

 private:
  ControlPlane() = default;
  Status WriteCertificates();
  Status StartEtcd();
  Status StartControllers();
  Status PickPodCidr();
  Status StartKwok();
  Status StartJobSetController();
  Status WaitReady(std::chrono::seconds timeout);
  void Shutdown();

  ControlPlaneOptions options_;
  std::string dir_;
  bool keep_dir_ = false;
  int pod_cidr_lock_ = -1;  // the lock file held for kwok_pod_cidr's /16, when picked here
  std::string kubeconfig_path_;
  server::CertificateAuthority ca_;
  kube::ClientConfig admin_;
  int etcd_port_ = 0, etcd_peer_port_ = 0, api_port_ = 0;
  ChildProcess etcd_, apiserver_, controller_manager_, scheduler_, kwok_, jobset_;
  std::unique_ptr<RealNode> real_node_;
};

// Writes a kubeconfig file for a client configuration.
Status WriteKubeconfig(const kube::ClientConfig& config, const std::string& path);

// Options from the environment: GRAINTUNE_CONTROLPLANE_BIN (the bin folder of build.sh's
// cache) and the CRDs beside it (crds/). Error when the variable is unset or the folder lacks a
// binary.
Result<ControlPlaneOptions> OptionsFromEnvironment();

// The object the cluster's admission (graintune's webhook among it) would make of `manifest`
// (kubectl apply --dry-run=server: nothing is stored); nullopt when it cannot be had. The
// webhook learns of a policy through its watch, so a caller polls this to see one take effect.
std::optional<kube::Json> AdmittedAsDryRun(ControlPlane& cp, const std::string& manifest);

}  // namespace graintune::testing
