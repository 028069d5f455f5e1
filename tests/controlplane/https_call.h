// One HTTP request from a test to a server on loopback: over TLS, verifying the server against
// `ca_pem`, or in plain HTTP when `ca_pem` is empty. A new connection per call, so each call
// sees the certificate the server presents now. Never throws; status 0 means no answer
// (refused, reset, TLS failure, or nothing within 10 s).
#pragma once

#include <string>

namespace graintune::testing {

struct HttpsAnswer {
  int status = 0;
  std::string body;
  std::string error;    // why there was no answer
  std::string peer_cn;  // subject CN of the certificate the server presented (TLS)
};

HttpsAnswer HttpsCall(int port, const std::string& ca_pem, const std::string& target,
                      const std::string& post_body = "");

}  // namespace graintune::testing
