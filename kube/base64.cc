#include "kube/base64.h"

#include <openssl/evp.h>

#include <algorithm>

namespace graintune::kube {

std::string Base64Encode(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()),
                                static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view input, const std::string& what) {
  std::string text(input);
  std::erase_if(text, [](char c) { return c == '\n' || c == '\r' || c == ' '; });
  if (text.size() % 4 != 0) return Status::Error(what + " is not valid base64");
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return Status::Error(what + " is not valid base64");
  size_t size = static_cast<size_t>(n);
  // EVP_DecodeBlock counts padding as zero bytes; drop them.
  if (!text.empty() && text.back() == '=') --size;
  if (text.size() > 1 && text[text.size() - 2] == '=') --size;
  out.resize(size);
  return out;
}

}  // namespace graintune::kube
