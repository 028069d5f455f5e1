// Standard base64 (RFC 4648, with padding) over OpenSSL's EVP codec: kubeconfig *-data fields,
// caBundle, Secret data.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace graintune::kube {

std::string Base64Encode(std::string_view bytes);
// Line breaks and spaces are ignored; `what` names the field in the error.
Result<std::string> Base64Decode(std::string_view text, const std::string& what);

}  // namespace graintune::kube
