#include "tests/controlplane/https_call.h"

#include <openssl/x509.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>

namespace graintune::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpsAnswer HttpsCall(int port, const std::string& ca_pem, const std::string& target,
                      const std::string& post_body) {
  asio::io_context io;
  http::request<http::string_body> req{post_body.empty() ? http::verb::get : http::verb::post,
                                       target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  req.body() = post_body;
  req.prepare_payload();
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  beast::flat_buffer buffer;
  beast::error_code ec;
  HttpsAnswer answer;
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  if (ca_pem.empty()) {
    beast::tcp_stream stream(io);
    stream.expires_after(std::chrono::seconds(10));
    stream.connect(endpoint, ec);
    if (!ec) http::write(stream, req, ec);
    if (!ec) http::read(stream, buffer, parser, ec);
  } else {
    asio::ssl::context ctx(asio::ssl::context::tls_client);
    ctx.add_certificate_authority(asio::buffer(ca_pem), ec);
    ctx.set_verify_mode(asio::ssl::verify_peer);
    beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
    if (!ec) beast::get_lowest_layer(stream).connect(endpoint, ec);
    if (!ec) stream.handshake(asio::ssl::stream_base::client, ec);
    if (!ec) {
      if (X509* cert = SSL_get_peer_certificate(stream.native_handle())) {
        char cn[256] = {};
        X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
        answer.peer_cn = cn;
        X509_free(cert);
      }
    }
    if (!ec) http::write(stream, req, ec);
    if (!ec) http::read(stream, buffer, parser, ec);
  }
  if (ec) {
    answer.error = ec.message();
    return answer;
  }
  answer.status = static_cast<int>(parser.get().result_int());
  answer.body = parser.get().body();
  return answer;
}

}  // namespace graintune::testing
