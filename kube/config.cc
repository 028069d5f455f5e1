#include "kube/config.h"

#include "kube/base64.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace graintune::kube {
namespace {

std::string Scalar(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// The `inner` mapping of the list entry called `name`; nullopt when there is none.
std::optional<YAML::Node> Named(const YAML::Node& list, const std::string& name,
                                const char* inner) {
  if (!list || !list.IsSequence()) return std::nullopt;
  for (const YAML::Node& item : list)
    if (Scalar(item, "name") == name && item[inner] && item[inner].IsMap()) return item[inner];
  return std::nullopt;
}

// A certificate given inline (*-data, base64) or as a file relative to the kubeconfig.
Result<std::string> Material(const YAML::Node& node, const std::string& key,
                             const std::filesystem::path& base) {
  if (std::string data = Scalar(node, (key + "-data").c_str()); !data.empty())
    return Base64Decode(data, key + "-data");
  std::string file = Scalar(node, key.c_str());
  if (file.empty()) return std::string();
  std::filesystem::path p(file);
  if (p.is_relative()) p = base / p;
  return ReadFileText(p.string());
}

}  // namespace

Result<std::string> ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<ClientConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const std::exception& e) {
    return Status::Error("kubeconfig '" + path + "': " + e.what());
  }
  if (!root.IsMap()) return Status::Error("kubeconfig '" + path + "' is not a YAML mapping");
  const std::string ctx_name = context.empty() ? Scalar(root, "current-context") : context;
  if (ctx_name.empty()) return Status::Error("kubeconfig '" + path + "' has no current-context");
  const std::optional<YAML::Node> ctx_entry = Named(root["contexts"], ctx_name, "context");
  if (!ctx_entry) return Status::Error("kubeconfig '" + path + "' has no context '" + ctx_name + "'");
  const YAML::Node ctx = *ctx_entry;
  const std::string cluster_name = Scalar(ctx, "cluster");
  const std::optional<YAML::Node> cluster_entry = Named(root["clusters"], cluster_name, "cluster");
  if (!cluster_entry) return Status::Error("context '" + ctx_name + "' names unknown cluster '" +
                                     cluster_name + "'");
  const YAML::Node cluster = *cluster_entry;
  const std::string user_name = Scalar(ctx, "user");
  const std::optional<YAML::Node> user = Named(root["users"], user_name, "user");
  if (!user_name.empty() && !user)
    return Status::Error("context '" + ctx_name + "' names unknown user '" + user_name + "'");

  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  ClientConfig c;
  c.server = Scalar(cluster, "server");
  if (c.server.rfind("https://", 0) != 0)
    return Status::Error("cluster '" + cluster_name + "': server must be an https:// URL, got '" +
                         c.server + "'");
  c.insecure_skip_tls_verify = Scalar(cluster, "insecure-skip-tls-verify") == "true";
  Result<std::string> ca = Material(cluster, "certificate-authority", base);
  if (!ca.ok()) return ca.status();
  c.ca_pem = *ca;
  if (user) {
    Result<std::string> cert = Material(*user, "client-certificate", base);
    if (!cert.ok()) return cert.status();
    Result<std::string> key = Material(*user, "client-key", base);
    if (!key.ok()) return key.status();
    if (cert->empty() != key->empty())
      return Status::Error("user '" + user_name + "' has a client certificate without a key");
    c.client_cert_pem = *cert;
    c.client_key_pem = *key;
    c.token = Scalar(*user, "token");
    c.token_file = Scalar(*user, "tokenFile");
    if (!c.token_file.empty() && std::filesystem::path(c.token_file).is_relative())
      c.token_file = (base / c.token_file).string();
    if ((*user)["exec"] || (*user)["auth-provider"])
      return Status::Error("user '" + user_name +
                           "' uses an exec or auth-provider plugin, which graintune does not run; "
                           "use a client certificate or a token");
  }
  if (std::string ns = Scalar(ctx, "namespace"); !ns.empty()) c.default_namespace = ns;
  return c;
}

Result<ClientConfig> InClusterConfig(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return Status::Error("not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  ClientConfig c;
  const std::string h = host;
  // An IPv6 service address needs brackets in a URL.
  c.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  Result<std::string> ca = ReadFileText(root + "/ca.crt");
  if (!ca.ok()) return ca.status();
  c.ca_pem = *ca;
  c.token_file = root + "/token";
  if (Result<std::string> t = ReadFileText(c.token_file); !t.ok()) return t.status();
  if (Result<std::string> ns = ReadFileText(root + "/namespace"); ns.ok() && !ns->empty())
    c.default_namespace = *ns;
  return c;
}

Result<ClientConfig> LoadDefaultConfig(const std::string& kubeconfig_flag) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfig(kubeconfig_flag);
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST"); h && *h) return InClusterConfig();
  if (const char* k = std::getenv("KUBECONFIG"); k && *k) {
    // KUBECONFIG may list several files; the first one is used.
    std::string first(k);
    first = first.substr(0, first.find(':'));
    return LoadKubeconfig(first);
  }
  if (const char* home = std::getenv("HOME"); home && *home)
    return LoadKubeconfig(std::string(home) + "/.kube/config");
  return Status::Error("no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster");
}

}  // namespace graintune::kube
