#include "server/rpc/proto_convert.h"

#include <map>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "base/status_details.h"
#include "gmock/gmock.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "server/model/policy.h"

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
  // An unset claim_capacity is the default, 1; others pass through.
  EXPECT_EQ(device.properties.claim_capacity, 1);
  EXPECT_EQ(out.claim_capacity(), 1);
  in.set_claim_capacity(4);
  EXPECT_EQ(DeviceFromProto(in).properties.claim_capacity, 4);
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
  in.set_policy(v1::POLICY_PACK);
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
              HasSubstr("job.construct[0].name: empty construct name"));
  // The typos, each named with a suggestion.
  in.mutable_construct(0)->set_name("tget");
  EXPECT_THAT(JobFromProto(in).status().message(),
              HasSubstr("job.construct[0].name: 'tget' is not an OpenMP "
                        "construct; did you mean 'target'?"));
  in.mutable_construct(0)->set_name("target");
  in.mutable_implementation()->add_requirements("unified_shared_mem");
  EXPECT_THAT(JobFromProto(in).status().message(),
              HasSubstr("job.implementation.requirements[0]: "
                        "'unified_shared_mem' is not a requires clause; did "
                        "you mean 'unified_shared_memory'?"));
  in.mutable_implementation()->set_requirements(0, "unified_shared_memory");
  in.mutable_implementation()->set_atomic_default_mem_order("seqcst");
  EXPECT_THAT(JobFromProto(in).status().message(),
              HasSubstr("job.implementation.atomic_default_mem_order: "
                        "'seqcst'"));
  in.mutable_implementation()->set_atomic_default_mem_order("seq_cst");
  in.set_policy(static_cast<v1::Policy>(42));
  EXPECT_THAT(JobFromProto(in).status().message(),
              HasSubstr("job.policy: unknown value 42"));
  in.set_policy(v1::POLICY_SPREAD);
  in.set_top_k(-1);
  EXPECT_THAT(JobFromProto(in).status().message(), HasSubstr("job.top_k"));
}

// A choice of a gpu of `vendor` (empty: none reported).
placement::Choice TestChoice(const std::string& variant, const std::string& id,
                             uint64_t score, const std::string& vendor = "") {
  placement::Choice choice;
  if (!variant.empty()) {
    absl::StatusOr<selector::Selector> parsed =
        selector::Selector::Parse("device={kind(gpu)}");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    choice.variant = std::make_shared<Variant>(
        Variant{"saxpy", variant, "device={kind(gpu)}", *parsed, 0, 1, {}});
  }
  choice.device.id = id;
  choice.device.node = id.substr(0, id.find('/'));
  choice.device.index = 1;
  choice.device.properties.utilisation = 0.5;
  selector::DeviceTraits traits;
  traits.kind = {"gpu"};
  if (!vendor.empty()) traits.vendor = {vendor};
  choice.device_class = std::make_shared<placement::DeviceClass>(
      placement::MakeDeviceClass(1, traits, ""));
  choice.score = score;
  choice.dynamic = score > 0;
  return choice;
}

TEST(ProtoConvertTest, ChoiceCarriesDeviceAndClass) {
  v1::PlacementChoice out;
  ChoiceToProto(TestChoice("saxpy_cuda", "n1/gpu1", 7), &out);
  EXPECT_EQ(out.variant(), "saxpy_cuda");
  EXPECT_FALSE(out.base());
  EXPECT_EQ(out.node(), "n1");
  EXPECT_EQ(out.device().id(), "n1/gpu1");
  EXPECT_EQ(out.device().index(), 1);
  EXPECT_THAT(out.device().traits().kind(), ElementsAre("gpu"));
  EXPECT_EQ(out.device().utilisation(), 0.5);
  EXPECT_EQ(out.device().device_class(), "device={kind(gpu)}");
  EXPECT_EQ(out.device_class(), "device={kind(gpu)}");
  EXPECT_EQ(out.device_class_short_name(), "gpu");
  EXPECT_EQ(out.device().device_class_short_name(), "gpu");
  EXPECT_EQ(out.score(), 7u);
  EXPECT_TRUE(out.dynamic());

  v1::PlacementChoice base;
  ChoiceToProto(TestChoice("", "n2/gpu0", 0), &base);
  EXPECT_TRUE(base.base());
  EXPECT_EQ(base.variant(), "");
  EXPECT_EQ(base.node(), "n2");
  EXPECT_FALSE(base.dynamic());
}

