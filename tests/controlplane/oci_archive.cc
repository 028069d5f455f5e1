#include "tests/controlplane/oci_archive.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace graintune::testing {
namespace {

constexpr size_t kBlock = 512;

// One ustar entry: a header block, the data, and padding to the next block.
void AppendTarEntry(std::string& tar, const std::string& name, const std::string& data,
                    bool directory = false) {
  char header[kBlock] = {};
  std::snprintf(header, 100, "%s", name.c_str());
  std::snprintf(header + 100, 8, "%07o", 0755);
  std::snprintf(header + 108, 8, "%07o", 0);
  std::snprintf(header + 116, 8, "%07o", 0);
  std::snprintf(header + 124, 12, "%011llo", static_cast<unsigned long long>(data.size()));
  std::snprintf(header + 136, 12, "%011o", 0);
  header[156] = directory ? '5' : '0';
  std::memcpy(header + 257, "ustar", 6);
  std::memcpy(header + 263, "00", 2);
  std::memset(header + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : header) sum += c;
  std::snprintf(header + 148, 8, "%06o", sum);
  header[155] = ' ';
  tar.append(header, kBlock);
  tar += data;
  tar.append((kBlock - data.size() % kBlock) % kBlock, '\0');
}

void FinishTar(std::string& tar) { tar.append(2 * kBlock, '\0'); }

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  char byte[3];
  for (unsigned i = 0; i < length; ++i) {
    std::snprintf(byte, sizeof(byte), "%02x", digest[i]);
    hex += byte;
  }
  return hex;
}

}  // namespace

Status WriteOciArchive(const OciImage& image, const std::string& archive_path) {
  std::string layer;
  for (const OciImageFile& f : image.files) {
    std::ifstream in(f.host_path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    if (!in) return Status::Error("cannot read '" + f.host_path + "' for image " + image.reference);
    AppendTarEntry(layer, f.image_path, content.str());
  }
  FinishTar(layer);
  const std::string layer_digest = "sha256:" + Sha256Hex(layer);

  nlohmann::json config_json = {
      {"architecture", "amd64"},
      {"os", "linux"},
      {"config", {{"Entrypoint", image.entrypoint}, {"Env", {"PATH=/"}}}},
      {"rootfs", {{"type", "layers"}, {"diff_ids", {layer_digest}}}}};
  if (!image.cmd.empty()) config_json["config"]["Cmd"] = image.cmd;
  const std::string config = config_json.dump();
  const std::string config_digest = "sha256:" + Sha256Hex(config);

  const std::string manifest =
      nlohmann::json{{"schemaVersion", 2},
                     {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                     {"config",
                      {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                       {"digest", config_digest},
                       {"size", config.size()}}},
                     {"layers",
                      {{{"mediaType", "application/vnd.oci.image.layer.v1.tar"},
                        {"digest", layer_digest},
                        {"size", layer.size()}}}}}
          .dump();
  const std::string manifest_digest = "sha256:" + Sha256Hex(manifest);
  const std::string tag = image.reference.substr(image.reference.rfind(':') + 1);
  const std::string index =
      nlohmann::json{
          {"schemaVersion", 2},
          {"manifests",
           {{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
             {"digest", manifest_digest},
             {"size", manifest.size()},
             {"platform", {{"architecture", "amd64"}, {"os", "linux"}}},
             {"annotations",
              {{"io.containerd.image.name", image.reference},
               {"org.opencontainers.image.ref.name", tag}}}}}}}
          .dump();

  std::string archive;
  AppendTarEntry(archive, "oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  AppendTarEntry(archive, "index.json", index);
  AppendTarEntry(archive, "blobs/", "", /*directory=*/true);
  AppendTarEntry(archive, "blobs/sha256/", "", /*directory=*/true);
  for (const std::string* blob :
       std::initializer_list<const std::string*>{&layer, &config, &manifest})
    AppendTarEntry(archive, "blobs/sha256/" + Sha256Hex(*blob), *blob);
  FinishTar(archive);

  const std::string tmp = archive_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << archive;
    if (!out) return Status::Error("cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), archive_path.c_str()) != 0)
    return Status::Error("cannot rename '" + tmp + "' to '" + archive_path + "'");
  return Status::Ok();
}

}  // namespace graintune::testing
