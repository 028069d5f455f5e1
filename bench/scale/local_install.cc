#include "bench/scale/local_install.h"

#include <thread>

#include "kube/base64.h"
#include "tests/controlplane/https_call.h"
#include "workload/yaml_json.h"

namespace graintune::bench {
namespace {

using kube::Json;
namespace gt = testing;

Result<std::vector<Json>> Render(gt::ControlPlane& cp, const LocalInstallOptions& o,
                                 const std::vector<std::string>& more_values) {
  std::vector<std::string> args = {"template", o.release, o.source_dir + "/charts/graintune",
                                   "-n", o.ns};
  for (const std::vector<std::string>* values : {&o.set_values, &more_values})
    for (const std::string& v : *values) args.insert(args.end(), {"--set", v});
  Result<std::string> text = cp.Helm(args);
  if (!text.ok()) return Status::Error("helm template: " + text.error());
  return workload::ParseYamlDocuments(*text);
}

Status Apply(gt::ControlPlane& cp, const std::string& ns, const std::vector<Json>& objects) {
  const Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}};
  Result<std::string> out = cp.Kubectl({"apply", "-n", ns, "-f", "-"}, list.dump());
  return out.ok() ? Status::Ok() : Status::Error("kubectl apply: " + out.error());
}

// The chart's Deployment of one component: its container's args and literal env, its
// ServiceAccount.
struct ChartContainer {
  std::vector<std::string> args;
  std::vector<std::string> env;  // NAME=VALUE
  std::string service_account;
};

Result<ChartContainer> ContainerOf(const std::vector<Json>& objects, const std::string& component) {
  for (const Json& o : objects) {
    if (o.value("kind", "") != "Deployment") continue;
    const Json labels = o.value("metadata", Json::object()).value("labels", Json::object());
    if (labels.value("app.kubernetes.io/component", "") != component) continue;
    const Json pod = o["spec"]["template"]["spec"];
    const Json container = pod.value("containers", Json::array()).at(0);
    ChartContainer c;
    c.service_account = pod.value("serviceAccountName", "");
    for (const Json& a : container.value("args", Json::array()))
      c.args.push_back(a.is_string() ? a.get<std::string>() : a.dump());
    for (const Json& e : container.value("env", Json::array()))
      if (e.contains("value")) c.env.push_back(e.value("name", "") + "=" + e.value("value", ""));
    return c;
  }
  return Status::Error("the chart renders no " + component + " Deployment");
}

}  // namespace

std::optional<std::string> FlagValue(const std::vector<std::string>& args, const std::string& name) {
  const std::string flag = "--" + name;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind(flag + "=", 0) == 0) return args[i].substr(flag.size() + 1);
  }
  return std::nullopt;
}

std::vector<std::string> WithoutFlags(const std::vector<std::string>& args,
                                      const std::set<std::string>& drop) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string name = a.rfind("--", 0) == 0 ? a.substr(2, a.find('=') - 2) : "";
    if (name.empty() || !drop.count(name)) {
      kept.push_back(a);
      continue;
    }
    if (a.find('=') == std::string::npos) ++i;  // its value follows
  }
  return kept;
}

Result<std::unique_ptr<LocalInstall>> LocalInstall::Start(gt::ControlPlane& cp,
                                                          const LocalInstallOptions& o) {
  std::unique_ptr<LocalInstall> in(new LocalInstall());
  if (Result<std::string> made = cp.Kubectl({"create", "namespace", o.ns}); !made.ok())
    return Status::Error("creating namespace " + o.ns + ": " + made.error());
  Result<std::vector<Json>> chart = Render(cp, o, {});
  if (!chart.ok()) return chart.status();
  std::vector<Json> rbac;
  for (const Json& obj : *chart) {
    static const std::set<std::string> kKinds = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                                 "Role", "RoleBinding"};
    if (kKinds.count(obj.value("kind", ""))) rbac.push_back(obj);
  }
  if (Status s = Apply(cp, o.ns, rbac); !s.ok()) return s;
  Result<ChartContainer> webhook = ContainerOf(*chart, "webhook");
  Result<ChartContainer> op = ContainerOf(*chart, "operator");
  if (!webhook.ok()) return webhook.status();
  if (!op.ok()) return op.status();
  std::string webhook_kubeconfig, operator_kubeconfig;
  if (auto c = cp.ServiceAccountConfig(o.ns, webhook->service_account, &webhook_kubeconfig); !c.ok())
    return c.status();
  if (auto c = cp.ServiceAccountConfig(o.ns, op->service_account, &operator_kubeconfig); !c.ok())
    return c.status();
  in->webhook_user_ = "system:serviceaccount:" + o.ns + ":" + webhook->service_account;
  in->operator_user_ = "system:serviceaccount:" + o.ns + ":" + op->service_account;

  // What only a pod has: its own address and ports, and a certificate for its Service's name.
  in->webhook_args_ = WithoutFlags(webhook->args, {"bind-address", "port", "health-port", "cert-secret",
                                                   "cert-dir", "service-dns-name",
                                                   "webhook-configuration", "tls-cert-file",
                                                   "tls-key-file", "kubeconfig"});
  Result<std::unique_ptr<gt::WebhookUnderTest>> w = gt::WebhookUnderTest::Start(
      cp, {.binary = o.build_dir + "/webhook/graintune-webhook", .extra_args = in->webhook_args_,
           .configuration_name = o.release + "-local", .register_configuration = false,
           .kubeconfig = webhook_kubeconfig, .env = webhook->env});
  if (!w.ok()) return w.status();
  in->webhook_ = std::move(w).value();
  Result<std::vector<Json>> local = Render(
      cp, o, {"localDev.enabled=true",
              "localDev.webhookURL=https://127.0.0.1:" + std::to_string(in->webhook_->port()),
              "localDev.caBundle=" + kube::Base64Encode(in->webhook_->ca_pem())});
  if (!local.ok()) return local.status();
  if (Status s = Apply(cp, o.ns, *local); !s.ok()) return s;

  Result<int> port = gt::FreeLoopbackPort();
  if (!port.ok()) return port.status();
  in->operator_port_ = *port;
  in->operator_args_ = WithoutFlags(op->args, {"bind-address", "port", "kubeconfig"});
  std::vector<std::string> argv = {o.build_dir + "/operator/graintune-operator"};
  argv.insert(argv.end(), in->operator_args_.begin(), in->operator_args_.end());
  argv.insert(argv.end(), {"--bind-address", "127.0.0.1", "--port", std::to_string(*port),
                           "--kubeconfig", operator_kubeconfig});
  std::vector<std::string> env = op->env;
  env.push_back("POD_NAME=" + o.release + "-operator-local");
  Result<gt::ChildProcess> p = gt::ChildProcess::Spawn(argv, cp.dir() + "/operator.log", env);
  if (!p.ok()) return p.status();
  in->operator_ = std::move(p).value();
  for (int i = 0; i < 600; ++i) {
    if (!in->operator_.Running())
      return Status::Error("graintune-operator exited:\n" + gt::TailOfFile(in->operator_.log_path()));
    if (gt::HttpsCall(*port, "", "/readyz").status == 200) return in;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::Error("graintune-operator never became ready:\n" +
                       gt::TailOfFile(in->operator_.log_path()));
}

LocalInstall::~LocalInstall() {
  operator_.Stop(std::chrono::seconds(5));
  webhook_.reset();
}

}  // namespace graintune::bench
