#include "client/cli/select_answer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Pair;

v1::PlacementChoice Gpu(int n, bool base = false) {
  v1::PlacementChoice p;
  p.set_variant(base ? "" : "saxpy_nv");
  p.set_base(base);
  p.set_node("n1");
  v1::Device* d = p.mutable_device();
  d->set_id("n1/gpu" + std::to_string(n));
  d->set_index(n);
  d->set_uuid("GPU-" + std::to_string(n));
  d->mutable_traits()->add_kind("gpu");
  d->mutable_traits()->add_vendor("nvidia");
  d->set_vendor_index(n);
  return p;
}

v1::PlacementChoice Cpu(bool base) {
  v1::PlacementChoice p;
  p.set_variant(base ? "" : "saxpy_avx512");
  p.set_base(base);
  p.set_node("n1");
  v1::Device* d = p.mutable_device();
  d->set_id("n1/cpu0");
  d->set_index(-1);
  d->mutable_traits()->add_kind("cpu");
  d->mutable_traits()->add_kind("host");
  return p;
}

v1::SelectRequest Request(int count = 0) {
  v1::SelectRequest request;
  request.mutable_job()->set_kernel("saxpy");
  request.mutable_job()->set_count(count);
  return request;
}

// What the server answers: ranks[0] repeats placement and claim.
v1::SelectResponse Answer(const std::vector<v1::PlacementChoice>& ranks) {
  v1::SelectResponse answer;
  *answer.mutable_placement() = ranks[0];
  for (size_t i = 0; i < ranks.size(); ++i) {
    v1::RankPlacement* r = answer.add_ranks();
    r->set_rank(i);
    *r->mutable_placement() = ranks[i];
    r->mutable_claim()->set_id("c-" + std::to_string(i));
    v1::EnvironmentVariable* v = r->add_environment();
    v->set_name("CTXSEL_DEVICE");
    v->set_value(ranks[i].device().id());
  }
  *answer.mutable_claim() = answer.ranks(0).claim();
  return answer;
}

TEST(SelectAnswerTest, RanksComeFromTheServer) {
  const v1::SelectResponse answer = Answer({Gpu(0), Gpu(1)});
  EXPECT_EQ(RankCount(answer), 2);
  EXPECT_EQ(RankPlacement(answer, 1).device().id(), "n1/gpu1");
  EXPECT_EQ(RankClaim(answer, 1).id(), "c-1");
  EXPECT_EQ(RankEnv(Request(2), answer, 1),
            (EnvVars{{"CTXSEL_DEVICE", "n1/gpu1"}}));
}

// A server before SelectResponse.ranks: one rank, its environment computed
// here with the same rule.
TEST(SelectAnswerTest, AnOlderServersAnswerIsOneRank) {
  v1::SelectResponse answer;
  *answer.mutable_placement() = Gpu(1);
  answer.mutable_claim()->set_id("c-9");
  EXPECT_EQ(RankCount(answer), 1);
  EXPECT_EQ(RankClaim(answer, 0).id(), "c-9");
  const EnvVars env = RankEnv(Request(), answer, 0);
  EXPECT_THAT(env, Contains(Pair("CTXSEL_CLAIM", "c-9")));
  EXPECT_THAT(env, Contains(Pair("CUDA_VISIBLE_DEVICES", "GPU-1")));
}

TEST(FallbackNoteTest, SaysWhatTheJobDidNotRuleOut) {
  EXPECT_EQ(FallbackNote(Request(), Answer({Gpu(0)})), "");
  EXPECT_EQ(FallbackNote(Request(), Answer({Gpu(0, /*base=*/true)})),
            "placed the base function of saxpy (no variant fits); add "
            "--require_variant to fail instead");
  EXPECT_EQ(FallbackNote(Request(), Answer({Cpu(false)})),
            "placed saxpy_avx512 on the host CPU n1/cpu0; add --require=gpu "
            "to fail instead");
  EXPECT_EQ(FallbackNote(Request(), Answer({Cpu(true)})),
            "placed the base function of saxpy on the host CPU n1/cpu0 (no "
            "variant fits); add --require_variant or --require=gpu to fail "
            "instead");
  // A job that asked for the CPU gets no note for it.
  v1::SelectRequest cpu_job = Request();
  cpu_job.mutable_job()->set_required_kind("cpu");
  EXPECT_EQ(FallbackNote(cpu_job, Answer({Cpu(false)})), "");
}

TEST(FallbackNoteTest, NamesTheRankAndHonoursTheOnePrinted) {
  const v1::SelectResponse answer = Answer({Gpu(0), Cpu(false)});
  EXPECT_THAT(FallbackNote(Request(2), answer), HasSubstr(" for rank 1;"));
  EXPECT_EQ(FallbackNote(Request(2), answer, 0), "");
  EXPECT_THAT(FallbackNote(Request(2), answer, 1), HasSubstr("n1/cpu0"));
}

TEST(CheckTermsTest, AnAnswerThatIgnoresTheJobFails) {
  EXPECT_TRUE(CheckTerms(Request(2), Answer({Gpu(0), Gpu(1)})).ok());
  const struct {
    v1::SelectRequest request;
    v1::SelectResponse answer;
    const char* says;
  } cases[] = {
      {Request(2), Answer({Gpu(0)}), "1 placements for Job.count 2"},
      {[] {
         v1::SelectRequest r = Request();
         r.mutable_job()->add_allowed_devices("n1/gpu1");
         return r;
       }(),
       Answer({Gpu(0)}), "n1/gpu0, not in Job.allowed_devices"},
      {[] {
         v1::SelectRequest r = Request();
         r.mutable_job()->set_required_kind("gpu");
         return r;
       }(),
       Answer({Cpu(false)}), "n1/cpu0, not of Job.required_kind gpu"},
      {[] {
         v1::SelectRequest r = Request();
         r.mutable_job()->set_require_variant(true);
         return r;
       }(),
       Answer({Gpu(0, true)}), "the base function despite"},
      // A server from before Job.images answers no image.
      {[] {
         v1::SelectRequest r = Request();
         r.mutable_job()->add_images("cubin:sm_90");
         return r;
       }(),
       Answer({Gpu(0)}), "n1/gpu0, which runs none of Job.images"},
  };
  for (const auto& c : cases) {
    absl::Status terms = CheckTerms(c.request, c.answer);
    EXPECT_EQ(terms.code(), absl::StatusCode::kFailedPrecondition) << c.says;
    EXPECT_THAT(terms.message(), HasSubstr(c.says));
  }
  // A UUID in allowed_devices admits its device.
  v1::SelectRequest by_uuid = Request();
  by_uuid.mutable_job()->add_allowed_devices("GPU-0");
  EXPECT_TRUE(CheckTerms(by_uuid, Answer({Gpu(0)})).ok());
  v1::SelectRequest with_images = Request();
  with_images.mutable_job()->add_images("cubin:sm_90");
  v1::PlacementChoice runs = Gpu(0);
  runs.set_image("cubin:sm_90");
  EXPECT_TRUE(CheckTerms(with_images, Answer({runs})).ok());
}

}  // namespace
}  // namespace ctxsel::cli
