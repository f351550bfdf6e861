#include "client/cli/service_output.h"

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "base/status_details.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using ::testing::HasSubstr;

v1::ListDevicesResponse TwoDevices() {
  v1::ListDevicesResponse all;
  v1::Device* gpu = all.add_devices();
  gpu->set_id("n1/gpu0");
  gpu->set_memory_bytes(uint64_t{85520809984});
  gpu->mutable_traits()->add_kind("gpu");
  gpu->mutable_traits()->add_kind("nohost");
  all.add_devices()->set_id("n1/cpu0");
  return all;
}

TEST(ToJsonTest, SixtyFourBitIntegersAreNumbers) {
  const std::string json = ToJson(TwoDevices());
  EXPECT_THAT(json, HasSubstr(R"("memory_bytes":85520809984)"));
  EXPECT_THAT(json, HasSubstr(R"("memory_bytes":0)"));
  v1::PlacementChoice choice;
  choice.set_score(uint64_t{1} << 40);
  EXPECT_THAT(ToJson(choice), HasSubstr(R"("score":1099511627776)"));
}

TEST(ToYamlTest, BlockStyleWithQuotedStrings) {
  const std::string yaml = ToYaml(TwoDevices());
  EXPECT_THAT(yaml, HasSubstr("devices:\n  - id: \"n1/gpu0\"\n"));
  EXPECT_THAT(yaml, HasSubstr("    memory_bytes: 85520809984\n"));
  EXPECT_THAT(yaml, HasSubstr("      kind:\n        - \"gpu\"\n"));
  EXPECT_THAT(yaml, HasSubstr("  - id: \"n1/cpu0\"\n"));
}

std::string Printed(const Listing& listing) {
  ::testing::internal::CaptureStdout();
  PrintListing(TwoDevices(), listing);
  return ::testing::internal::GetCapturedStdout();
}

TEST(PrintListingTest, EveryOutputFormat) {
  absl::FlagSaver saver;
  Listing listing;
  listing.columns = {{"DEVICE"}, {"KIND", /*wide=*/true}};
  listing.rows = {{"n1/gpu0", "gpu"}, {"n1/cpu0", "cpu"}};
  listing.names = {"n1/gpu0", "n1/cpu0"};
  EXPECT_EQ(Printed(listing), "DEVICE\nn1/gpu0\nn1/cpu0\n");
  absl::SetFlag(&FLAGS_output, "wide");
  EXPECT_EQ(Printed(listing), "DEVICE   KIND\nn1/gpu0  gpu\nn1/cpu0  cpu\n");
  absl::SetFlag(&FLAGS_no_headers, true);
  EXPECT_EQ(Printed(listing), "n1/gpu0  gpu\nn1/cpu0  cpu\n");
  absl::SetFlag(&FLAGS_output, "name");
  EXPECT_EQ(Printed(listing), "n1/gpu0\nn1/cpu0\n");
  absl::SetFlag(&FLAGS_output, "yaml");
  EXPECT_EQ(Printed(listing), ToYaml(TwoDevices()));
  absl::SetFlag(&FLAGS_output, "table");
  absl::SetFlag(&FLAGS_json, true);
  EXPECT_EQ(Printed(listing), ToJson(TwoDevices()));
}

// One exit code per thing the caller should do (command.h's table).
TEST(ExitCodeOfTest, ByWhatTheCallerShouldDo) {
  const struct {
    absl::Status status;
    int exit_code;
  } cases[] = {
      {absl::OkStatus(), kExitOk},
      {absl::FailedPreconditionError("no live device fits"), kExitFailure},
      {WithErrorInfo(absl::NotFoundError("node: 'n9' is not known"),
                     "NODE_NOT_FOUND"),
       kExitFailure},
      {absl::InvalidArgumentError("--count: negative"), kExitBadInput},
      {WithErrorInfo(absl::NotFoundError("kernel: 'nope'"), "KERNEL_NOT_FOUND"),
       kExitBadInput},
      {absl::UnavailableError("failed to connect to all addresses; last "
                              "error: Connection refused"),
       kExitUnreachable},
      {absl::DeadlineExceededError("no answer within 300ms"), kExitUnreachable},
      {WithErrorInfo(absl::ResourceExhaustedError("slow down"),
                     kReasonRateLimited),
       kExitUnreachable},
      {absl::ResourceExhaustedError("all 8 fitting devices are claimed"),
       kExitExhausted},
      {WithErrorInfo(absl::ResourceExhaustedError("all 8 claimed"),
                     "RESOURCE_EXHAUSTED"),
       kExitExhausted},
      {WithErrorInfo(absl::ResourceExhaustedError("all 8 claimed"),
                     kReasonClaimsExhausted),
       kExitExhausted},
      // RESOURCE_EXHAUSTED that is not claims: the reason tells them apart.
      {WithErrorInfo(absl::ResourceExhaustedError("node.devices: 9000"),
                     kReasonLimitExceeded),
       kExitBadInput},
      {WithErrorInfo(absl::ResourceExhaustedError("the server is busy"),
                     kReasonServerBusy),
       kExitUnreachable},
      {WithErrorInfo(absl::ResourceExhaustedError("the disk is full"),
                     kReasonStoreFull),
       kExitExhausted},
      {absl::UnauthenticatedError("no token"), kExitCredentials},
      {absl::PermissionDeniedError("role reader"), kExitCredentials},
      {absl::UnavailableError(
           "failed to connect to all addresses; last error: UNKNOWN: "
           "ipv4:127.0.0.1:7070: Ssl handshake failed: SSL_ERROR_SSL: "
           "error:1000007d:SSL routines:OPENSSL_internal:"
           "CERTIFICATE_VERIFY_FAILED"),
       kExitCredentials},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ExitCodeOf(c.status), c.exit_code) << c.status;
  }
}

TEST(CredentialsHintTest, NamesTheFlagToFix) {
  EXPECT_THAT(CredentialsHint(absl::UnauthenticatedError("x")),
              HasSubstr("--token_file (or $CTXSEL_TOKEN_FILE)"));
  EXPECT_THAT(CredentialsHint(absl::PermissionDeniedError("x")),
              HasSubstr("--token_file"));
  EXPECT_THAT(CredentialsHint(absl::UnavailableError("Ssl handshake failed")),
              HasSubstr("--ca (or $CTXSEL_CA)"));
  EXPECT_EQ(CredentialsHint(absl::UnavailableError("Connection refused")), "");
}

}  // namespace
}  // namespace ctxsel::cli
