// Every error path of the real ctxsel-server, one row each: the request
// (through the generated C++ stubs, as any gRPC client sends it), and the
// code, ErrorInfo.reason and BadRequest field that come back. Every
// INVALID_ARGUMENT names its field, every answer a reason of
// base/error_reasons.def (never the code's name, status_details' defensive
// default), and every reason of the table is produced by a row here or is
// listed, with why, in kNotDrivenHere.
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/error_reasons.h"
#include "base/status_details.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

// Reasons a single plaintext SQLite server cannot be made to send, each
// with where it is made (and tested) instead.
const std::map<std::string, std::string> kNotDrivenHere = {
    {kReasonStoreConflict, "two replicas on etcd (server/store/etcd)"},
    {kReasonStoreUnavailable, "an etcd that stops answering"},
    {kReasonStoreFailed, "an I/O error of SQLite (sqlite_store.cc)"},
    {kReasonStoreDamaged, "a store damaged while the server runs"},
    {kReasonBackupUnsupported, "Backup of an etcd store"},
    {kReasonServerBusy, "16 x --max_threads calls queued at once"},
    {kReasonCredentialRevoked, "SIGHUP: tests/security:revocation_e2e_test"},
    {kReasonCertificateRefused,
     "client certificates: tests/security:revocation_e2e_test"},
    {kReasonClaimWaitExpired,
     "a wait that runs out: tests/agent:claim_queue_e2e_test"},
    {kReasonPriorityNotAllowed,
     "a launcher's priority: tests/agent:claim_queue_e2e_test"},
    {kReasonClaimQueueFull, "1,024 waiters: server/claims:wait_queue_test"},
    {kReasonClaimQuotaExceeded,
     "a tokens file with claim caps: tests/agent:capacity_e2e_test"},
    {kReasonCallDeadlinePassed, "a deadline passing inside a handler"},
    {kReasonCallCancelled, "a client that cancels (it sees no answer)"},
    {kReasonWatchFellBehind, "a watch slower than the event buffer"},
    {kReasonTooManyVariants, "50,000 variants of one kernel"},
    {kReasonDeviceDrained,
     "a drained device's renewal: tests/agent:cordon_e2e_test"},
    {kReasonCordonNotFound,
     "an uncordon of nothing: tests/agent:cordon_e2e_test"},
};

// What a row expects back.
struct Want {
  grpc::StatusCode code;
  const char* reason;
  const char* field = "";  // BadRequest field; "" for none
  std::map<std::string, std::string> metadata = {};
};

class ErrorPathsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    ASSERT_NE(tmp, nullptr);
    const std::string tokens_file = absl::StrCat(tmp, "/tokens");
    std::ofstream tokens(tokens_file);
    for (const auto& [role, name] :
         std::vector<std::pair<std::string, std::string>>{
             {"admin", "ops"},
             {"reader", "dash"},
             {"launcher", "alice"},
             {"launcher", "bob"}}) {
      CommandResult made = RunCommand(
          {CliPath(), "admin", "token", "--role=" + role, "--name=" + name});
      ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
      tokens_[name] =
          std::string(absl::StripTrailingAsciiWhitespace(made.stdout_text));
      tokens << made.stderr_text;
    }
    // Only agents report, each for its own node.
    for (const char* node : {"n1", "n3", "r1", "r2", "r3", "r4", "r5", "r6",
                             "r7", "t/u", "t", "rl", "big", "tr"}) {
      CommandResult made =
          RunCommand({CliPath(), "admin", "token", "--role=agent",
                      "--name=" + std::string(node)});
      ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
      tokens_[node] =
          std::string(absl::StripTrailingAsciiWhitespace(made.stdout_text));
      tokens << made.stderr_text;
    }
    tokens.close();
    auto server = ServerProcess::Start(
        {"--insecure", "--tokens_file=" + tokens_file, "--node_ttl=10m",
         "--max_devices_per_node=4", "--max_traits_per_device=8",
         "--max_reports_per_minute=1", "--max_store_bytes=65536"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(server_->address(),
                                   grpc::InsecureChannelCredentials());
    variants_ = v1::Variants::NewStub(channel_);
    inventory_ = v1::Inventory::NewStub(channel_);
    placement_ = v1::Placement::NewStub(channel_);
  }

  // A context carrying `who`'s token ("" for none, "?" for a bad one).
  std::unique_ptr<grpc::ClientContext> As(const std::string& who) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(20));
    if (who == "?") {
      context->AddMetadata("authorization", "Bearer not-a-known-token");
    } else if (!who.empty()) {
      context->AddMetadata("authorization", "Bearer " + tokens_.at(who));
    }
    return context;
  }

  // As the node's agent unless `who` is given.
  grpc::Status Report(const v1::Node& node, const std::string& who = "") {
    v1::ReportNodeRequest request;
    *request.mutable_node() = node;
    v1::ReportNodeResponse response;
    return inventory_->ReportNode(As(who.empty() ? node.id() : who).get(),
                                  request, &response);
  }

  grpc::Status Register(
      const std::string& kernel,
      const std::vector<std::pair<std::string, std::string>>& variants,
      int64_t expected_revision = 0, const std::string& who = "ops") {
    v1::RegisterVariantsRequest request;
    request.set_kernel(kernel);
    for (const auto& [name, selector] : variants) {
      v1::Variant* v = request.add_variants();
      v->set_name(name);
      v->set_selector(selector);
    }
    request.set_expected_revision(expected_revision);
    v1::RegisterVariantsResponse response;
    return variants_->RegisterVariants(As(who).get(), request, &response);
  }

  grpc::Status Select(v1::SelectRequest request,
                      const std::string& who = "ops") {
    if (request.job().kernel().empty()) request.mutable_job()->set_kernel("k");
    if (request.job().construct_size() == 0) {
      request.mutable_job()->add_construct()->set_name("target");
    }
    v1::SelectResponse response;
    return placement_->Select(As(who).get(), request, &response);
  }

  // One beat on a fresh stream; the status the stream ends with.
  grpc::Status Beat(const v1::HeartbeatRequest& first,
                    const v1::HeartbeatRequest* second = nullptr) {
    auto context = As("n1");
    auto stream = inventory_->Heartbeat(context.get());
    stream->Write(first);
    if (second != nullptr) {
      v1::HeartbeatResponse answer;
      stream->Read(&answer);
      stream->Write(*second);
    }
    stream->WritesDone();
    v1::HeartbeatResponse answer;
    while (stream->Read(&answer)) {
    }
    return stream->Finish();
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Variants::Stub> variants_;
  std::unique_ptr<v1::Inventory::Stub> inventory_;
  std::unique_ptr<v1::Placement::Stub> placement_;
  std::map<std::string, std::string> tokens_;
};

// A node with one CPU whose device `mutate` changes.
v1::Node OneCpu(const std::string& id,
                const std::function<void(v1::Device&)>& mutate = {}) {
  v1::Node node = CpuNode(id);
  node.mutable_devices(0)->set_id(id + "/cpu");
  if (mutate) mutate(*node.mutable_devices(0));
  return node;
}

