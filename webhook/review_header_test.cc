#include "webhook/review_header.h"

#include <gtest/gtest.h>

namespace graintune::webhook {
namespace {

// As the API server writes it: kind, apiVersion, then uid and kind first in the request.
constexpr std::string_view kHead =
    R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-1",)"
    R"("kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1",)"
    R"("resource":"pods"},"namespace":"default","operation":"CREATE",)";

TEST(ReviewHeaderTest, ReadsTheFieldsTheApiServerWritesFirst) {
  const std::string body = std::string(kHead) + R"("object":{"kind":"Pod","metadata":{}}}})";
  const std::optional<ReviewHeader> h = ReadReviewHeader(body);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->api_version, "admission.k8s.io/v1");
  EXPECT_EQ(h->kind, "AdmissionReview");
  EXPECT_EQ(h->uid, "u-1");
  EXPECT_EQ(h->request_group, "");
  EXPECT_EQ(h->request_kind, "Pod");
}

// It stops once it has them: what follows is never read (here, it is not even JSON).
TEST(ReviewHeaderTest, StopsBeforeTheObject) {
  const std::string body = std::string(kHead) + R"("object":{"kind": this is never lexed)";
  ASSERT_TRUE(ReadReviewHeader(body).has_value());
  EXPECT_EQ(ReadReviewHeader(body)->uid, "u-1");
}

// Any member order works; it then reads further (here, past the object to the uid).
TEST(ReviewHeaderTest, ReadsOtherMemberOrders) {
  const std::string body =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{)"
      R"("kind":{"group":"batch","version":"v1","kind":"Job"},"object":{"kind":"Job",)"
      R"("spec":{"uid":"not this one"}},"uid":"u-2"}})";
  const std::optional<ReviewHeader> h = ReadReviewHeader(body);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->uid, "u-2");
  EXPECT_EQ(h->request_group, "batch");
  EXPECT_EQ(h->request_kind, "Job");
}

TEST(ReviewHeaderTest, AnythingMissingOrOddIsNotAHeader) {
  const std::string_view cases[] = {
      "",
      "{not json",
      "[1,2]",
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u"}})",  // no request.kind
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"kind":{"kind":"Pod"}}})",  // no uid
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"","kind":{"kind":"Pod"}}})",
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":7,"kind":{"kind":"Pod"}}})",
      R"({"kind":"AdmissionReview","request":{"uid":"u","kind":{"kind":"Pod"}}})",  // no apiVersion
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","kind":"Pod"}})",
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u", broken)",
      // The fields at the wrong depth do not count.
      R"({"x":{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","kind":{"kind":"Pod"}}}})",
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":[{"uid":"u","kind":{"kind":"Pod"}}]})",
      // A second top-level value is not JSON.
      R"({} {"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","kind":{"kind":"Pod"}}})",
  };
  for (std::string_view body : cases) EXPECT_FALSE(ReadReviewHeader(body).has_value()) << body;
}

}  // namespace
}  // namespace graintune::webhook
