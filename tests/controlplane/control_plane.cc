#include "tests/controlplane/control_plane.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kube/base64.h"
#include "kube/backoff.h"

namespace graintune::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kDirPrefix[] = "graintune-cp-";


std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Removes the state folders of earlier runs whose process is gone (killed before cleaning up).
void SweepStaleDirs() {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kDirPrefix, 0) != 0) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(name.c_str() + sizeof(kDirPrefix) - 1));
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    // A mount left under the folder could lead outside it: never remove through one.
    if (SweepDeadRealNode(e.path().string())) fs::remove_all(e.path(), ec);
  }
}

Status NeedBinary(const std::string& bin_dir, const std::string& name) {
  if (::access((bin_dir + "/" + name).c_str(), X_OK) != 0)
    return Status::Error("'" + bin_dir + "/" + name +
                         "' is missing; build the control plane with "
                         "scripts/controlplane/build.sh");
  return Status::Ok();
}

}  // namespace

Status WriteKubeconfig(const kube::ClientConfig& c, const std::string& path) {
  std::string user = "  user:\n";
  if (!c.client_cert_pem.empty())
    user += "    client-certificate-data: " + kube::Base64Encode(c.client_cert_pem) + "\n" +
            "    client-key-data: " + kube::Base64Encode(c.client_key_pem) + "\n";
  if (!c.token.empty()) user += "    token: " + c.token + "\n";
  std::string text =
      "apiVersion: v1\nkind: Config\ncurrent-context: graintune-test\n"
      "clusters:\n- name: graintune-test\n  cluster:\n    server: " + c.server + "\n" +
      "    certificate-authority-data: " + kube::Base64Encode(c.ca_pem) + "\n" +
      "users:\n- name: graintune-test\n" + user +
      "contexts:\n- name: graintune-test\n  context:\n    cluster: graintune-test\n"
      "    user: graintune-test\n    namespace: " + c.default_namespace + "\n";
  return WriteFile(path, text);
}

Result<ControlPlaneOptions> OptionsFromEnvironment() {
  const char* bin = std::getenv("GRAINTUNE_CONTROLPLANE_BIN");
  if (!bin || !*bin)
    return Status::Error("GRAINTUNE_CONTROLPLANE_BIN is not set (scripts/test.sh sets it after "
                         "building the control plane with scripts/controlplane/build.sh)");
  ControlPlaneOptions o;
  o.bin_dir = bin;
  for (const char* name : {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
                           "kwok", "jobset-controller"})
    if (Status s = NeedBinary(o.bin_dir, name); !s.ok()) return s;
  const fs::path crds = fs::path(o.bin_dir).parent_path() / "crds";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(crds, ec))
    if (e.path().extension() == ".yaml") o.crd_files.push_back(e.path().string());
  return o;
}

Result<std::unique_ptr<ControlPlane>> ControlPlane::Start(const ControlPlaneOptions& options) {
  SweepStaleDirs();
  std::unique_ptr<ControlPlane> cp(new ControlPlane());
  cp->options_ = options;
  if (options.real_node) cp->options_.controllers = true;
  char tmpl[256];
  std::snprintf(tmpl, sizeof(tmpl), "%s/%s%d-XXXXXX", fs::temp_directory_path().c_str(),
                kDirPrefix, static_cast<int>(::getpid()));
  if (!::mkdtemp(tmpl)) return Status::Error("cannot create a temporary folder");
  cp->dir_ = tmpl;
  for (Status s : {cp->WriteCertificates(), cp->StartEtcd(), cp->StartApiServer()})
    if (!s.ok()) return s;
  if (Status s = cp->ApplyCrds(options.crd_files); !s.ok()) return s;
  if (cp->options_.controllers)
    if (Status s = cp->StartControllers(); !s.ok()) return s;
  if (options.kwok)
    if (Status s = cp->StartKwok(); !s.ok()) return s;
  if (options.jobset)
    if (Status s = cp->StartJobSetController(); !s.ok()) return s;
  if (options.real_node) {
    Result<std::unique_ptr<RealNode>> node = RealNode::Start(*options.real_node, *cp);
    if (!node.ok()) return node.status();
    cp->real_node_ = std::move(node).value();
  }
  return cp;
}