// Each rank carries its claim and the environment the server computed, so
// that no client maps vendors to variables on its own.
TEST(ProtoConvertTest, PlacementRanksCarryClaimAndEnvironment) {
  placement::Placement placement;
  placement.choice = TestChoice("saxpy_cuda", "n1/gpu0", 9, "nvidia");
  placement.choice.device.identity.uuid = "GPU-0000";
  placement.ranks = {placement.choice, placement.choice};
  placement.ranks[1].device.id = "n1/gpu1";
  placement.ranks[1].device.identity.uuid = "GPU-1111";
  std::vector<Claim> claims(2);
  claims[0].id = "c-0";
  claims[1].id = "c-1";
  v1::SelectResponse out;
  PlacementToProto(placement, "saxpy", claims, &out);
  EXPECT_EQ(out.claim().id(), "c-0");
  ASSERT_EQ(out.ranks_size(), 2);
  auto env = [&](int rank) {
    std::map<std::string, std::string> vars;
    for (const v1::EnvironmentVariable& v : out.ranks(rank).environment()) {
      vars[v.name()] = v.value();
    }
    return vars;
  };
  EXPECT_EQ(out.ranks(1).rank(), 1);
  EXPECT_EQ(out.ranks(1).placement().device().id(), "n1/gpu1");
  EXPECT_EQ(out.ranks(1).claim().id(), "c-1");
  EXPECT_EQ(env(0)["CUDA_VISIBLE_DEVICES"], "GPU-0000");
  EXPECT_EQ(env(1)["CUDA_VISIBLE_DEVICES"], "GPU-1111");
  EXPECT_EQ(env(1)["CTXSEL_CLAIM"], "c-1");
  EXPECT_EQ(env(1)["CTXSEL_VARIANT"], "saxpy_cuda");

  // A one-device answer without a claim still has its one rank.
  placement.ranks.clear();
  v1::SelectResponse one;
  PlacementToProto(placement, "saxpy", {}, &one);
  ASSERT_EQ(one.ranks_size(), 1);
  EXPECT_FALSE(one.has_claim());
  EXPECT_EQ(one.ranks(0).placement().device().id(), "n1/gpu0");
}

TEST(ProtoConvertTest, PlacementKeepsAlternativesInOrder) {
  placement::Placement placement;
  placement.choice = TestChoice("a", "n1/gpu0", 9);
  placement.explanation = "class gpu-nvptx won";
  placement.alternatives = {TestChoice("a", "n2/gpu0", 9),
                            TestChoice("", "n3/cpu", 0)};
  v1::SelectResponse out;
  PlacementToProto(placement, "saxpy", {}, &out);
  EXPECT_EQ(out.placement().device().id(), "n1/gpu0");
  EXPECT_EQ(out.explanation(), "class gpu-nvptx won");
  ASSERT_EQ(out.alternatives_size(), 2);
  EXPECT_EQ(out.alternatives(0).device().id(), "n2/gpu0");
  EXPECT_TRUE(out.alternatives(1).base());
}

placement::ClassReport TestClass() {
  placement::ClassReport report;
  report.device_class = "gpu-nvptx";
  report.traits.arch = {"sm_90", "nvptx"};
  report.sycl_architecture = "nvidia_gpu_sm_90";
  report.node_layout = "-1:x86_64_v4/avx512,0:nvidia_gpu_sm_90";
  report.device_count = 4;
  report.eligible_device_count = 3;
  report.eligible = true;
  report.winner = true;
  report.explanation.selection.index = 1;
  report.explanation.selection.score = 12;
  selector::CandidateReport skipped;
  skipped.name = "v0";
  skipped.selector = "device={kind(fpga)}";
  skipped.reason = "device.kind: fpga";
  selector::CandidateReport chosen;
  chosen.name = "v1";
  chosen.selector = "device={arch(nvptx)}";
  chosen.dynamic = true;
  chosen.compatible = true;
  chosen.score = 12;
  chosen.terms = {{"device.arch", 12}};
  chosen.subset_of = "v2";
  chosen.rank = 0;
  chosen.in_dynamic_prefix = true;
  chosen.evaluated = true;
  chosen.selected = true;
  report.explanation.candidates = {skipped, chosen};
  return report;
}

