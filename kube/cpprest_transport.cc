// cpprestsdk's http_client under HttpTransport. cpprestsdk completes a request's task when the
// headers arrive and fills the body stream as bytes come, which is what a watch needs; its
// timeout is re-armed on every read. A stop token cancels the request through a pplx
// cancellation token. A request (not a watch) that could not be written whole is sent once more
// on a new connection. All cpprestsdk and Boost exceptions end here, as ApiError values.
#include <cpprest/http_client.h>
#include <cpprest/producerconsumerstream.h>

#include <boost/asio/ssl.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "kube/http_transport.h"

namespace graintune::kube {
namespace {

namespace http = web::http;
namespace wclient = web::http::client;

ApiError TransportError(const std::string& what) { return ApiError{0, "Transport", what}; }

// Installs the configuration's trust roots and client certificate in a TLS context.
void ConfigureTls(const ClientConfig& config, boost::asio::ssl::context& ctx) {
  if (config.ca_pem.empty()) {
    ctx.set_default_verify_paths();
  } else {
    ctx.add_certificate_authority(boost::asio::buffer(config.ca_pem));
  }
  if (!config.client_cert_pem.empty()) {
    ctx.use_certificate_chain(boost::asio::buffer(config.client_cert_pem));
    ctx.use_private_key(boost::asio::buffer(config.client_key_pem),
                        boost::asio::ssl::context::pem);
  }
}

// A bearer token that follows its file: the kubelet rotates projected service-account tokens,
// so the file is re-read when its modification time changes.
class TokenSource {
 public:
  explicit TokenSource(const ClientConfig& config)
      : token_(config.token), file_(config.token_file) {}
  std::string Get() {
    if (file_.empty()) return token_;
    std::lock_guard<std::mutex> lock(mu_);
    std::error_code ec;
    const auto mtime = std::filesystem::last_write_time(file_, ec);
    if (!ec && mtime != mtime_) {
      if (Result<std::string> t = ReadFileText(file_); t.ok()) {
        token_ = *t;
        while (!token_.empty() && (token_.back() == '\n' || token_.back() == '\r')) token_.pop_back();
        mtime_ = mtime;
      }
    }
    return token_;
  }

 private:
  std::mutex mu_;
  std::string token_;
  std::string file_;
  std::filesystem::file_time_type mtime_{};
};

class CpprestTransport : public HttpTransport {
 public:
  explicit CpprestTransport(ClientConfig config)
      : config_(std::move(config)), tokens_(config_) {}

  ApiResult<HttpResponse> Send(const HttpRequest& request, std::stop_token stop) override {
    return Exchange(request, nullptr, stop);
  }

  ApiResult<HttpResponse> Stream(const HttpRequest& request,
                                 const std::function<bool(std::string_view)>& on_chunk,
                                 std::stop_token stop) override {
    return Exchange(request, &on_chunk, stop);
  }

 private:
  wclient::http_client_config ClientConfigFor(const HttpRequest& request) const {
    wclient::http_client_config cc;
    cc.set_timeout(std::chrono::duration_cast<std::chrono::microseconds>(request.timeout));
    cc.set_validate_certificates(!config_.insecure_skip_tls_verify);
    const ClientConfig tls = config_;
    cc.set_ssl_context_callback([tls](boost::asio::ssl::context& ctx) { ConfigureTls(tls, ctx); });
    return cc;
  }

  std::shared_ptr<wclient::http_client> NewHttpClient(const HttpRequest& request) const {
    return std::make_shared<wclient::http_client>(utility::conversions::to_string_t(config_.server),
                                                  ClientConfigFor(request));
  }

  std::shared_ptr<wclient::http_client> SharedHttpClient(const HttpRequest& request) {
    std::lock_guard<std::mutex> lock(clients_mu_);
    std::shared_ptr<wclient::http_client>& c = clients_[request.timeout];
    if (!c) c = NewHttpClient(request);
    return c;
  }

  // A shared client whose kept-alive connection turned out dead is swapped for a new one (with
  // an empty pool), unless another request already did.
  std::shared_ptr<wclient::http_client> ReplaceSharedHttpClient(
      const HttpRequest& request, const std::shared_ptr<wclient::http_client>& dead) {
    std::lock_guard<std::mutex> lock(clients_mu_);
    std::shared_ptr<wclient::http_client>& c = clients_[request.timeout];
    if (c == dead) c = NewHttpClient(request);
    return c;
  }

  // cpprestsdk's words for a request that never left whole: the server cannot have acted on
  // it, so it may be sent again, POST included. A kept-alive connection the server closed
  // (an API server restart) fails this way when the server's reset arrives before or during
  // the write. A write that ran out of time says the same words with timed_out: sending it
  // again would stretch the call past its timeout.
  static bool NeverSentWhole(const web::http::http_exception& e) {
    if (e.error_code() == std::errc::timed_out) return false;
    const std::string what = e.what();
    return what.find("Failed to write request headers") != std::string::npos ||
           what.find("Failed to write request body") != std::string::npos;
  }