TEST_F(ErrorPathsE2E, EveryErrorNamesItsReasonAndField) {
  // The fleet and registry the rows run against: one CPU node, kernel k.
  grpc::Status reported = Report(OneCpu("n1"));
  ASSERT_TRUE(reported.ok()) << reported.error_message();
  ASSERT_TRUE(Register("k", {{"k_cpu", "device={kind(cpu)}"}}).ok());
  ASSERT_TRUE(Register("k2", {{"a", "device={kind(cpu)}"},
                              {"b", "device={kind(host)}"}})
                  .ok());

  const struct Row {
    const char* name;
    std::function<grpc::Status()> call;
    Want want;
  } rows[] = {
      // INVALID_ARGUMENT, each with its field.
      {"select count -1",
       [&] {
         v1::SelectRequest r;
         r.mutable_job()->set_count(-1);
         return Select(r);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid, "job.count"}},
      {"list variants page_size -1",
       [&] {
         v1::ListVariantsRequest r;
         r.set_page_size(-1);
         v1::ListVariantsResponse out;
         return variants_->ListVariants(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid, "page_size"}},
      // Node and device listings apply the same page_size rule as variants.
      {"list nodes page_size -1",
       [&] {
         v1::ListNodesRequest r;
         r.set_page_size(-1);
         v1::ListNodesResponse out;
         return inventory_->ListNodes(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid, "page_size"}},
      {"list devices page_size -1",
       [&] {
         v1::ListDevicesRequest r;
         r.set_page_size(-1);
         v1::ListDevicesResponse out;
         return inventory_->ListDevices(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid, "page_size"}},
      {"report index -2",
       [&] {
         return Report(OneCpu("r1", [](v1::Device& d) { d.set_index(-2); }));
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "node.devices[0].index"}},
      {"report utilisation 2",
       [&] {
         return Report(
             OneCpu("r2", [](v1::Device& d) { d.set_utilisation(2); }));
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "node.devices[0].utilisation"}},
      {"report id of another node",
       [&] {
         return Report(OneCpu("r3", [](v1::Device& d) { d.set_id("x/cpu"); }));
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "node.devices[0].id"}},
      {"report trait with a control character",
       [&] {
         return Report(OneCpu("r4", [](v1::Device& d) {
           d.mutable_traits()->add_isa("a\x01");
         }));
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "node.devices[0].traits.isa"}},
      {"report unknown sycl architecture",
       [&] {
         return Report(OneCpu("r5", [](v1::Device& d) {
           d.set_sycl_architecture("no_such_arch");
         }));
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "node.devices[0].sycl_architecture"}},
      {"report device without kind",
       [&] {
         return Report(OneCpu("r6", [](v1::Device& d) {
           d.clear_sycl_architecture();
           d.mutable_traits()->clear_kind();
         }));
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "node.devices[0].traits.kind"}},
      {"report two devices of one index",
       [&] {
         v1::Node node = OneCpu("r7");
         *node.add_devices() = node.devices(0);
         node.mutable_devices(1)->set_id("r7/cpu2");
         return Report(node);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "node.devices[1].index"}},
      {"heartbeat utilisation 2",
       [&] {
         v1::HeartbeatRequest beat;
         beat.set_node("n1");
         v1::DeviceUtilisation* u = beat.add_utilisation();
         u->set_device_id("n1/cpu");
         u->set_utilisation(2);
         return Beat(beat);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "utilisation[0].utilisation"}},
      {"heartbeat changes node",
       [&] {
         v1::HeartbeatRequest first;
         first.set_node("n1");
         v1::HeartbeatRequest second;
         second.set_node("n2");
         return Beat(first, &second);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid, "node"}},
      {"delete all_variants with a name",
       [&] {
         v1::DeleteVariantRequest r;
         r.set_kernel("k");
         r.set_name("k_cpu");
         r.set_all_variants(true);
         v1::DeleteVariantResponse out;
         return variants_->DeleteVariant(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid, "name"}},
      {"release neither claim_id nor holder",
       [&] {
         v1::ReleaseClaimRequest r;
         v1::ReleaseClaimResponse out;
         return placement_->ReleaseClaim(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid, "claim_id"}},
      {"register an empty batch",
       [&] { return Register("k", {}); },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid, "variants"}},
      {"coverage hypothetical node with a bad index",
       [&] {
         v1::CoverageRequest r;
         r.mutable_job()->set_kernel("k");
         *r.add_hypothetical_nodes() =
             OneCpu("h1", [](v1::Device& d) { d.set_index(-2); });
         v1::CoverageResponse out;
         return placement_->Coverage(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "hypothetical_nodes[0].devices[0].index"}},
      {"coverage variable range without a name",
       [&] {
         v1::CoverageRequest r;
         r.mutable_job()->set_kernel("k");
         r.add_variable_ranges()->add_values(1);
         v1::CoverageResponse out;
         return placement_->Coverage(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonFieldInvalid,
        "variable_ranges[0].name"}},
      {"register a bad selector",
       [&] {
         return Register("k", {{"bad", "device={kind("}});
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonSelectorInvalid,
        "variants[0].selector"}},
      {"list variants with a foreign page token",
       [&] {
         v1::ListVariantsRequest r;
         r.set_page_token("not-a-token");
         v1::ListVariantsResponse out;
         return variants_->ListVariants(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonPageTokenInvalid,
        "page_token"}},
      {"list variants, filters changed between pages",
       [&] {
         v1::ListVariantsRequest r;
         r.set_kernel("k2");
         r.set_page_size(1);
         v1::ListVariantsResponse first;
         grpc::Status s = variants_->ListVariants(As("ops").get(), r, &first);
         if (!s.ok() || first.next_page_token().empty()) {
           return grpc::Status(grpc::StatusCode::INTERNAL, "no second page");
         }
         r.set_kernel("k");
         r.set_page_token(first.next_page_token());
         v1::ListVariantsResponse out;
         return variants_->ListVariants(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::INVALID_ARGUMENT, kReasonPageTokenFiltersChanged,
        "page_token"}},
      // FAILED_PRECONDITION / RESOURCE_EXHAUSTED of Select (only n1's CPU is
      // in the fleet yet).
      {"select a kind the fleet lacks",
       [&] {
         v1::SelectRequest r;
         r.mutable_job()->set_required_kind("gpu");
         return Select(r);
       },
       {grpc::StatusCode::FAILED_PRECONDITION,
        kReasonNoFittingDevice,
        "",
        {{"kernel", "k"}}}},
      {"claim the one device twice",
       [&] {
         v1::SelectRequest r;
         r.mutable_claim()->mutable_duration()->set_seconds(600);
         r.mutable_claim()->set_holder("first");
         grpc::Status first = Select(r);
         if (!first.ok()) return first;
         r.mutable_claim()->set_holder("second");
         return Select(r);
       },
       {grpc::StatusCode::RESOURCE_EXHAUSTED,
        kReasonClaimsExhausted,
        "",
        {{"kernel", "k"}, {"fitting", "1"}}}},
      // NOT_FOUND / ALREADY_EXISTS.
      {"get an unknown variant",
       [&] {
         v1::GetVariantRequest r;
         r.set_kernel("k");
         r.set_name("nope");
         v1::GetVariantResponse out;
         return variants_->GetVariant(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::NOT_FOUND, kReasonVariantNotFound}},
      {"select an unknown kernel",
       [&] {
         v1::SelectRequest r;
         r.mutable_job()->set_kernel("nope");
         return Select(r);
       },
       {grpc::StatusCode::NOT_FOUND,
        kReasonKernelNotFound,
        "",
        {{"kernel", "nope"}}}},
      {"release an unknown claim",
       [&] {
         v1::ReleaseClaimRequest r;
         r.set_claim_id("nope");
         v1::ReleaseClaimResponse out;
         return placement_->ReleaseClaim(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::NOT_FOUND, kReasonClaimNotFound}},
      {"deregister an unknown node",
       [&] {
         v1::DeregisterRequest r;
         r.set_node("nope");
         v1::DeregisterResponse out;
         return inventory_->Deregister(As("ops").get(), r, &out);
       },
       {grpc::StatusCode::NOT_FOUND,
        kReasonNodeNotFound,
        "",
        {{"node", "nope"}}}},
      {"register an existing variant",
       [&] {
         return Register("k", {{"k_cpu", "device={kind(cpu)}"}});
       },
       {grpc::StatusCode::ALREADY_EXISTS, kReasonVariantExists}},
      {"report a device id another node reports",
       [&] {
         grpc::Status first = Report(OneCpu("t/u"));
         if (!first.ok()) return first;
         return Report(OneCpu("t", [](v1::Device& d) { d.set_id("t/u/cpu"); }));
       },
       {grpc::StatusCode::ALREADY_EXISTS,
        kReasonDeviceIdTaken,
        "",
        {{"device", "t/u/cpu"}, {"node", "t/u"}}}},
      // ABORTED.
      {"register at a stale revision",
       [&] {
         return Register("k", {{"k_new", "device={kind(cpu)}"}}, 999);
       },
       {grpc::StatusCode::ABORTED, kReasonRevisionMismatch}},
      // RESOURCE_EXHAUSTED of limits.
      {"report too often",
       [&] {
         grpc::Status first = Report(OneCpu("rl"));
         if (!first.ok()) return first;
         return Report(OneCpu("rl"));
       },
       {grpc::StatusCode::RESOURCE_EXHAUSTED, kReasonRateLimited}},
      {"report more devices than the limit",
       [&] {
         v1::Node node = GpuNode("big", "nvidia", "nvptx", "nvidia_gpu_sm_90",
                                 4);  // 5 with the CPU
         return Report(node);
       },
       {grpc::StatusCode::RESOURCE_EXHAUSTED,
        kReasonLimitExceeded,
        "",
        {{"field", "node.devices"},
         {"limit", "4"},
         {"flag", "max_devices_per_node"}}}},
      {"report more traits than the limit",
       [&] {
         return Report(OneCpu("tr", [](v1::Device& d) {
           for (int i = 0; i < 9; ++i) {
             d.mutable_traits()->add_isa(absl::StrCat("isa", i));
           }
         }));
       },
       {grpc::StatusCode::RESOURCE_EXHAUSTED,
        kReasonLimitExceeded,
        "",
        {{"flag", "max_traits_per_device"}}}},
      // UNAUTHENTICATED / PERMISSION_DENIED.
      {"no credentials",
       [&] {
         v1::ListVariantsRequest r;
         v1::ListVariantsResponse out;
         return variants_->ListVariants(As("").get(), r, &out);
       },
       {grpc::StatusCode::UNAUTHENTICATED, kReasonCredentialsMissing}},
      {"unknown token",
       [&] {
         v1::ListVariantsRequest r;
         v1::ListVariantsResponse out;
         return variants_->ListVariants(As("?").get(), r, &out);
       },
       {grpc::StatusCode::UNAUTHENTICATED, kReasonTokenInvalid}},
      {"reader registers",
       [&] {
         return Register("k", {{"r", "device={kind(cpu)}"}}, 0, "dash");
       },
       {grpc::StatusCode::PERMISSION_DENIED,
        kReasonRoleForbidden,
        "",
        {{"principal", "dash"}, {"role", "reader"}}}},
      {"agent reports another node",
       [&] { return Report(OneCpu("n2"), "n1"); },
       {grpc::StatusCode::PERMISSION_DENIED,
        kReasonNodeIdentityMismatch,
        "",
        {{"principal", "n1"}, {"node", "n2"}}}},
      {"release another launcher's claim",
       [&] {
         grpc::Status reported = Report(OneCpu("n3"));
         if (!reported.ok()) return reported;
         v1::SelectRequest r;
         r.mutable_job()->add_nodes("n3");
         r.mutable_claim()->mutable_duration()->set_seconds(600);
         r.mutable_claim()->set_holder("alices-job");
         v1::SelectResponse selected;
         r.mutable_job()->set_kernel("k");
         r.mutable_job()->add_construct()->set_name("target");
         grpc::Status s = placement_->Select(As("alice").get(), r, &selected);
         if (!s.ok()) return s;
         v1::ReleaseClaimRequest release;
         release.set_claim_id(selected.claim().id());
         v1::ReleaseClaimResponse out;
         return placement_->ReleaseClaim(As("bob").get(), release, &out);
       },
       {grpc::StatusCode::PERMISSION_DENIED,
        kReasonClaimNotOwned,
        "",
        {{"owner", "alice"}}}},
      // Last: it fills the store.
      {"register until the store is full",
       [&] {
         std::string selector = "device={isa(";
         for (int i = 0; i < 300; ++i) absl::StrAppend(&selector, "i", i, ",");
         selector.back() = ')';
         selector += "}";
         for (int i = 0; i < 100; ++i) {
           grpc::Status s = Register("big", {{absl::StrCat("v", i), selector}});
           if (!s.ok()) return s;
         }
         return grpc::Status(grpc::StatusCode::INTERNAL, "never full");
       },
       {grpc::StatusCode::RESOURCE_EXHAUSTED, kReasonStoreFull}},
  };

  std::set<std::string> produced;
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    grpc::Status status = row.call();
    absl::Status got =
        FromRpcStatus(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message(), status.error_details());
    EXPECT_EQ(status.error_code(), row.want.code) << got;
    std::optional<google::rpc::ErrorInfo> info =
        GetDetail<google::rpc::ErrorInfo>(got);
    ASSERT_TRUE(info.has_value()) << got;
    EXPECT_EQ(info->domain(), kErrorDomain);
    EXPECT_EQ(info->reason(), row.want.reason) << got;
    // Each reason comes with the one code its table row names, and no
    // answer falls back to the code's name.
    const ErrorReason* reason = FindErrorReason(info->reason());
    ASSERT_NE(reason, nullptr) << info->reason() << " is not in the table";
    EXPECT_EQ(static_cast<int>(reason->code), status.error_code());
    produced.insert(info->reason());
    for (const auto& [key, value] : row.want.metadata) {
      auto it = info->metadata().find(key);
      ASSERT_NE(it, info->metadata().end()) << key << " in " << got;
      EXPECT_EQ(it->second, value) << key;
    }
    std::optional<google::rpc::BadRequest> bad =
        GetDetail<google::rpc::BadRequest>(got);
    if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
      ASSERT_TRUE(bad.has_value()) << "no BadRequest: " << got;
      ASSERT_GE(bad->field_violations_size(), 1);
      EXPECT_EQ(bad->field_violations(0).field(), row.want.field) << got;
    } else {
      EXPECT_EQ(std::string(row.want.field), "");
    }
  }

  // A new reason needs a row (or a line in kNotDrivenHere saying why not).
  for (const ErrorReason& reason : ErrorReasons()) {
    EXPECT_TRUE(
        produced.count(reason.name) + kNotDrivenHere.count(reason.name) == 1)
        << reason.name << ": produced by a row here "
        << produced.count(reason.name) << ", listed as not driven here "
        << kNotDrivenHere.count(reason.name);
  }
  for (const auto& [name, why] : kNotDrivenHere) {
    EXPECT_NE(FindErrorReason(name), nullptr) << name;
  }
}

// The CLAIMS_EXHAUSTED metadata a client waits by: first_expiry in RFC 3339,
// the same instant the message names for people.
TEST_F(ErrorPathsE2E, ClaimsExhaustedCarriesFirstExpiry) {
  grpc::Status reported = Report(OneCpu("n1"));
  ASSERT_TRUE(reported.ok()) << reported.error_message();
  ASSERT_TRUE(Register("k", {{"k_cpu", "device={kind(cpu)}"}}).ok());
  v1::SelectRequest r;
  r.mutable_claim()->mutable_duration()->set_seconds(600);
  r.mutable_claim()->set_holder("first");
  ASSERT_TRUE(Select(r).ok());
  grpc::Status status = Select(r);
  absl::Status got =
      FromRpcStatus(static_cast<absl::StatusCode>(status.error_code()),
                    status.error_message(), status.error_details());
  std::optional<google::rpc::ErrorInfo> info =
      GetDetail<google::rpc::ErrorInfo>(got);
  ASSERT_TRUE(info.has_value()) << got;
  EXPECT_EQ(info->reason(), kReasonClaimsExhausted);
  const std::string& at = info->metadata().at("first_expiry");
  EXPECT_THAT(at,
              ::testing::MatchesRegex(
                  "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"));
  EXPECT_THAT(status.error_message(),
              ::testing::HasSubstr("the first claim expires at " + at));
}

}  // namespace
}  // namespace ctxsel::testing