TEST(ProtoConvertTest, ReportCarriesClassesAndCandidates) {
  placement::PlacementReport report;
  report.placement.choice = TestChoice("v1", "n1/gpu0", 12);
  report.classes = {TestClass()};
  v1::ExplainResponse out;
  ReportToProto(report, &out);
  EXPECT_EQ(out.placement().variant(), "v1");
  EXPECT_EQ(out.text(), report.ToText());
  ASSERT_EQ(out.classes_size(), 1);
  const v1::DeviceClassReport& c = out.classes(0);
  EXPECT_EQ(c.device_class(), "gpu-nvptx");
  EXPECT_THAT(c.traits().arch(), ElementsAre("nvptx", "sm_90"));
  EXPECT_EQ(c.sycl_architecture(), "nvidia_gpu_sm_90");
  EXPECT_EQ(c.node_layout(), "-1:x86_64_v4/avx512,0:nvidia_gpu_sm_90");
  EXPECT_EQ(c.device_count(), 4);
  EXPECT_EQ(c.eligible_device_count(), 3);
  EXPECT_TRUE(c.eligible());
  EXPECT_TRUE(c.winner());
  EXPECT_FALSE(c.base());
  EXPECT_EQ(c.score(), 12u);
  EXPECT_EQ(c.selected_variant(), "v1");
  ASSERT_EQ(c.candidates_size(), 2);
  EXPECT_EQ(c.candidates(0).variant(), "v0");
  EXPECT_EQ(c.candidates(0).reason(), "device.kind: fpga");
  EXPECT_FALSE(c.candidates(0).compatible());
  EXPECT_EQ(c.candidates(0).rank(), -1);
  const v1::CandidateReport& chosen = c.candidates(1);
  EXPECT_EQ(chosen.selector(), "device={arch(nvptx)}");
  EXPECT_TRUE(chosen.dynamic());
  EXPECT_TRUE(chosen.compatible());
  EXPECT_EQ(chosen.score(), 12u);
  ASSERT_EQ(chosen.terms_size(), 1);
  EXPECT_EQ(chosen.terms(0).trait(), "device.arch");
  EXPECT_EQ(chosen.terms(0).value(), 12u);
  EXPECT_EQ(chosen.subset_of(), "v2");
  EXPECT_EQ(chosen.rank(), 0);
  EXPECT_TRUE(chosen.in_dynamic_prefix());
  EXPECT_TRUE(chosen.evaluated());
  EXPECT_TRUE(chosen.selected());
}

TEST(ProtoConvertTest, FailedReportHasNoPlacement) {
  placement::PlacementReport report;
  report.status = absl::FailedPreconditionError("no compatible device");
  placement::ClassReport rejected;
  rejected.device_class = "cpu-x86_64";
  rejected.reason = "excluded by device_filter";
  report.classes = {rejected};
  v1::ExplainResponse out;
  ReportToProto(report, &out);
  EXPECT_FALSE(out.has_placement());
  ASSERT_EQ(out.classes_size(), 1);
  EXPECT_FALSE(out.classes(0).eligible());
  EXPECT_EQ(out.classes(0).reason(), "excluded by device_filter");
  EXPECT_TRUE(out.classes(0).base());
  EXPECT_EQ(out.classes(0).candidates_size(), 0);
  EXPECT_THAT(out.text(), HasSubstr("no compatible device"));
}

