#include "server/rpc/proto_convert.h"

#include <google/protobuf/io/coded_stream.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/proto_time.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "images/device_image.h"
#include "launch/launch_env.h"
#include "selector/compiler_profile.h"
#include "selector/device_variables.h"
#include "selector/job_check.h"
#include "server/fleet/node_proto.h"
#include "server/fleet/node_report.h"
#include "server/model/names.h"

namespace ctxsel::server {
namespace {

absl::StatusOr<selector::ConstructTrait> ConstructFromProto(
    const v1::ConstructTrait& trait, const std::string& field) {
  if (absl::Status s = selector::CheckConstructName(trait.name()); !s.ok()) {
    return FieldViolation(field + ".name", s.message());
  }
  if (trait.simdlen() < 0) {
    return FieldViolation(field + ".simdlen",
                          absl::StrCat(trait.simdlen(), " is negative"));
  }
  selector::ConstructTrait out;
  out.name = trait.name();
  out.simdlen = trait.simdlen();
  out.aligned.insert(trait.aligned().begin(), trait.aligned().end());
  for (const std::string& variable : trait.linear()) out.linear[variable] = {};
  out.uniform = NameSetFromProto(trait.uniform());
  out.inbranch = trait.inbranch();
  out.notinbranch = trait.notinbranch();
  return out;
}

absl::StatusOr<Policy> PolicyFromProto(v1::Policy policy) {
  switch (policy) {
    case v1::POLICY_UNSPECIFIED:
      return kDefaultPolicy;
#define POLICY(Enumerator, Name, ProtoValue, Meaning) \
  case v1::ProtoValue:                                \
    return Policy::Enumerator;
#include "base/policy.def"
    default:
      return FieldViolation("job.policy",
                            absl::StrCat("unknown value ", policy));
  }
}

void CandidateToProto(const selector::CandidateReport& candidate,
                      v1::CandidateReport* out) {
  out->set_variant(candidate.name);
  out->set_selector(candidate.selector);
  out->set_dynamic(candidate.dynamic);
  out->set_compatible(candidate.compatible);
  out->set_reason(candidate.reason);
  out->set_score(candidate.score);
  for (const selector::ScoreTerm& term : candidate.terms) {
    v1::ScoreTerm* t = out->add_terms();
    t->set_trait(term.trait);
    t->set_value(term.value);
  }
  out->set_subset_of(candidate.subset_of);
  out->set_rank(candidate.rank);
  out->set_in_dynamic_prefix(candidate.in_dynamic_prefix);
  out->set_evaluated(candidate.evaluated);
  out->set_selected(candidate.selected);
}

void ClassToProto(const placement::ClassReport& report,
                  v1::DeviceClassReport* out) {
  out->set_device_class(report.device_class);
  out->set_device_class_short_name(report.device_class_short_name);
  TraitsToProto(report.traits, out->mutable_traits());
  out->set_sycl_architecture(report.sycl_architecture);
  out->set_memory_bytes(report.capacity.memory_bytes);
  out->set_compute_units(report.capacity.compute_units);
  out->set_device_count(report.device_count);
  out->set_eligible_device_count(report.eligible_device_count);
  out->set_suspect_device_count(report.suspect_device_count);
  out->set_unhealthy_device_count(report.unhealthy_device_count);
  out->set_cordoned_device_count(report.cordoned_device_count);
  out->set_eligible(report.eligible);
  out->set_reason(report.reason);
  out->set_node_layout(report.node_layout);
  out->set_winner(report.winner);
  out->set_image(report.image);
  out->set_image_note(report.image_note);
  const selector::Selection& selection = report.explanation.selection;
  out->set_base(selection.base());
  out->set_score(selection.score);
  for (const selector::CandidateReport& candidate :
       report.explanation.candidates) {
    if (candidate.selected) out->set_selected_variant(candidate.name);
    CandidateToProto(candidate, out->add_candidates());
  }
}

}  // namespace

size_t RepeatedFieldBytes(const google::protobuf::MessageLite& message) {
  const size_t bytes = message.ByteSizeLong();
  // Field numbers below 16 take a one-byte tag.
  return 1 + google::protobuf::io::CodedOutputStream::VarintSize64(bytes) +
         bytes;
}

void VariantToProto(const Variant& variant, v1::Variant* out) {
  out->set_kernel(variant.kernel);
  out->set_name(variant.name);
  out->set_selector(variant.selector_text);
  out->set_order(variant.order);
  out->set_revision(variant.revision);
  out->set_canonical_selector(variant.selector.ToString());
  v1::VariantMetadata* metadata = out->mutable_metadata();
  for (const std::string& a : variant.metadata.adjust_args) {
    metadata->add_adjust_args(a);
  }
  for (const std::string& a : variant.metadata.append_args) {
    metadata->add_append_args(a);
  }
  metadata->set_source_file(variant.metadata.source_file);
  metadata->set_source_line(variant.metadata.source_line);
  for (const std::string& id : variant.metadata.images) {
    metadata->add_images(id);
  }
}

VariantSpec VariantSpecFromProto(const v1::Variant& variant) {
  VariantSpec spec;
  spec.name = variant.name();
  spec.selector_text = variant.selector();
  const v1::VariantMetadata& metadata = variant.metadata();
  spec.metadata.adjust_args.assign(metadata.adjust_args().begin(),
                                   metadata.adjust_args().end());
  spec.metadata.append_args.assign(metadata.append_args().begin(),
                                   metadata.append_args().end());
  spec.metadata.source_file = metadata.source_file();
  spec.metadata.source_line = metadata.source_line();
  spec.metadata.images.assign(metadata.images().begin(),
                              metadata.images().end());
  return spec;
}

void EventToProto(const InventoryEvent& event, const std::string& stream_epoch,
                  v1::InventoryEvent* out) {
  switch (event.kind) {
    case InventoryEvent::Kind::kAdded:
      out->set_kind(v1::InventoryEvent::KIND_ADDED);
      break;
    case InventoryEvent::Kind::kChanged:
      out->set_kind(v1::InventoryEvent::KIND_CHANGED);
      break;
    case InventoryEvent::Kind::kRemoved:
      out->set_kind(v1::InventoryEvent::KIND_REMOVED);
      break;
    case InventoryEvent::Kind::kResync:
      out->set_kind(v1::InventoryEvent::KIND_RESYNC);
      break;
    case InventoryEvent::Kind::kResyncEnd:
      out->set_kind(v1::InventoryEvent::KIND_RESYNC_END);
      break;
  }
  if (event.node != nullptr) {
    NodeToProto(*event.node, /*with_devices=*/true, out->mutable_node());
  }
  out->set_reason(event.reason);
  out->set_sequence(event.sequence);
  out->set_stream_epoch(stream_epoch);
  *out->mutable_event_time() = ToProtoTimestamp(event.time);
}

absl::StatusOr<Job> JobFromProto(const v1::Job& job) {
  Job out;
  CTXSEL_RETURN_IF_ERROR(ValidateName(job.kernel(), "job.kernel"));
  out.kernel = job.kernel();
  for (int i = 0; i < job.construct_size(); ++i) {
    CTXSEL_ASSIGN_OR_RETURN(
        selector::ConstructTrait trait,
        ConstructFromProto(job.construct(i),
                           absl::StrCat("job.construct[", i, "]")));
    out.construct.push_back(std::move(trait));
  }
  const v1::ImplementationTraits& impl = job.implementation();
  out.implementation.vendor = NameSetFromProto(impl.vendor());
  out.implementation.extension = NameSetFromProto(impl.extension());
  for (int i = 0; i < impl.requirements_size(); ++i) {
    if (absl::Status s = selector::CheckRequirement(impl.requirements(i));
        !s.ok()) {
      return FieldViolation(
          absl::StrCat("job.implementation.requirements[", i, "]"),
          s.message());
    }
  }
  out.implementation.requires_ = NameSetFromProto(impl.requirements());
  if (!impl.atomic_default_mem_order().empty()) {
    if (absl::Status s =
            selector::CheckMemoryOrder(impl.atomic_default_mem_order());
        !s.ok()) {
      return FieldViolation("job.implementation.atomic_default_mem_order",
                            s.message());
    }
  }
  out.implementation.atomic_default_mem_order = impl.atomic_default_mem_order();
  out.variables.insert(job.variables().begin(), job.variables().end());
  out.nodes.assign(job.nodes().begin(), job.nodes().end());
  out.device_filter = job.device_filter();
  CTXSEL_ASSIGN_OR_RETURN(Policy policy, PolicyFromProto(job.policy()));
  out.policy = policy;
  if (job.top_k() < 0) {
    return FieldViolation("job.top_k",
                          absl::StrCat(job.top_k(), " is negative"));
  }
  out.top_k = job.top_k();
  if (job.count() < 0 || job.count() > kMaxJobCount) {
    return FieldViolation(
        "job.count", absl::StrCat(job.count(), " is not in 0..", kMaxJobCount,
                                  " (0 means 1)"));
  }
  out.count = std::max(1, job.count());
  if (job.allowed_devices_size() > kMaxAllowedDevices) {
    return FieldViolation(
        "job.allowed_devices",
        absl::StrCat(job.allowed_devices_size(), " devices; at most ",
                     kMaxAllowedDevices));
  }
  for (int i = 0; i < job.allowed_devices_size(); ++i) {
    if (job.allowed_devices(i).empty()) {
      return FieldViolation(absl::StrCat("job.allowed_devices[", i, "]"),
                            "empty (expected a device id or UUID)");
    }
  }
  out.allowed_devices.assign(job.allowed_devices().begin(),
                             job.allowed_devices().end());
  if (!job.required_kind().empty()) {
    if (absl::Status s = selector::CheckDeviceKind(job.required_kind());
        !s.ok()) {
      return FieldViolation("job.required_kind", s.message());
    }
  }
  out.required_kind = job.required_kind();
  out.require_variant = job.require_variant();
  out.same_node = job.same_node();
  if (job.min_compute_units() < 0) {
    return FieldViolation(
        "job.min_compute_units",
        absl::StrCat(job.min_compute_units(), " is negative"));
  }
  out.min_memory_bytes = job.min_memory_bytes();
  out.min_compute_units = job.min_compute_units();
  if (!job.compiler().empty()) {
    absl::StatusOr<selector::CompilerProfile> compiler =
        selector::CompilerProfileFromName(job.compiler());
    if (!compiler.ok()) {
      return FieldViolation("job.compiler", compiler.status().message());
    }
    out.compiler = *compiler;
  }
  switch (job.ties()) {
    case v1::TIE_BREAK_UNSPECIFIED:
      out.ties = selector::TieChoice::kCompilerDefault;
      break;
    case v1::TIE_BREAK_FIRST_DECLARED:
      out.ties = selector::TieChoice::kFirstDeclared;
      break;
    case v1::TIE_BREAK_LAST_DECLARED:
      out.ties = selector::TieChoice::kLastDeclared;
      break;
    default:
      return FieldViolation("job.ties",
                            absl::StrCat(job.ties(), " is not a TieBreak"));
  }
  if (job.images_size() > static_cast<int>(kMaxImages)) {
    return FieldViolation(
        "job.images",
        absl::StrCat(job.images_size(), " images; at most ", kMaxImages));
  }
  for (int i = 0; i < job.images_size(); ++i) {
    absl::StatusOr<images::DeviceImage> image =
        images::ParseImageId(job.images(i));
    if (!image.ok()) {
      return FieldViolation(absl::StrCat("job.images[", i, "]"),
                            image.status().message());
    }
    out.images.push_back(*std::move(image));
  }
  for (const auto& [name, value] : job.variables()) {
    if (selector::IsDeviceVariable(name)) {
      return FieldViolation(
          absl::StrCat("job.variables[", name, "]"),
          "names starting with ctxsel_device_ are the candidate device's, "
          "set by the server (docs/selectors.md)");
    }
  }
  return out;
}

absl::Status ShareFromProto(const v1::ClaimRequest& claim, Job& job) {
  if (claim.compute_percent() < 0 || claim.compute_percent() > 100) {
    return FieldViolation(
        "claim.compute_percent",
        absl::StrCat(claim.compute_percent(), " is not in 0..100"));
  }
  job.share.memory_bytes = claim.memory_bytes();
  job.share.compute_percent = claim.compute_percent();
  job.min_memory_bytes = std::max(job.min_memory_bytes, claim.memory_bytes());
  return absl::OkStatus();
}

void ChoiceToProto(const placement::Choice& choice, v1::PlacementChoice* out) {
  out->set_variant(choice.variant_name());
  out->set_base(choice.base());
  out->set_node(choice.device.node);
  v1::Device* device = out->mutable_device();
  if (choice.device_class != nullptr) {
    // The class's fields, built once per class: one copy, no sorting.
    *device = choice.device_class->proto;
    out->set_device_class(choice.device_class->name);
    out->set_device_class_short_name(choice.device_class->short_name);
  }
  DeviceStateToProto(choice.device, device);
  out->set_score(choice.score);
  out->set_dynamic(choice.dynamic);
  for (const std::string& name : choice.runtime_only_variants) {
    out->add_runtime_only_variants(name);
  }
  out->set_image(choice.image);
}

void PlacementToProto(const placement::Placement& placement,
                      const std::string& kernel, absl::Span<const Claim> claims,
                      v1::SelectResponse* out) {
  ChoiceToProto(placement.choice, out->mutable_placement());
  out->set_explanation(placement.explanation);
  for (const placement::Choice& alternative : placement.alternatives) {
    ChoiceToProto(alternative, out->add_alternatives());
  }
  if (!claims.empty()) ClaimToProto(claims.front(), out->mutable_claim());
  const size_t rank_count = std::max<size_t>(1, placement.ranks.size());
  for (size_t rank = 0; rank < rank_count; ++rank) {
    v1::RankPlacement* r = out->add_ranks();
    r->set_rank(static_cast<int32_t>(rank));
    if (rank == 0) {
      *r->mutable_placement() = out->placement();
    } else {
      ChoiceToProto(placement.ranks[rank], r->mutable_placement());
    }
    if (rank < claims.size()) ClaimToProto(claims[rank], r->mutable_claim());
    for (auto& [name, value] :
         launch::LaunchEnv(r->placement(), kernel, r->claim())) {
      v1::EnvironmentVariable* variable = r->add_environment();
      variable->set_name(std::move(name));
      variable->set_value(std::move(value));
    }
  }
}

void ReportToProto(const placement::PlacementReport& report,
                   v1::ExplainResponse* out) {
  if (report.status.ok()) {
    ChoiceToProto(report.placement.choice, out->mutable_placement());
  }
  for (const placement::ClassReport& c : report.classes) {
    ClassToProto(c, out->add_classes());
  }
  out->set_text(report.ToText());
}

void ClaimToProto(const Claim& claim, v1::Claim* out) {
  out->set_id(claim.id);
  out->set_node(claim.node);
  out->set_device(claim.device);
  out->set_holder(claim.holder);
  *out->mutable_expire_time() = ToProtoTimestamp(claim.expires);
  out->set_memory_bytes(claim.share.memory_bytes);
  out->set_compute_percent(claim.share.compute_percent);
}

void WaiterToProto(const Waiter& waiter, int position, absl::Time now,
                   v1::ClaimWaiter* out) {
  out->set_position(position);
  out->set_kernel(waiter.kernel);
  out->set_holder(waiter.holder);
  out->set_priority(waiter.priority);
  *out->mutable_wait_start_time() = ToProtoTimestamp(waiter.since);
  *out->mutable_waited() = ToProtoDuration(now - waiter.since);
  *out->mutable_expire_time() = ToProtoTimestamp(waiter.deadline);
  out->set_promoted(waiter.promoted);
}

namespace {

void ConstructToProto(const selector::ConstructTrait& t,
                      v1::ConstructTrait* out) {
  out->set_name(t.name);
  out->set_simdlen(t.simdlen);
  out->mutable_aligned()->insert(t.aligned.begin(), t.aligned.end());
  for (const auto& [variable, step] : t.linear) out->add_linear(variable);
  NameSetToProto(t.uniform, out->mutable_uniform());
  out->set_inbranch(t.inbranch);
  out->set_notinbranch(t.notinbranch);
}

v1::CoverageOutcome OutcomeToProto(placement::CoverageOutcome outcome) {
  switch (outcome) {
    case placement::CoverageOutcome::kVariant:
      return v1::COVERAGE_OUTCOME_VARIANT;
    case placement::CoverageOutcome::kBase:
      return v1::COVERAGE_OUTCOME_BASE_ONLY;
    case placement::CoverageOutcome::kDepends:
      return v1::COVERAGE_OUTCOME_DEPENDS_ON_VARIABLES;
  }
  return v1::COVERAGE_OUTCOME_UNSPECIFIED;
}

}  // namespace

absl::StatusOr<placement::CoverageQuery> CoverageQueryFromProto(
    const v1::CoverageRequest& request) {
  placement::CoverageQuery q;
  CTXSEL_ASSIGN_OR_RETURN(Job job, JobFromProto(request.job()));
  q.job = std::move(job);
  for (int i = 0; i < request.construct_lists_size(); ++i) {
    std::vector<selector::ConstructTrait>& list =
        q.construct_lists.emplace_back();
    const v1::ConstructList& in = request.construct_lists(i);
    for (int j = 0; j < in.construct_size(); ++j) {
      CTXSEL_ASSIGN_OR_RETURN(
          selector::ConstructTrait trait,
          ConstructFromProto(
              in.construct(j),
              absl::StrCat("construct_lists[", i, "].construct[", j, "]")));
      list.push_back(std::move(trait));
    }
  }
  for (const v1::VariableRange& range : request.variable_ranges()) {
    q.variable_ranges.emplace_back(
        range.name(),
        std::vector<int64_t>(range.values().begin(), range.values().end()));
  }
  for (int i = 0; i < request.with_variants_size(); ++i) {
    VariantSpec spec = VariantSpecFromProto(request.with_variants(i));
    CTXSEL_ASSIGN_OR_RETURN(
        Variant v, VariantFromSpec(q.job.kernel, spec,
                                   absl::StrCat("with_variants[", i, "]")));
    q.with_variants.push_back(std::move(v));
  }
  q.without_variants.assign(request.without_variants().begin(),
                            request.without_variants().end());
  for (int i = 0; i < request.hypothetical_nodes_size(); ++i) {
    NodeState node = NodeFromProto(request.hypothetical_nodes(i));
    if (absl::Status s = NormalizeReport(node); !s.ok()) {
      // The report rule names ReportNodeRequest's fields ("node.devices[0]").
      const std::string field = absl::StrCat("hypothetical_nodes[", i, "]");
      return RebaseFieldViolations(
          WithMessage(s, absl::StrCat(field, ": ", s.message())), "node.",
          field + ".");
    }
    for (Device& d : node.devices) {
      q.hypothetical_devices.push_back(std::move(d));
    }
  }
  return q;
}

void CoverageToProto(const placement::CoverageReport& report,
                     v1::CoverageResponse* out) {
  out->set_kernel(report.kernel);
  out->set_what_if(report.what_if);
  for (const std::string& v : report.variants) out->add_variants(v);
  for (const placement::CoveragePoint& p : report.points) {
    v1::CoveragePoint* point = out->add_points();
    for (const selector::ConstructTrait& t : p.construct) {
      ConstructToProto(t, point->add_construct());
    }
    point->mutable_variables()->insert(p.variables.begin(), p.variables.end());
    for (const placement::ClassCoverage& c : p.classes) {
      v1::ClassCoverage* cc = point->add_classes();
      cc->set_device_class(c.device_class);
      cc->set_device_class_short_name(c.device_class_short_name);
      cc->set_node_layout(c.node_layout);
      cc->set_hypothetical(c.hypothetical);
      cc->set_device_count(c.device_count);
      cc->set_node_count(c.node_count);
      cc->set_outcome(OutcomeToProto(c.outcome));
      cc->set_variant(c.variant);
      cc->set_score(c.score);
      cc->set_dynamic(c.dynamic);
      for (const placement::DecidingCandidate& d : c.deciding) {
        v1::DecidingCandidate* dc = cc->add_deciding();
        dc->set_variant(d.variant);
        dc->set_selector(d.selector);
        dc->set_score(d.score);
        dc->set_dynamic(d.dynamic);
      }
      for (const std::string& t : c.tied_with) cc->add_tied_with(t);
      cc->set_image(c.image);
      cc->set_image_note(c.image_note);
      cc->set_no_image(c.no_image);
    }
    for (const placement::OutcomeShare& s : p.shares) {
      v1::OutcomeShare* share = point->add_shares();
      share->set_outcome(OutcomeToProto(s.outcome));
      share->set_variant(s.variant);
      share->set_device_count(s.device_count);
      share->set_node_count(s.node_count);
    }
    point->set_device_count(p.device_count);
    point->set_node_count(p.node_count);
    point->set_base_only_share(p.base_only_share);
    for (const placement::ClassChange& c : p.changes) {
      v1::ClassChange* change = point->add_changes();
      change->set_device_class(c.device_class);
      change->set_device_class_short_name(c.device_class_short_name);
      change->set_node_layout(c.node_layout);
      change->set_new_class(c.new_class);
      change->set_before(c.before);
      change->set_after(c.after);
      change->set_gains_base_only(c.gains_base_only);
      change->set_loses_base_only(c.loses_base_only);
    }
  }
  for (const std::string& v : report.dead_variants) out->add_dead_variants(v);
}

}  // namespace ctxsel::server
