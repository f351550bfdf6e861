#include "server/registry/variant_registry.h"

#include <filesystem>
#include <map>

#include "base/status_details.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/placer.h"
#include "server/store/sqlite_store.h"

namespace ctxsel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Records what the registry tells its observer.
class RecordingObserver : public VariantObserver {
 public:
  void KernelChanged(const std::string& kernel,
                     const std::vector<Variant>& variants) override {
    std::vector<std::string> names;
    for (const Variant& v : variants) names.push_back(v.name);
    kernels[kernel] = names;
    ++calls;
  }
  std::map<std::string, std::vector<std::string>> kernels;
  int calls = 0;
};

// A store whose writes fail, to check that nothing changes in memory.
class BrokenStore : public Store {
 public:
  absl::StatusOr<StoreContents> Load() override { return StoreContents{}; }
  absl::StatusOr<int64_t> Apply(const StoreBatch&) override {
    return absl::UnavailableError("disk on fire");
  }
  absl::StatusOr<StoreSummary> Backup(const std::string&) override {
    return absl::UnavailableError("disk on fire");
  }
  std::string Describe() const override { return "broken"; }
  absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() override {
    return std::vector<ClaimRecord>{};
  }
  absl::Status ApplyClaims(const ClaimBatch&) override {
    return absl::UnavailableError("disk on fire");
  }
};

class VariantRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(std::getenv("TEST_TMPDIR")) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    Reopen();
  }
  void Reopen() {
    registry_.reset();
    store_.reset();
    auto store = SqliteStore::Open(dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto registry = VariantRegistry::Open(store_.get(), &observer_);
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = *std::move(registry);
  }
  std::vector<std::string> Names(const std::string& kernel) {
    auto page = registry_->List(kernel, 0, "");
    EXPECT_TRUE(page.ok()) << page.status();
    std::vector<std::string> names;
    for (const Variant& v : page->variants) names.push_back(v.name);
    return names;
  }

  std::string dir_;
  RecordingObserver observer_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<VariantRegistry> registry_;
};

TEST_F(VariantRegistryTest, RegisterAssignsOrderAndRevision) {
  auto first = registry_->Register("saxpy",
                                   {{"nv", "device={arch(nvptx)}", {}},
                                    {"amd", "device={arch(amdgcn)}", {}}},
                                   false);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->revision, 1);
  EXPECT_EQ(first->variants[1].order, 1);
  auto second =
      registry_->Register("saxpy", {{"cpu", "device={kind(cpu)}", {}}}, false);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->revision, 2);
  EXPECT_EQ(second->variants[0].order, 2);
  EXPECT_EQ(second->variants[0].revision, 2);
  EXPECT_THAT(Names("saxpy"), ElementsAre("nv", "amd", "cpu"));
  EXPECT_THAT(observer_.kernels["saxpy"], ElementsAre("nv", "amd", "cpu"));
}

TEST_F(VariantRegistryTest, ExpectedRevisionGuardsTheKernel) {
  auto first =
      registry_->Register("saxpy", {{"nv", "device={arch(nvptx)}", {}}}, false);
  ASSERT_TRUE(first.ok()) << first.status();
  // Another kernel's change does not move saxpy's revision.
  ASSERT_TRUE(
      registry_->Register("daxpy", {{"nv", "device={arch(nvptx)}", {}}}, false)
          .ok());
  auto stale =
      registry_->Register("saxpy", {{"amd", "device={arch(amdgcn)}", {}}},
                          false, first->revision + 1);
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(
      stale.status().message(),
      HasSubstr(absl::StrCat("expected_revision: kernel saxpy is at "
                             "revision ",
                             first->revision, ", not ", first->revision + 1)));
  EXPECT_THAT(Names("saxpy"), ElementsAre("nv"));
  auto current = registry_->Register(
      "saxpy", {{"amd", "device={arch(amdgcn)}", {}}}, false, first->revision);
  ASSERT_TRUE(current.ok()) << current.status();
  // The revision it answered guards the next change; the old one no longer.
  EXPECT_FALSE(registry_
                   ->Register("saxpy", {{"cpu", "device={kind(cpu)}", {}}},
                              false, first->revision)
                   .ok());
  // After a reopen the kernel's revision is its newest variant's.
  Reopen();
  EXPECT_TRUE(registry_
                  ->Register("saxpy", {{"cpu", "device={kind(cpu)}", {}}},
                             false, current->revision)
                  .ok());
}