ControlPlane::~ControlPlane() { Shutdown(); }

void ControlPlane::Shutdown() {
  // No API calls here: everything stops, and this may run at process exit.
  real_node_.reset();
  jobset_.Stop(std::chrono::seconds(3));
  kwok_.Stop(std::chrono::seconds(3));
  scheduler_.Stop(std::chrono::seconds(3));
  controller_manager_.Stop(std::chrono::seconds(3));
  apiserver_.Stop(std::chrono::seconds(10));
  etcd_.Stop(std::chrono::seconds(5));
  if (pod_cidr_lock_ >= 0) ::close(pod_cidr_lock_);
  pod_cidr_lock_ = -1;
  if (!dir_.empty() && !keep_dir_ && !std::getenv("GRAINTUNE_KEEP_CONTROLPLANE_DIR")) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

std::shared_ptr<kube::Client> ControlPlane::AdminClient() const {
  auto c = kube::Client::FromConfig(admin_);
  return c.ok() ? *c : nullptr;
}

Status ControlPlane::WriteCertificates() {
  Result<server::CertificateAuthority> ca = server::GenerateCertificateAuthority("graintune-test-ca", 2);
  if (!ca.ok()) return ca.status();
  ca_ = *ca;
  Result<server::SignedCertificate> serving = server::IssueCertificate(
      ca_, {.common_name = "kube-apiserver",
            .dns_names = {"localhost", "kubernetes", "kubernetes.default.svc"},
            .ip_addresses = {"127.0.0.1"}, .server = true, .valid_days = 2});
  if (!serving.ok()) return serving.status();
  Result<server::SignedCertificate> admin = server::IssueCertificate(
      ca_, {.common_name = "graintune-admin", .organizations = {"system:masters"}, .valid_days = 2});
  if (!admin.ok()) return admin.status();
  Result<server::KeyPair> sa = server::GenerateKeyPair();
  if (!sa.ok()) return sa.status();
  if (options_.real_node) {
    // How the API server proves itself to kubelets (logs, exec, port-forward).
    Result<server::SignedCertificate> kubelet_client = server::IssueCertificate(
        ca_, {.common_name = "kube-apiserver-kubelet-client", .organizations = {"system:masters"},
              .valid_days = 2});
    if (!kubelet_client.ok()) return kubelet_client.status();
    for (Status s : {WriteFile(dir_ + "/apiserver-kubelet-client.crt", kubelet_client->cert_pem),
                     WriteFile(dir_ + "/apiserver-kubelet-client.key", kubelet_client->key_pem)})
      if (!s.ok()) return s;
  }
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{{"ca.crt", ca_.cert_pem},
                                                        {"apiserver.crt", serving->cert_pem},
                                                        {"apiserver.key", serving->key_pem},
                                                        {"sa.key", sa->private_pem},
                                                        {"sa.pub", sa->public_pem}})
    if (Status s = WriteFile(dir_ + "/" + name, text); !s.ok()) return s;

  Result<int> etcd = FreeLoopbackPort(), peer = FreeLoopbackPort(), api = FreeLoopbackPort();
  if (!etcd.ok() || !peer.ok() || !api.ok()) return Status::Error("no free loopback ports");
  etcd_port_ = *etcd;
  etcd_peer_port_ = *peer;
  api_port_ = *api;
  admin_.server = "https://127.0.0.1:" + std::to_string(api_port_);
  admin_.ca_pem = ca_.cert_pem;
  admin_.client_cert_pem = admin->cert_pem;
  admin_.client_key_pem = admin->key_pem;
  kubeconfig_path_ = dir_ + "/kubeconfig";
  return WriteKubeconfig(admin_, kubeconfig_path_);
}

Status ControlPlane::StartEtcd() {
  const std::string client = "http://127.0.0.1:" + std::to_string(etcd_port_);
  const std::string peer = "http://127.0.0.1:" + std::to_string(etcd_peer_port_);
  Result<ChildProcess> p = ChildProcess::Spawn(
      {options_.bin_dir + "/etcd", "--data-dir", dir_ + "/etcd", "--name", "graintune-test",
       "--listen-client-urls", client, "--advertise-client-urls", client,
       "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
       "--initial-cluster", "graintune-test=" + peer,
       // Test data need not survive a power cut; fsync dominates etcd's latency on CI disks.
       "--unsafe-no-fsync", "--log-level", "warn"},
      dir_ + "/etcd.log");
  if (!p.ok()) return p.status();
  etcd_ = std::move(p).value();
  return Status::Ok();
}

