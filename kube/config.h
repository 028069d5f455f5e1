// How to reach and authenticate to a Kubernetes API server: from a kubeconfig file (the
// current or a named context) or from inside a pod (the service account's mounted token, CA and
// namespace, with KUBERNETES_SERVICE_HOST/PORT). Certificates are held as PEM text, whether the
// kubeconfig embeds them (*-data, base64) or names files (relative to the kubeconfig's folder).
// A token file is kept as a path so the client re-reads it when the kubelet rotates it.
#pragma once

#include <string>

#include "base/status.h"

namespace graintune::kube {

struct ClientConfig {
  std::string server;           // https://host:port
  std::string ca_pem;           // empty: the system's trust store
  bool insecure_skip_tls_verify = false;
  std::string client_cert_pem;  // client-certificate authentication, with client_key_pem
  std::string client_key_pem;
  std::string token;            // bearer token, or
  std::string token_file;       //   a file holding one (re-read when it changes)
  std::string default_namespace = "default";
  // Allows an http:// server (the operator scraping exporters); never set for the API server.
  bool allow_plain_http = false;
};

// `context` empty: the kubeconfig's current-context.
Result<ClientConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// The service account configuration of a pod. `root` is where the service account volume is
// mounted (a parameter so tests can point it at a temporary folder).
Result<ClientConfig> InClusterConfig(
    const std::string& root = "/var/run/secrets/kubernetes.io/serviceaccount");

// The usual order: an explicit --kubeconfig, else in-cluster when KUBERNETES_SERVICE_HOST is
// set, else $KUBECONFIG, else ~/.kube/config.
Result<ClientConfig> LoadDefaultConfig(const std::string& kubeconfig_flag);

// Reads a whole file; an error names the path.
Result<std::string> ReadFileText(const std::string& path);

}  // namespace graintune::kube
