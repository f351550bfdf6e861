// SelectWaiting (select/run --wait) against two fake Placement services: one
// with the server's claim queue (it answers once, after its wait), and one
// older than ClaimRequest.wait (it answers RESOURCE_EXHAUSTED at once, with
// the code's name as reason): the CLI tells them apart by the answer and
// retries on its own only against the older one.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/status_details.h"
#include "client/cli/select_command.h"
#include "client/ctxsel_client.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

// Answers RESOURCE_EXHAUSTED with `reason` to the first `refusals` Selects,
// then a claim; records whether each request carried claim.wait.
class FakePlacement final : public v1::Placement::Service {
 public:
  FakePlacement(int refusals, std::string reason)
      : refusals_(refusals), reason_(std::move(reason)) {}

  grpc::Status Select(grpc::ServerContext*, const v1::SelectRequest* request,
                      v1::SelectResponse* response) override {
    absl::MutexLock lock(&mu_);
    waits_.push_back(request->claim().has_wait());
    if (static_cast<int>(waits_.size()) <= refusals_) {
      const google::rpc::Status details = ToRpcStatus(WithErrorInfo(
          absl::ResourceExhaustedError("all 1 fitting devices are claimed"),
          reason_));
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          details.message(), details.SerializeAsString());
    }
    response->mutable_claim()->set_id("c-1");
    return grpc::Status::OK;
  }
  std::vector<bool> waits() {
    absl::MutexLock lock(&mu_);
    return waits_;
  }

 private:
  const int refusals_;
  const std::string reason_;
  absl::Mutex mu_;
  std::vector<bool> waits_ ABSL_GUARDED_BY(mu_);
};

class SelectWaitingTest : public ::testing::Test {
 protected:
  void Serve(int refusals, const std::string& reason) {
    service_ = std::make_unique<FakePlacement>(refusals, reason);
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_GT(port, 0);
    client_ =
        client::CtxselClient::Connect("127.0.0.1:" + std::to_string(port));
  }
  absl::StatusOr<v1::SelectResponse> Select(absl::Duration wait) {
    v1::SelectRequest request;
    request.mutable_job()->set_kernel("saxpy");
    request.mutable_claim()->mutable_duration()->set_seconds(60);
    request.mutable_claim()->set_holder("h");
    return SelectWaiting(*client_, request, wait);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  std::unique_ptr<FakePlacement> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<client::CtxselClient> client_;
};

TEST_F(SelectWaitingTest, AnOlderServerIsPolledAfterItsFirstAnswer) {
  Serve(/*refusals=*/2, "RESOURCE_EXHAUSTED");
  absl::StatusOr<v1::SelectResponse> answer = Select(absl::Seconds(10));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->claim().id(), "c-1");
  // The queue was asked for once; the retries are plain claiming Selects.
  EXPECT_EQ(service_->waits(), std::vector<bool>({true, false, false}));
}

TEST_F(SelectWaitingTest, TheServersQueueAnswerIsFinal) {
  for (const char* reason : {"CLAIM_WAIT_EXPIRED", "CLAIM_QUEUE_FULL"}) {
    Serve(/*refusals=*/5, reason);
    absl::StatusOr<v1::SelectResponse> answer = Select(absl::Seconds(10));
    EXPECT_TRUE(absl::IsResourceExhausted(answer.status())) << reason;
    EXPECT_EQ(service_->waits(), std::vector<bool>({true})) << reason;
    server_->Shutdown();
    server_.reset();
  }
}

TEST_F(SelectWaitingTest, WithoutWaitNothingIsQueued) {
  Serve(/*refusals=*/1, "RESOURCE_EXHAUSTED");
  EXPECT_TRUE(absl::IsResourceExhausted(Select(absl::ZeroDuration()).status()));
  EXPECT_EQ(service_->waits(), std::vector<bool>({false}));
}

}  // namespace
}  // namespace ctxsel::cli