Status ControlPlane::StartApiServer() {
  std::vector<std::string> argv = {options_.bin_dir + "/kube-apiserver",
       "--etcd-servers", "http://127.0.0.1:" + std::to_string(etcd_port_),
       "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
       "--secure-port", std::to_string(api_port_),
       "--tls-cert-file", dir_ + "/apiserver.crt", "--tls-private-key-file", dir_ + "/apiserver.key",
       "--client-ca-file", dir_ + "/ca.crt",
       "--service-account-key-file", dir_ + "/sa.pub",
       "--service-account-signing-key-file", dir_ + "/sa.key",
       "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
       "--authorization-mode", options_.real_node ? "Node,RBAC" : "RBAC",
       "--service-cluster-ip-range", "10.96.0.0/16",
       "--allow-privileged=true", "--profiling=false", "--v=1",
       // New Nodes get a not-ready taint that only the node lifecycle controller lifts; that
       // controller is off (KWOK nodes do not heartbeat), so the taint is not added either.
       "--disable-admission-plugins", "TaintNodesByCondition"};
  if (options_.real_node)
    argv.insert(argv.end(),
                {"--enable-admission-plugins", "NodeRestriction",
                 // Webhooks and aggregated APIs behind a Service are dialled at an endpoint's
                 // address: there is no kube-proxy to route a ClusterIP.
                 "--enable-aggregator-routing=true",
                 "--kubelet-client-certificate", dir_ + "/apiserver-kubelet-client.crt",
                 "--kubelet-client-key", dir_ + "/apiserver-kubelet-client.key",
                 "--kubelet-certificate-authority", dir_ + "/ca.crt"});
  argv.insert(argv.end(), options_.apiserver_args.begin(), options_.apiserver_args.end());
  Result<ChildProcess> p = ChildProcess::Spawn(argv, dir_ + "/kube-apiserver.log");
  if (!p.ok()) return p.status();
  apiserver_ = std::move(p).value();
  return WaitReady(std::chrono::seconds(90));
}

Status ControlPlane::StopApiServer() {
  apiserver_.Stop(std::chrono::seconds(10));
  return Status::Ok();
}

Status ControlPlane::StopEtcd() {
  etcd_.Stop(std::chrono::seconds(10));
  return Status::Ok();
}

Status ControlPlane::ResumeEtcd() {
  if (Status s = StartEtcd(); !s.ok()) return s;
  return WaitReady(std::chrono::seconds(90));
}

Status ControlPlane::RestartApiServer() {
  if (Status s = StopApiServer(); !s.ok()) return s;
  return StartApiServer();
}

Status ControlPlane::WaitReady(std::chrono::seconds timeout) {
  std::shared_ptr<kube::Client> client = AdminClient();
  if (!client) return Status::Error("cannot build a client for the admin configuration");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!etcd_.Running())
      return Status::Error("etcd exited:\n" + TailOfFile(etcd_.log_path()));
    if (!apiserver_.Running())
      return Status::Error("kube-apiserver exited:\n" + TailOfFile(apiserver_.log_path()));
    kube::ApiResult<std::string> ready = client->GetRaw("/readyz");
    if (ready.ok() && *ready == "ok") return Status::Ok();
    last = ready.ok() ? *ready : ready.error().ToString();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::Error("kube-apiserver not ready after " + std::to_string(timeout.count()) +
                       " s (" + last.substr(0, 300) + "); log:\n" +
                       TailOfFile(apiserver_.log_path()));
}