TEST_F(VariantRegistryTest, BadSelectorRejectsWholeBatch) {
  auto result =
      registry_->Register("saxpy",
                          {{"ok", "device={kind(gpu)}", {}},
                           {"bad", "device={kind(gpu)},\n devce={}", {}}},
                          false);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("variants[1] (bad).selector: 2:"));
  EXPECT_THAT(Names("saxpy"), IsEmpty());
  EXPECT_EQ(registry_->revision(), 0);
  EXPECT_EQ(observer_.calls, 0);
  auto stored = store_->Load();
  ASSERT_TRUE(stored.ok());
  EXPECT_THAT(stored->variants, IsEmpty());
}

TEST_F(VariantRegistryTest, RejectsEmptyBatchAndBadNames) {
  EXPECT_THAT(registry_->Register("k", {}, false).status().message(),
              HasSubstr("variants: empty batch"));
  EXPECT_THAT(registry_->Register("", {{"a", "device={kind(gpu)}", {}}}, false)
                  .status()
                  .message(),
              HasSubstr("kernel: empty"));
  EXPECT_THAT(registry_->Register("k", {{"", "device={kind(gpu)}", {}}}, false)
                  .status()
                  .message(),
              HasSubstr("variants[0].name: empty"));
  auto twice = registry_->Register(
      "k", {{"a", "device={kind(gpu)}", {}}, {"a", "device={kind(cpu)}", {}}},
      false);
  EXPECT_THAT(twice.status().message(), HasSubstr("repeated in the batch"));
}

TEST_F(VariantRegistryTest, ExistingNameIsAlreadyExistsUnlessReplacing) {
  ASSERT_TRUE(
      registry_->Register("k", {{"a", "device={kind(gpu)}", {}}}, false).ok());
  auto again =
      registry_->Register("k", {{"a", "device={kind(cpu)}", {}}}, false);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  auto replaced = registry_->Register(
      "k", {{"b", "device={kind(cpu)}", {}}, {"a", "device={kind(cpu)}", {}}},
      true);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_THAT(Names("k"), ElementsAre("b", "a"));
  EXPECT_EQ(replaced->variants[0].order, 0);
}

TEST_F(VariantRegistryTest, StoreFailureChangesNothing) {
  BrokenStore broken;
  RecordingObserver observer;
  auto registry = VariantRegistry::Open(&broken, &observer);
  ASSERT_TRUE(registry.ok());
  auto result =
      (*registry)->Register("k", {{"a", "device={kind(gpu)}", {}}}, false);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ((*registry)->revision(), 0);
  EXPECT_EQ((*registry)->kernel_count(), 0u);
  EXPECT_EQ(observer.calls, 0);
}

TEST_F(VariantRegistryTest, SurvivesReopen) {
  VariantMetadata metadata;
  metadata.adjust_args = {"need_device_ptr: x"};
  metadata.source_file = "k.c";
  metadata.source_line = 7;
  ASSERT_TRUE(registry_
                  ->Register("k",
                             {{"a", "device={kind(gpu)}", metadata},
                              {"b", "user={condition(n > 4)}", {}}},
                             false)
                  .ok());
  ASSERT_TRUE(registry_->Delete("k", "a").ok());
  observer_ = RecordingObserver();
  Reopen();
  EXPECT_EQ(registry_->revision(), 2);
  EXPECT_THAT(Names("k"), ElementsAre("b"));
  EXPECT_THAT(observer_.kernels["k"], ElementsAre("b"));
  auto b = registry_->Get("k", "b");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->selector.is_dynamic());
  EXPECT_EQ(b->order, 1);
}

