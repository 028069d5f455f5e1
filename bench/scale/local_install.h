// graintune as `helm install charts/graintune` installs it, with the webhook and the operator
// run as local processes (as the demo runs them) instead of Deployments: the chart is rendered
// with helm; its RBAC, ServiceAccounts, default policy and (local mode, url + caBundle) webhook
// configuration are applied; each binary is started with its Deployment's own arguments and
// environment, as its chart ServiceAccount (a token from the TokenRequest API), except what only
// a pod has: the listen address and ports become free loopback ports, and the webhook serves a
// certificate for 127.0.0.1 from files instead of keeping one in a Secret. One replica of each.
//
// Errors as values, quoting helm, kubectl or the failing process's log. Both processes stop
// when this object goes away (and die with the program that started them).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/webhook_under_test.h"

namespace graintune::bench {

struct LocalInstallOptions {
  std::string source_dir;  // the repository (charts/graintune)
  std::string build_dir;   // webhook/graintune-webhook, operator/graintune-operator
  std::string release = "graintune";
  std::string ns = "graintune-system";
  std::vector<std::string> set_values;  // helm --set KEY=VALUE
};

class LocalInstall {
 public:
  static Result<std::unique_ptr<LocalInstall>> Start(testing::ControlPlane& cp,
                                                     const LocalInstallOptions& options);
  ~LocalInstall();

  testing::ChildProcess& operator_process() { return operator_; }
  testing::WebhookUnderTest& webhook() { return *webhook_; }
  int operator_port() const { return operator_port_; }
  // The API server's user name of each binary's ServiceAccount.
  const std::string& operator_user() const { return operator_user_; }
  const std::string& webhook_user() const { return webhook_user_; }
  // The arguments each binary runs with (for the report).
  const std::vector<std::string>& operator_args() const { return operator_args_; }
  const std::vector<std::string>& webhook_args() const { return webhook_args_; }

 private:
  LocalInstall() = default;
  std::unique_ptr<testing::WebhookUnderTest> webhook_;
  testing::ChildProcess operator_;
  int operator_port_ = 0;
  std::string operator_user_, webhook_user_;
  std::vector<std::string> operator_args_, webhook_args_;
};

// The value of the value flag `name` in `args` (--name=value or --name value), if present.
std::optional<std::string> FlagValue(const std::vector<std::string>& args, const std::string& name);

// `args` without the value flags in `drop`, written either as --flag=value or --flag value.
std::vector<std::string> WithoutFlags(const std::vector<std::string>& args,
                                      const std::set<std::string>& drop);

}  // namespace graintune::bench