Status ControlPlane::ApplyCrds(const std::vector<std::string>& files) {
  if (files.empty()) return Status::Ok();
  std::vector<std::string> args = {"apply", "--server-side", "--force-conflicts"};
  for (const std::string& f : files) {
    args.push_back("-f");
    args.push_back(f);
  }
  Result<std::string> applied = Kubectl(args);
  if (!applied.ok()) return applied.status();
  // A CRD has no conditions for a moment after creation, which `kubectl wait` reports as an
  // error rather than waiting; try again briefly.
  Result<std::string> established = Status::Error("not tried");
  for (int i = 0; i < 50; ++i) {
    established = Kubectl({"wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"});
    if (established.ok()) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return established.status();
}

Result<kube::ClientConfig> ControlPlane::ServiceAccountConfig(const std::string& ns,
                                                              const std::string& name,
                                                              std::string* kubeconfig_path) {
  std::shared_ptr<kube::Client> client = AdminClient();
  kube::Json sa = {{"apiVersion", "v1"},
                   {"kind", "ServiceAccount"},
                   {"metadata", {{"name", name}, {"namespace", ns}}}};
  kube::ApiResult<kube::Json> created = client->Create(kube::resources::kServiceAccounts, ns, sa);
  if (!created.ok() && !created.error().IsAlreadyExists()) return created.error().ToStatus();
  kube::ApiResult<kube::Json> token = client->CreateSubresource(
      kube::resources::kServiceAccounts, ns, name, "token",
      {{"apiVersion", "authentication.k8s.io/v1"},
       {"kind", "TokenRequest"},
       {"spec", {{"expirationSeconds", 3600}}}});
  if (!token.ok()) return token.error().ToStatus();
  kube::ClientConfig c;
  c.server = admin_.server;
  c.ca_pem = admin_.ca_pem;
  c.token = token->value("status", kube::Json::object()).value("token", "");
  c.default_namespace = ns;
  if (c.token.empty()) return Status::Error("TokenRequest for " + ns + "/" + name + " gave no token");
  const std::string path = dir_ + "/kubeconfig-" + ns + "-" + name;
  if (Status s = WriteKubeconfig(c, path); !s.ok()) return s;
  if (kubeconfig_path) *kubeconfig_path = path;
  return c;
}

Result<std::string> ControlPlane::Kubectl(const std::vector<std::string>& args,
                                          const std::string& stdin_text) const {
  std::string cmd = "kubectl --kubeconfig " + ShellQuote(kubeconfig_path_);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  std::string input_file;
  if (!stdin_text.empty()) {
    input_file = dir_ + "/kubectl-stdin-" + std::to_string(std::rand());
    if (Status s = WriteFile(input_file, stdin_text); !s.ok()) return s;
    cmd += " < " + ShellQuote(input_file);
  }
  cmd += " 2>&1";
  Result<std::string> out = RunShell(cmd, "kubectl " + (args.empty() ? "" : args[0]));
  if (!input_file.empty()) ::unlink(input_file.c_str());
  return out;
}

Result<std::string> ControlPlane::Helm(const std::vector<std::string>& args) const {
  std::string cmd = "HELM_CACHE_HOME=" + ShellQuote(dir_ + "/helm/cache") +
                    " HELM_CONFIG_HOME=" + ShellQuote(dir_ + "/helm/config") +
                    " HELM_DATA_HOME=" + ShellQuote(dir_ + "/helm/data") + " " +
                    ShellQuote(bin_dir() + "/helm") + " --kubeconfig " + ShellQuote(kubeconfig_path_);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  const std::string err = dir_ + "/helm-stderr-" + std::to_string(std::rand());
  cmd += " 2>" + ShellQuote(err);
  Result<std::string> out = RunShell(cmd, "helm " + (args.empty() ? "" : args[0]));
  Result<std::string> stderr_text = kube::ReadFileText(err);
  ::unlink(err.c_str());
  if (!out.ok()) return Status::Error(out.error() + (stderr_text.ok() ? *stderr_text : std::string()));
  return out;
}

std::optional<kube::Json> AdmittedAsDryRun(ControlPlane& cp, const std::string& manifest) {
  Result<std::string> out = cp.Kubectl({"apply", "--dry-run=server", "-o", "json", "-f", "-"}, manifest);
  // The output also holds the webhook's warnings ("Warning: ..." lines) before the object.
  if (!out.ok() || out->find('{') == std::string::npos) return std::nullopt;
  kube::Json j = kube::Json::parse(out->substr(out->find('{')), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace graintune::testing