TEST_F(VariantRegistryTest, GetAndDeleteUnknownAreNotFound) {
  EXPECT_EQ(registry_->Get("k", "a").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(registry_->Delete("k", "a").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(VariantRegistryTest, ListPagesAcrossKernels) {
  for (const char* kernel : {"a", "b", "c"}) {
    ASSERT_TRUE(registry_
                    ->Register(kernel,
                               {{"v0", "device={kind(gpu)}", {}},
                                {"v1", "device={kind(cpu)}", {}}},
                               false)
                    .ok());
  }
  std::vector<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    auto page = registry_->List("", 4, token);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const Variant& v : page->variants) seen.push_back(v.kernel + v.name);
    token = page->next_page_token;
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 2);
  EXPECT_THAT(seen, ElementsAre("av0", "av1", "bv0", "bv1", "cv0", "cv1"));
  EXPECT_THAT(Names("b"), ElementsAre("v0", "v1"));
  EXPECT_EQ(registry_->List("", 1, "garbage!").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Issue 15: empty keys were NOT_FOUND, and a token sent with another
// kernel filter was accepted.
TEST_F(VariantRegistryTest, EmptyKeysAndForeignTokensAreInvalidArguments) {
  for (const char* kernel : {"a", "b"}) {
    ASSERT_TRUE(registry_
                    ->Register(kernel,
                               {{"v0", "device={kind(gpu)}", {}},
                                {"v1", "device={kind(cpu)}", {}}},
                               false)
                    .ok());
  }
  EXPECT_EQ(registry_->Get("", "v0").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry_->Get("a", "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry_->Delete("", "v0").status().code(),
            absl::StatusCode::kInvalidArgument);
  auto all = registry_->DeleteAllVariants("");
  EXPECT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetDetail<google::rpc::BadRequest>(all.status())
                ->field_violations(0)
                .field(),
            "kernel");
  auto missing = registry_->Get("a", "nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(
      GetDetail<google::rpc::ResourceInfo>(missing.status())->resource_name(),
      "a/nope");

  auto first = registry_->List("a", 1, "");
  ASSERT_TRUE(first.ok());
  ASSERT_FALSE(first->next_page_token.empty());
  EXPECT_TRUE(registry_->List("a", 1, first->next_page_token).ok());
  EXPECT_EQ(registry_->List("b", 1, first->next_page_token).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(VariantRegistryTest, BadSelectorNamesFieldLineAndColumn) {
  auto r = registry_->Register("k", {{"nv", "device={arch(nvptx)", {}}}, false);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetDetail<google::rpc::BadRequest>(r.status())
                ->field_violations(0)
                .field(),
            "variants[0].selector");
  auto info = GetDetail<google::rpc::ErrorInfo>(r.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "SELECTOR_INVALID");
  EXPECT_EQ(info->metadata().at("kernel"), "k");
  EXPECT_EQ(info->metadata().at("line"), "1");
  EXPECT_FALSE(info->metadata().at("column").empty());
}

// Pages also end by bytes (PageBudget): here each variant counts as its
// selector's length, and a page may hold 40 bytes.
TEST_F(VariantRegistryTest, ListPagesEndBeforeTheByteBudget) {
  ASSERT_TRUE(registry_
                  ->Register("k",
                             {{"v0", "device={kind(gpu)}", {}},      // 18
                              {"v1", "device={kind(cpu)}", {}},      // 18
                              {"v2", "device={kind(gpu)}    ", {}},  // 22
                              {"v3", "device={kind(gpu)}", {}}},
                             false)
                  .ok());
  auto by_selector = [](const Variant& v) { return v.selector_text.size(); };
  std::vector<std::vector<std::string>> pages;
  std::string token;
  do {
    auto page =
        registry_->List("k", 0, token, PageBudget<Variant>(40, by_selector));
    ASSERT_TRUE(page.ok()) << page.status();
    pages.emplace_back();
    for (const Variant& v : page->variants) pages.back().push_back(v.name);
    token = page->next_page_token;
  } while (!token.empty() && pages.size() < 10);
  EXPECT_THAT(pages,
              ElementsAre(ElementsAre("v0", "v1"), ElementsAre("v2", "v3")));

  // A variant too large for any page is an error naming it.
  auto too_small =
      registry_->List("k", 0, "", PageBudget<Variant>(10, by_selector));
  EXPECT_EQ(too_small.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(too_small.status().message(), HasSubstr("variant k/v0"));
}

TEST_F(VariantRegistryTest, ReplaceKeepsTheBatchsDeclarationOrder) {
  ASSERT_TRUE(registry_
                  ->Register("k",
                             {{"a", "device={kind(gpu)}", {}},
                              {"b", "device={kind(cpu)}", {}},
                              {"c", "device={kind(host)}", {}}},
                             false)
                  .ok());
  // Re-registering the same declarations (one selector changed) must not
  // move the changed one: equal scores go to the lower order.
  auto replaced = registry_->Register("k",
                                      {{"a", "device={kind(gpu)}", {}},
                                       {"b", "device={kind(nohost)}", {}},
                                       {"c", "device={kind(host)}", {}}},
                                      true);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  Reopen();
  EXPECT_THAT(Names("k"), ElementsAre("a", "b", "c"));
  for (int i = 0; i < 3; ++i) {
    auto v = registry_->Get("k", std::string(1, static_cast<char>('a' + i)));
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->order, i);
  }
}

TEST_F(VariantRegistryTest, DeleteAllVariantsIsOneAtomicChange) {
  ASSERT_TRUE(registry_
                  ->Register("k",
                             {{"a", "device={kind(gpu)}", {}},
                              {"b", "device={kind(cpu)}", {}}},
                             false)
                  .ok());
  ASSERT_TRUE(
      registry_->Register("other", {{"x", "device={kind(gpu)}", {}}}, false)
          .ok());
  auto revision = registry_->DeleteAllVariants("k");
  ASSERT_TRUE(revision.ok()) << revision.status();
  EXPECT_EQ(*revision, 3);  // one revision for the whole kernel
  EXPECT_THAT(observer_.kernels["k"], IsEmpty());
  EXPECT_THAT(Names("k"), IsEmpty());
  EXPECT_EQ(registry_->DeleteAllVariants("k").status().code(),
            absl::StatusCode::kNotFound);
  Reopen();
  EXPECT_THAT(Names("k"), IsEmpty());
  EXPECT_THAT(Names("other"), ElementsAre("x"));
  EXPECT_EQ(registry_->revision(), 3);
}

TEST_F(VariantRegistryTest, DeleteAllVariantsStoreFailureChangesNothing) {
  BrokenStore broken;
  RecordingObserver observer;
  auto registry = VariantRegistry::Open(&broken, &observer);
  ASSERT_TRUE(registry.ok());
  EXPECT_EQ((*registry)->DeleteAllVariants("k").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(observer.calls, 0);
}

}  // namespace
}  // namespace ctxsel::server

namespace ctxsel::server {
namespace {

// Hands every committed list to a real Placer and keeps what it answered.
class PlacementObserver : public VariantObserver {
 public:
  void KernelChanged(const std::string& kernel,
                     const std::vector<Variant>& variants) override {
    answers.push_back(placer.SetVariants(kernel, variants));
  }
  placement::Placer placer;
  std::vector<absl::Status> answers;
};

// Issue 11: the registry and placement each checked a kernel's list, and
// where they disagreed the RPC reported success while placement kept the
// old list. One check now (kernel_variants.h): whatever the registry
// stores, placement takes; whatever placement would refuse, the registry
// refuses before it stores.
TEST_F(VariantRegistryTest, PlacementTakesEveryListTheRegistryStores) {
  PlacementObserver placement;
  auto registry = VariantRegistry::Open(store_.get(), &placement);
  ASSERT_TRUE(registry.ok()) << registry.status();
  struct Step {
    std::string kernel;
    std::vector<std::string> names;
    bool replace;
    absl::StatusCode code;
  };
  const Step steps[] = {
      {"k", {"a", "b"}, false, absl::StatusCode::kOk},
      {"k", {"c"}, false, absl::StatusCode::kOk},
      {"k", {"a"}, false, absl::StatusCode::kAlreadyExists},
      {"k", {"d", "d"}, false, absl::StatusCode::kInvalidArgument},
      {"k", {"d", "d"}, true, absl::StatusCode::kInvalidArgument},
      {"k", {"a", "c"}, true, absl::StatusCode::kOk},
      {"k", {"b"}, false, absl::StatusCode::kOk},
      {"", {"a"}, false, absl::StatusCode::kInvalidArgument},
      {" k", {"a"}, false, absl::StatusCode::kInvalidArgument},
  };
  size_t stored = 0;
  for (const Step& step : steps) {
    std::vector<VariantSpec> specs;
    for (const std::string& name : step.names) {
      specs.push_back({name, "device={kind(gpu)}", {}});
    }
    auto result = (*registry)->Register(step.kernel, specs, step.replace);
    EXPECT_EQ(result.status().code(), step.code)
        << step.kernel << " " << result.status();
    if (result.ok()) ++stored;
    // Placement hears of stored lists only, and takes every one.
    ASSERT_EQ(placement.answers.size(), stored);
    if (stored > 0) {
      EXPECT_TRUE(placement.answers.back().ok());
    }
  }
  // The kernel's last stored list, as placement holds it.
  auto variants = (*registry)->List("k", 0, "");
  ASSERT_TRUE(variants.ok());
  std::vector<std::string> names;
  for (const Variant& v : variants->variants) names.push_back(v.name);
  EXPECT_THAT(names, ElementsAre("a", "c", "b"));
}

}  // namespace
}  // namespace ctxsel::server