  ApiResult<HttpResponse> Exchange(const HttpRequest& request,
                                   const std::function<bool(std::string_view)>* on_chunk,
                                   std::stop_token stop) {
    pplx::cancellation_token_source cancel;
    std::stop_callback on_stop(stop, [&cancel] { cancel.cancel(); });
    // A watch gets an http_client of its own (its connection stays open, and is dropped when
    // the watch ends); other requests share one per timeout, so they reuse kept-alive
    // connections instead of setting up TLS each time (with OpenSSL 3 a new context and
    // handshake cost tens of milliseconds of CPU: most of an idle operator's time).
    try {
      // http_client's constructor throws on a server URL it cannot parse.
      std::shared_ptr<wclient::http_client> http_client =
          on_chunk ? NewHttpClient(request) : SharedHttpClient(request);
      try {
        return ExchangeOn(*http_client, request, on_chunk, stop, cancel.get_token());
      } catch (const web::http::http_exception& e) {
        // Once only, on a new client (a new connection): if that cannot take the request
        // either, the failure is real. A watch's client is new already.
        if (on_chunk || stop.stop_requested() || !NeverSentWhole(e)) throw;
        http_client = ReplaceSharedHttpClient(request, http_client);
        return ExchangeOn(*http_client, request, on_chunk, stop, cancel.get_token());
      }
    } catch (const pplx::task_canceled&) {
      return ApiError{0, "Cancelled", "stopped"};
    } catch (const web::http::http_exception& e) {
      if (stop.stop_requested()) return ApiError{0, "Cancelled", "stopped"};
      const std::string what = e.what();
      if (what.find("timed out") != std::string::npos || e.error_code() == std::errc::timed_out)
        return ApiError{0, "Timeout", request.method + " " + request.path_and_query + ": " + what};
      return TransportError(request.method + " " + request.path_and_query + " to " +
                            config_.server + ": " + what);
    } catch (const std::exception& e) {
      if (stop.stop_requested()) return ApiError{0, "Cancelled", "stopped"};
      return TransportError(request.method + " " + request.path_and_query + ": " + e.what());
    }
  }

  // One exchange on `http_client`; cpprestsdk and Boost failures are thrown to Exchange.
  ApiResult<HttpResponse> ExchangeOn(wclient::http_client& http_client, const HttpRequest& request,
                                     const std::function<bool(std::string_view)>* on_chunk,
                                     std::stop_token stop, pplx::cancellation_token cancel) {
    http::http_request req(utility::conversions::to_string_t(request.method));
    req.set_request_uri(utility::conversions::to_string_t(request.path_and_query));
    req.headers().add(U("Accept"), utility::conversions::to_string_t(request.accept));
    req.headers().add(U("User-Agent"), U("graintune/0.1"));
    if (std::string token = tokens_.Get(); !token.empty())
      req.headers().add(U("Authorization"), U("Bearer ") + utility::conversions::to_string_t(token));
    if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
        request.method == "PATCH")
      req.set_body(request.body, request.content_type.empty() ? "application/json"
                                                                : request.content_type);
    http::http_response resp = http_client.request(req, cancel).get();
    HttpResponse out;
    out.status = resp.status_code();
    Concurrency::streams::streambuf<uint8_t> body = resp.body().streambuf();
    const bool streaming = on_chunk && out.status == 200;
    size_t total = 0;
    std::string chunk(64 * 1024, '\0');
    while (true) {
      if (stop.stop_requested()) return ApiError{0, "Cancelled", "stopped"};
      // getn(count) waits until `count` bytes are there (or the end), which would hold back
      // watch events: wait for one byte, then take whatever else has already arrived.
      uint8_t* buf = reinterpret_cast<uint8_t*>(chunk.data());
      size_t n = body.getn(buf, 1).get();
      if (n == 0) break;
      const size_t ready = std::min(chunk.size() - 1, body.in_avail());
      if (ready > 0) n += body.getn(buf + 1, ready).get();
      if (streaming) {
        if (!(*on_chunk)(std::string_view(chunk.data(), n))) break;
        continue;
      }
      total += n;
      if (total > request.max_response_bytes)
        return ApiError{out.status, "TooLarge",
                        "response to " + request.method + " " + request.path_and_query +
                            " is larger than " + std::to_string(request.max_response_bytes) +
                            " bytes"};
      out.body.append(chunk.data(), n);
    }
    return out;
  }

  const ClientConfig config_;
  TokenSource tokens_;
  // http_client is safe for concurrent requests; a few timeouts are in use, so a few clients.
  std::mutex clients_mu_;
  std::map<std::chrono::milliseconds, std::shared_ptr<wclient::http_client>> clients_;
};

}  // namespace

ApiResult<std::shared_ptr<HttpTransport>> NewCpprestTransport(const ClientConfig& config) {
  // Plain http:// only for exporters scraped on a pod IP; the API server is always https://.
  if (config.server.rfind("http://", 0) == 0) {
    if (!config.allow_plain_http)
      return ApiError{0, "Invalid", "server must be an https:// URL, got '" + config.server + "'"};
    return std::shared_ptr<HttpTransport>(std::make_shared<CpprestTransport>(config));
  }
  if (config.server.rfind("https://", 0) != 0)
    return ApiError{0, "Invalid", "server must be an https:// URL, got '" + config.server + "'"};
  // Bad PEM would otherwise surface as an exception inside every request; check it once here.
  try {
    boost::asio::ssl::context ctx(boost::asio::ssl::context::tls_client);
    ConfigureTls(config, ctx);
  } catch (const std::exception& e) {
    return ApiError{0, "Invalid", std::string("TLS material of the kubeconfig: ") + e.what()};
  }
  return std::shared_ptr<HttpTransport>(std::make_shared<CpprestTransport>(config));
}

}  // namespace graintune::kube
