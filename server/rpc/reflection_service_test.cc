#include "server/rpc/reflection_service.h"

#include <google/protobuf/descriptor.pb.h>

#include <string>
#include <vector>

#include "ctxsel/v1/ctxsel.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The names of the files an answer carries, in order.
std::vector<std::string> FileNames(
    const reflection::ServerReflectionResponse& response) {
  std::vector<std::string> names;
  for (const std::string& bytes :
       response.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    EXPECT_TRUE(file.ParseFromString(bytes));
    names.push_back(file.name());
  }
  return names;
}

TEST(ReflectionAnswerTest, ListsTheServicesItWasGiven) {
  reflection::ServerReflectionRequest request;
  request.set_host("ctxsel:7070");
  request.set_list_services("");
  reflection::ServerReflectionResponse answer = ReflectionAnswer(
      request, {"ctxsel.v1.Placement", "grpc.health.v1.Health"});
  ASSERT_EQ(answer.list_services_response().service_size(), 2);
  EXPECT_EQ(answer.list_services_response().service(0).name(),
            "ctxsel.v1.Placement");
  EXPECT_EQ(answer.valid_host(), "ctxsel:7070");
  EXPECT_TRUE(answer.original_request().has_list_services());
}

TEST(ReflectionAnswerTest, SendsTheFileOfASymbolWithEveryImportOnce) {
  reflection::ServerReflectionRequest request;
  ASSERT_NE(v1::Job::descriptor(), nullptr);  // ctxsel.proto is linked in
  request.set_file_containing_symbol("ctxsel.v1.Placement.Select");
  std::vector<std::string> files = FileNames(ReflectionAnswer(request, {}));
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files[0], "ctxsel/v1/ctxsel.proto");
  EXPECT_THAT(files, Contains("google/protobuf/duration.proto").Times(1));

  request.set_file_by_filename("google/protobuf/duration.proto");
  EXPECT_THAT(FileNames(ReflectionAnswer(request, {})),
              ElementsAre("google/protobuf/duration.proto"));
}

TEST(ReflectionAnswerTest, NamesWhatItDoesNotKnow) {
  reflection::ServerReflectionRequest request;
  request.set_file_containing_symbol("ctxsel.v1.Nothing");
  reflection::ServerReflectionResponse answer = ReflectionAnswer(request, {});
  EXPECT_EQ(answer.error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(answer.error_response().error_message(),
              HasSubstr("'ctxsel.v1.Nothing'"));

  request.mutable_file_containing_extension()->set_containing_type(
      "ctxsel.v1.Job");
  request.mutable_file_containing_extension()->set_extension_number(99);
  EXPECT_EQ(ReflectionAnswer(request, {}).error_response().error_code(),
            grpc::StatusCode::NOT_FOUND);

  request.set_all_extension_numbers_of_type("ctxsel.v1.Job");
  answer = ReflectionAnswer(request, {});
  EXPECT_FALSE(answer.has_error_response());
  EXPECT_EQ(answer.all_extension_numbers_response().base_type_name(),
            "ctxsel.v1.Job");

  EXPECT_EQ(ReflectionAnswer(reflection::ServerReflectionRequest(), {})
                .error_response()
                .error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace ctxsel::server
