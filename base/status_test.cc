#include "base/status.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

struct CodedError {
  int code = 0;
  std::string reason;
  Status ToStatus() const { return Status::Error("code " + std::to_string(code) + " " + reason); }
};

TEST(ResultTest, HoldsAValueOrAStatus) {
  Result<int> four = 4;
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(*four, 4);
  EXPECT_TRUE(four.status().ok());
  EXPECT_EQ(four.error(), "");
  Result<int> bad = Status::Error("no luck");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "no luck");
  EXPECT_EQ(bad.status().message(), "no luck");
}

TEST(ResultTest, ATypedErrorStaysTypedAndSaysItselfAsAStatus) {
  Result<std::string, CodedError> conflict = CodedError{409, "Conflict"};
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, 409);
  EXPECT_EQ(conflict.status().message(), "code 409 Conflict");
  Result<std::string, CodedError> fine = std::string("x");
  ASSERT_TRUE(fine.ok());
  fine->append("y");
  EXPECT_EQ(*fine, "xy");
  EXPECT_TRUE(fine.status().ok());
}

}  // namespace
}  // namespace graintune
