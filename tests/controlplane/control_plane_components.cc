// The control plane's components beyond etcd and the API server: controller-manager and
// scheduler, KWOK for the fake TPU nodes, and the JobSet controller.
#include "tests/controlplane/control_plane.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "kube/base64.h"
#include "kube/backoff.h"

namespace graintune::testing {

namespace fs = std::filesystem;

Status ControlPlane::StartControllers() {
  const std::string kc = kubeconfig_path_;
  const auto with = [](std::vector<std::string> argv, const std::vector<std::string>& extra) {
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  Result<ChildProcess> kcm = ChildProcess::Spawn(with(
      {options_.bin_dir + "/kube-controller-manager", "--kubeconfig", kc,
       "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
       "--bind-address", "127.0.0.1", "--secure-port", "0", "--leader-elect=false",
       "--use-service-account-credentials=false", "--root-ca-file", dir_ + "/ca.crt",
       "--service-account-private-key-file", dir_ + "/sa.key",
       // KWOK nodes do not heartbeat; without this the node lifecycle controller would taint
       // and evict everything after its grace period.
       "--controllers", "*,-node-lifecycle-controller,-node-ipam-controller",
       "--concurrent-job-syncs", "5",
       // Its FlexVolume prober creates this folder; the default is under /usr/libexec, which
       // would outlive the control plane on the host.
       "--flex-volume-plugin-dir", dir_ + "/flexvolume", "--v=1"}, options_.controller_manager_args),
      dir_ + "/kube-controller-manager.log");
  if (!kcm.ok()) return kcm.status();
  controller_manager_ = std::move(kcm).value();
  Result<ChildProcess> sched = ChildProcess::Spawn(with(
      {options_.bin_dir + "/kube-scheduler", "--kubeconfig", kc,
       "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
       "--bind-address", "127.0.0.1", "--secure-port", "0", "--leader-elect=false", "--v=1"},
      options_.scheduler_args), dir_ + "/kube-scheduler.log");
  if (!sched.ok()) return sched.status();
  scheduler_ = std::move(sched).value();
  // The default service account appears once the controller manager runs: pods need it.
  Result<std::string> sa = Status::Error("not tried");
  for (int i = 0; i < 150; ++i) {
    sa = Kubectl({"get", "serviceaccount", "default", "-n", "default", "-o", "name"});
    if (sa.ok()) return Status::Ok();
    if (!controller_manager_.Running())
      return Status::Error("kube-controller-manager exited:\n" +
                           TailOfFile(controller_manager_.log_path()));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::Error("the default service account never appeared: " + sa.error());
}

Status ControlPlane::PickPodCidr() {
  if (!options_.kwok_pod_cidr.empty()) return Status::Ok();
  for (int second = 64; second < 128; ++second) {
    const std::string cidr = "127." + std::to_string(second) + ".0.0/16";
    const std::string lock = std::filesystem::temp_directory_path().string() + "/graintune-pod-cidr-127." +
                             std::to_string(second) + ".lock";
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      pod_cidr_lock_ = fd;
      options_.kwok_pod_cidr = cidr;
      return Status::Ok();
    }
    ::close(fd);
  }
  return Status::Error("every pod CIDR of 127.64.0.0/10 is held by another control plane on this machine");
}

Status ControlPlane::StartKwok() {
  if (options_.kwok_stages_file.empty()) return Status::Error("KWOK needs a stages file");
  if (Status s = PickPodCidr(); !s.ok()) return s;
  Result<int> port = FreeLoopbackPort();
  if (!port.ok()) return port.status();
  std::vector<std::string> argv = {
      options_.bin_dir + "/kwok", "--kubeconfig", kubeconfig_path_,
      "--config", options_.kwok_stages_file, "--manage-all-nodes=false",
      "--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake",
      "--cidr", options_.kwok_pod_cidr, "--node-ip", "127.0.0.1",
      "--server-address", "127.0.0.1:" + std::to_string(*port)};
  argv.insert(argv.end(), options_.kwok_args.begin(), options_.kwok_args.end());
  Result<ChildProcess> p = ChildProcess::Spawn(argv, dir_ + "/kwok.log");
  if (!p.ok()) return p.status();
  kwok_ = std::move(p).value();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (!kwok_.Running()) return Status::Error("kwok exited:\n" + TailOfFile(kwok_.log_path()));
  return Status::Ok();
}

Status ControlPlane::StartJobSetController() {
  // JobSet's manager serves its defaulting webhook with certificates from certDir; it is
  // registered by URL so the API server reaches it on loopback.
  const std::string certs = dir_ + "/jobset-certs";
  fs::create_directories(certs);
  Result<server::SignedCertificate> cert = server::IssueCertificate(
      ca_, {.common_name = "jobset-webhook", .ip_addresses = {"127.0.0.1"}, .server = true,
            .valid_days = 2});
  if (!cert.ok()) return cert.status();
  for (Status s : {WriteFile(certs + "/tls.crt", cert->cert_pem),
                   WriteFile(certs + "/tls.key", cert->key_pem)})
    if (!s.ok()) return s;
  Result<int> webhook_port = FreeLoopbackPort(), health_port = FreeLoopbackPort();
  if (!webhook_port.ok() || !health_port.ok()) return Status::Error("no free loopback ports");
  const std::string config = dir_ + "/jobset-config.yaml";
  if (Status s = WriteFile(config,
          "apiVersion: config.jobset.x-k8s.io/v1alpha1\nkind: Configuration\n"
          "internalCertManagement: {enable: false}\nleaderElection: {leaderElect: false}\n"
          "webhook: {port: " + std::to_string(*webhook_port) + ", host: 127.0.0.1, certDir: " +
          certs + "}\nmetrics: {bindAddress: \"0\"}\n"
          "health: {healthProbeBindAddress: \"127.0.0.1:" + std::to_string(*health_port) + "\"}\n");
      !s.ok())
    return s;
  Result<ChildProcess> p = ChildProcess::Spawn(
      {options_.bin_dir + "/jobset-controller", "--config", config, "--kubeconfig",
       kubeconfig_path_},
      dir_ + "/jobset-controller.log");
  if (!p.ok()) return p.status();
  jobset_ = std::move(p).value();
  kube::Json hook = {
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "MutatingWebhookConfiguration"},
      {"metadata", {{"name", "jobset-defaulting"}}},
      {"webhooks",
       {{{"name", "mjobset.kb.io"},
         {"admissionReviewVersions", {"v1"}},
         {"clientConfig",
          {{"url", "https://127.0.0.1:" + std::to_string(*webhook_port) +
                       "/mutate-jobset-x-k8s-io-v1alpha2-jobset"},
           {"caBundle", kube::Base64Encode(ca_.cert_pem)}}},
         {"rules", {{{"apiGroups", {"jobset.x-k8s.io"}}, {"apiVersions", {"v1alpha2"}},
                     {"operations", {"CREATE", "UPDATE"}}, {"resources", {"jobsets"}}}}},
         {"failurePolicy", "Fail"},
         {"sideEffects", "None"},
         {"timeoutSeconds", 10}}}}};
  // Wait until the webhook answers before registering it with failurePolicy Fail.
  kube::ClientConfig probe;
  probe.server = "https://127.0.0.1:" + std::to_string(*webhook_port);
  probe.ca_pem = ca_.cert_pem;
  auto client = kube::Client::FromConfig(probe);
  if (!client.ok()) return client.error().ToStatus();
  for (int i = 0; i < 300; ++i) {
    if (!jobset_.Running())
      return Status::Error("jobset-controller exited:\n" + TailOfFile(jobset_.log_path()));
    kube::ApiResult<std::string> r = (*client)->GetRaw("/mutate-jobset-x-k8s-io-v1alpha2-jobset");
    // Any HTTP answer (even an error for a GET) means the TLS server is up.
    if (r.ok() || r.error().code != 0) {
      kube::ApiResult<kube::Json> reg =
          AdminClient()->Apply(kube::resources::kMutatingWebhookConfigurations, "", hook);
      return reg.ok() ? Status::Ok() : reg.error().ToStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Error("jobset-controller's webhook never answered:\n" +
                       TailOfFile(jobset_.log_path()));
}

}  // namespace graintune::testing
