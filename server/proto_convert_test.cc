#include "server/proto_convert.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ProtoConvertTest, DeviceRoundTrips) {
  v1::Device in;
  in.set_id("n1/0");
  in.set_node("n1");
  in.set_index(0);
  in.mutable_traits()->add_kind("nohost");
  in.mutable_traits()->add_kind("gpu");
  in.mutable_traits()->add_arch("nvptx");
  in.set_sycl_architecture("nvidia_gpu_sm_90");
  in.set_memory_bytes(80ull << 30);
  in.set_compute_units(132);
  in.set_utilisation(0.25);
  Device device = DeviceFromProto(in);
  EXPECT_TRUE(device.traits.kind.contains("gpu"));
  v1::Device out;
  DeviceToProto(device, &out);
  // Trait lists come back sorted.
  EXPECT_THAT(out.traits().kind(), ElementsAre("gpu", "nohost"));
  EXPECT_EQ(out.memory_bytes(), 80ull << 30);
  EXPECT_EQ(out.compute_units(), 132);
  EXPECT_EQ(out.utilisation(), 0.25);
  EXPECT_EQ(out.sycl_architecture(), "nvidia_gpu_sm_90");
}

TEST(ProtoConvertTest, JobFromProto) {
  v1::Job in;
  in.set_kernel("saxpy");
  in.add_construct()->set_name("target");
  v1::ConstructTrait* simd = in.add_construct();
  simd->set_name("simd");
  simd->set_simdlen(8);
  (*simd->mutable_aligned())["a"] = 64;
  in.mutable_implementation()->add_requirements("unified_shared_memory");
  (*in.mutable_variables())["N"] = 4096;
  in.set_policy(v1::PACK);
  in.add_nodes("n1");
  absl::StatusOr<Job> job = JobFromProto(in);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->construct.size(), 2u);
  EXPECT_EQ(job->construct[1].simdlen, 8);
  EXPECT_EQ(job->construct[1].aligned.at("a"), 64);
  EXPECT_TRUE(job->implementation.requires_.contains("unified_shared_memory"));
  EXPECT_EQ(job->variables.at("N"), 4096);
  EXPECT_EQ(job->policy, Policy::kPack);
  EXPECT_THAT(job->nodes, ElementsAre("n1"));
}

TEST(ProtoConvertTest, BadJobFieldsAreNamed) {
  v1::Job in;
  EXPECT_THAT(JobFromProto(in).status().message(), HasSubstr("job.kernel"));
  in.set_kernel("k");
  in.add_construct();
  EXPECT_THAT(JobFromProto(in).status().message(),
              HasSubstr("job.construct[0].name: empty"));
  in.mutable_construct(0)->set_name("target");
  in.set_policy(static_cast<v1::Policy>(42));
  EXPECT_THAT(JobFromProto(in).status().message(),
              HasSubstr("job.policy: unknown value 42"));
  in.set_policy(v1::SPREAD);
  in.set_top_k(-1);
  EXPECT_THAT(JobFromProto(in).status().message(), HasSubstr("job.top_k"));
}

TEST(ProtoConvertTest, StatusKeepsCodeAndMessage) {
  grpc::Status s = ToGrpcStatus(absl::FailedPreconditionError("no device"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "no device");
}

}  // namespace
}  // namespace ctxsel::server