// The proto enum and policy.def list the same policies: every ctxsel.v1
// value maps to the policy of the same name (the CLI spells --policy as the
// lower-case proto name without its POLICY_ prefix), and every policy has a
// value.
TEST(ProtoConvertTest, ProtoPoliciesAreThePolicyTable) {
  const google::protobuf::EnumDescriptor* policies = v1::Policy_descriptor();
  absl::flat_hash_set<Policy> reached;
  for (int i = 0; i < policies->value_count(); ++i) {
    const google::protobuf::EnumValueDescriptor* value = policies->value(i);
    v1::Job in;
    in.set_kernel("k");
    in.set_policy(static_cast<v1::Policy>(value->number()));
    absl::StatusOr<Job> job = JobFromProto(in);
    ASSERT_TRUE(job.ok()) << value->name() << ": " << job.status();
    if (value->number() == v1::POLICY_UNSPECIFIED) {
      EXPECT_EQ(job->policy, kDefaultPolicy);
      continue;
    }
    EXPECT_EQ(absl::StrCat("policy_", PolicyName(job->policy)),
              absl::AsciiStrToLower(value->name()));
    EXPECT_TRUE(reached.insert(job->policy).second)
        << value->name() << " maps to a policy already reached";
  }
  EXPECT_EQ(reached.size(), AllPolicies().size());
}

TEST(ProtoConvertTest, StatusKeepsCodeAndMessage) {
  grpc::Status s = ToGrpcStatus(absl::FailedPreconditionError("no device"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "no device");
}

TEST(ProtoConvertTest, CoverageRequestIsCheckedFieldByField) {
  v1::CoverageRequest request;
  request.mutable_job()->set_kernel("saxpy");
  request.add_construct_lists()->add_construct()->set_name("target");
  v1::VariableRange* n = request.add_variable_ranges();
  n->set_name("N");
  n->add_values(1);
  n->add_values(4096);
  v1::Variant* with = request.add_with_variants();
  with->set_name("saxpy_gpu");
  with->set_selector("device={kind(gpu)}");
  request.add_without_variants("saxpy_nv");
  v1::Node* node = request.add_hypothetical_nodes();
  node->set_id("rack1");
  v1::Device* gpu = node->add_devices();
  gpu->set_index(0);
  gpu->set_sycl_architecture("amd_gpu_gfx90a");
  absl::StatusOr<placement::CoverageQuery> q = CoverageQueryFromProto(request);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->construct_lists.size(), 1u);
  EXPECT_EQ(q->construct_lists[0][0].name, "target");
  ASSERT_EQ(q->variable_ranges.size(), 1u);
  EXPECT_THAT(q->variable_ranges[0].second, ElementsAre(1, 4096));
  ASSERT_EQ(q->with_variants.size(), 1u);
  EXPECT_EQ(q->with_variants[0].kernel, "saxpy");
  EXPECT_THAT(q->without_variants, ElementsAre("saxpy_nv"));
  // Normalised as a node report: id, node and catalog traits filled in.
  ASSERT_EQ(q->hypothetical_devices.size(), 1u);
  EXPECT_EQ(q->hypothetical_devices[0].node, "rack1");
  EXPECT_TRUE(q->hypothetical_devices[0].traits.arch.contains("amdgcn"));

  v1::CoverageRequest bad = request;
  bad.mutable_with_variants(0)->set_selector("devce={}");
  EXPECT_THAT(std::string(CoverageQueryFromProto(bad).status().message()),
              HasSubstr("with_variants[0] (saxpy_gpu).selector: 1:1"));
  bad = request;
  bad.mutable_construct_lists(0)->mutable_construct(0)->set_name("tget");
  EXPECT_THAT(std::string(CoverageQueryFromProto(bad).status().message()),
              HasSubstr("construct_lists[0].construct[0].name: 'tget'"));
  bad = request;
  bad.mutable_hypothetical_nodes(0)->mutable_devices(0)->set_utilisation(2);
  EXPECT_THAT(std::string(CoverageQueryFromProto(bad).status().message()),
              HasSubstr("hypothetical_nodes[0]: "));
}

}  // namespace
}  // namespace ctxsel::server
