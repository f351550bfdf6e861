// ctxsel-cli coverage: where a kernel's variants run in the live fleet, and
// what a change to the variants or the fleet would do (docs/coverage.md).
//
//   ctxsel-cli coverage --kernel=saxpy [--construct=target,teams]
//   [--var=N=4096]
//   ctxsel-cli coverage --kernel=saxpy --var=N=1,64,4096,1000000 \
//       --construct_lists='target;target,teams,parallel,for'
//   ctxsel-cli coverage --kernel=saxpy --with='saxpy_all=device={kind(gpu)}' \
//       --without=saxpy_hip
//   ctxsel-cli coverage --kernel=saxpy --from_source saxpy.c
//   ctxsel-cli coverage --kernel=saxpy --with_devices=mi300x.json:16
//   ... -o table|wide|json|yaml (the global -o; name prints the table)
//
// The job flags are select's (JobFromFlags); --var takes ranges. Nothing is
// stored. Exit codes: kExitOk, kExitBadInput for bad flags or an unknown
// kernel, kExitUnreachable when the server does not answer.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/input_file.h"
#include "client/cli/select_command.h"
#include "client/cli/service_output.h"
#include "client/cli/source_import.h"
#include "client/cli/text_fit.h"
#include "devices/device_info.h"
#include "devices/device_json.h"
#include "devices/device_proto.h"

// Shared with `variants register --from_source` (variants_command.cc).
ABSL_DECLARE_FLAG(bool, from_source);

ABSL_FLAG(std::string, construct_lists, "",
          "coverage: several construct sets separated by ';', e.g. "
          "'target;target,teams,parallel,for' (an empty one: no construct).");
ABSL_FLAG(std::string, with, "",
          "coverage: what-if variants NAME=SELECTOR, several separated by "
          "';'.");
ABSL_FLAG(std::vector<std::string>, without, {},
          "coverage: what-if without these registered variants.");
ABSL_FLAG(std::vector<std::string>, with_devices, {},
          "coverage: what-if hypothetical nodes, FILE[:COUNT] each, FILE "
          "in the agent's devices file format (devices/device_json.h).");

namespace ctxsel::cli {
namespace {

constexpr char kWhat[] = "coverage";

absl::Status AddConstructLists(v1::CoverageRequest& request) {
  const std::string lists = absl::GetFlag(FLAGS_construct_lists);
  if (lists.empty()) return absl::OkStatus();
  for (absl::string_view list : absl::StrSplit(lists, ';')) {
    v1::ConstructList* out = request.add_construct_lists();
    for (absl::string_view name :
         absl::StrSplit(list, ',', absl::SkipWhitespace())) {
      out->add_construct()->set_name(
          std::string(absl::StripAsciiWhitespace(name)));
    }
  }
  return absl::OkStatus();
}

absl::Status AddWhatIfVariants(const std::vector<std::string>& sources,
                               v1::CoverageRequest& request) {
  const std::string with = absl::GetFlag(FLAGS_with);
  if (!with.empty()) {
    for (absl::string_view item : absl::StrSplit(with, ';')) {
      const size_t eq = item.find('=');
      if (eq == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("--with: '", item, "' is not NAME=SELECTOR"));
      }
      v1::Variant* v = request.add_with_variants();
      v->set_name(std::string(absl::StripAsciiWhitespace(item.substr(0, eq))));
      v->set_selector(std::string(item.substr(eq + 1)));
    }
  }
  if (!sources.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(SourceImport imported, ImportSources(sources));
    if (!imported.errors.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--from_source: ", absl::StrJoin(imported.errors, "\n")));
    }
    auto it = imported.batches.find(request.job().kernel());
    if (it == imported.batches.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--from_source: no declare variant of kernel '",
                       request.job().kernel(), "'"));
    }
    for (const v1::Variant& v : it->second) *request.add_with_variants() = v;
  }
  for (const std::string& name : absl::GetFlag(FLAGS_without)) {
    request.add_without_variants(name);
  }
  return absl::OkStatus();
}

// Each FILE[:COUNT] becomes COUNT nodes "what-if/FILE#i" with its devices,
// numbered as the agent numbers a devices file.
absl::Status AddHypotheticalNodes(v1::CoverageRequest& request) {
  for (const std::string& spec : absl::GetFlag(FLAGS_with_devices)) {
    std::string path = spec;
    int count = 1;
    if (const size_t colon = spec.rfind(':'); colon != std::string::npos) {
      path = spec.substr(0, colon);
      if (!absl::SimpleAtoi(spec.substr(colon + 1), &count) || count < 1 ||
          count > 100000) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--with_devices: '", spec, "' is not FILE[:COUNT] (1..100000)"));
      }
    }
    CTXSEL_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path));
    absl::StatusOr<std::vector<DeviceInfo>> devices = ParseDevices(text);
    if (!devices.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", devices.status().message()));
    }
    for (int i = 0; i < count; ++i) {
      const std::string node = absl::StrCat("what-if/", path, "#", i);
      std::vector<DeviceInfo> copy = *devices;
      AssignIds(node, copy);
      v1::Node* out = request.add_hypothetical_nodes();
      out->set_id(node);
      for (const DeviceInfo& d : copy) {
        *out->add_devices() = DeviceToProto(d);
      }
    }
  }
  return absl::OkStatus();
}

std::string PointLabel(const v1::CoveragePoint& p) {
  std::vector<std::string> parts;
  std::vector<std::string> construct;
  for (const v1::ConstructTrait& t : p.construct())
    construct.push_back(t.name());
  if (!construct.empty()) {
    parts.push_back(absl::StrCat("construct=", absl::StrJoin(construct, ",")));
  }
  std::map<std::string, int64_t> vars(p.variables().begin(),
                                      p.variables().end());
  for (const auto& [name, value] : vars) {
    parts.push_back(absl::StrCat(name, "=", value));
  }
  return parts.empty() ? "(no construct, no variables)"
                       : absl::StrJoin(parts, " ");
}

// The class's short name (-o wide: its full trait form), plus the layout
// when the verdict depends on it.
template <typename Class>
std::string ClassName(const Class& c, bool wide) {
  return wide || c.device_class_short_name().empty()
             ? c.device_class()
             : c.device_class_short_name();
}

std::string ClassLabel(const v1::ClassCoverage& c, bool wide) {
  std::string label = ClassName(c, wide);
  if (!c.node_layout().empty()) {
    absl::StrAppend(&label, " on layout ", c.node_layout());
  }
  if (c.hypothetical()) absl::StrAppend(&label, " (what-if)");
  return label;
}

std::string OutcomeText(const v1::ClassCoverage& c, bool wide) {
  switch (c.outcome()) {
    case v1::COVERAGE_OUTCOME_VARIANT: {
      std::string text = c.variant();
      if (wide) absl::StrAppend(&text, " (score ", c.score(), ")");
      if (c.dynamic()) absl::StrAppend(&text, " [dynamic]");
      return text;
    }
    case v1::COVERAGE_OUTCOME_DEPENDS_ON_VARIABLES: {
      std::vector<std::string> tried;
      for (const v1::DecidingCandidate& d : c.deciding()) {
        tried.push_back(wide ? absl::StrCat(d.variant(), " if ", d.selector())
                             : d.variant());
      }
      const bool static_fallback =
          c.deciding_size() > 0 && !c.deciding(c.deciding_size() - 1).dynamic();
      return absl::StrCat("depends on variables: ", absl::StrJoin(tried, ", "),
                          static_fallback ? "" : ", else base");
    }
    default:
      return "base only";
  }
}

std::string OutcomeKeyText(const std::string& key) {
  if (key.empty()) return "base only";
  if (key == "?") return "depends on variables";
  return key;
}

// A table's first columns for a class: CLASS, and LAYOUT when the kernel's
// verdicts depend on the node layout (then every class has one).
bool PerLayout(const v1::CoverageResponse& r) {
  for (const v1::CoveragePoint& p : r.points()) {
    for (const v1::ClassCoverage& c : p.classes()) {
      if (!c.node_layout().empty()) return true;
    }
  }
  return false;
}

std::vector<std::string> ClassCells(const v1::ClassCoverage& c, bool wide,
                                    bool per_layout) {
  std::string name = ClassName(c, wide);
  if (c.hypothetical()) absl::StrAppend(&name, " (what-if)");
  if (!per_layout) return {name};
  return {name, c.node_layout().empty() ? "-" : c.node_layout()};
}

std::vector<std::string> ClassHeaders(bool per_layout) {
  if (!per_layout) return {"CLASS"};
  return {"CLASS", "LAYOUT"};
}

void PrintPoint(const v1::CoveragePoint& p, bool wide, bool per_layout) {
  std::vector<std::vector<std::string>> rows = {ClassHeaders(per_layout)};
  for (const char* header : {"DEVICES", "NODES", "VARIANT"}) {
    rows[0].push_back(header);
  }
  if (wide) rows[0].push_back("TIED WITH");
  // An IMAGE column only when the job or the kernel names images.
  bool images = false;
  for (const v1::ClassCoverage& c : p.classes()) {
    images |= c.no_image() || !c.image().empty();
  }
  if (images) rows[0].push_back("IMAGE");
  for (const v1::ClassCoverage& c : p.classes()) {
    rows.push_back(ClassCells(c, wide, per_layout));
    for (std::string cell :
         {std::to_string(c.device_count()), std::to_string(c.node_count()),
          OutcomeText(c, wide)}) {
      rows.back().push_back(std::move(cell));
    }
    if (wide) rows.back().push_back(JoinList(c.tied_with()));
    if (images) {
      rows.back().push_back(c.no_image() ? "none: cannot run"
                            : c.image_note().empty()
                                ? c.image()
                                : absl::StrCat(c.image(), " (generic)"));
    }
  }
  PrintTable(rows);
  std::vector<std::string> shares;
  for (const v1::OutcomeShare& s : p.shares()) {
    const std::string what = s.outcome() == v1::COVERAGE_OUTCOME_VARIANT
                                 ? s.variant()
                             : s.outcome() == v1::COVERAGE_OUTCOME_BASE_ONLY
                                 ? "base only"
                                 : "depends on variables";
    shares.push_back(absl::StrCat(what, ": ", s.device_count(), " devices on ",
                                  s.node_count(), " nodes"));
  }
  PrintFitted(stdout,
              absl::StrCat("per variant: ", absl::StrJoin(shares, "; ")));
  std::printf("base only: %s of %d devices\n",
              absl::StrFormat("%.1f%%", 100 * p.base_only_share()).c_str(),
              p.device_count());
  for (const v1::ClassCoverage& c : p.classes()) {
    if (c.tied_with_size() == 0) continue;
    PrintFitted(stdout,
                absl::StrCat("tie: ", ClassLabel(c, wide), " gets ",
                             c.variant(), " over ", JoinList(c.tied_with()),
                             " by declaration order"));
  }
  for (const v1::ClassChange& c : p.changes()) {
    std::string what =
        c.new_class()
            ? absl::StrCat("new class, gets ", OutcomeKeyText(c.after()))
            : absl::StrCat(OutcomeKeyText(c.before()), " -> ",
                           OutcomeKeyText(c.after()));
    if (c.gains_base_only()) absl::StrAppend(&what, " (gains base only)");
    if (c.loses_base_only()) absl::StrAppend(&what, " (loses base only)");
    PrintFitted(stdout,
                absl::StrCat("change: ", ClassName(c, wide),
                             c.node_layout().empty()
                                 ? ""
                                 : absl::StrCat(" on layout ", c.node_layout()),
                             ": ", what));
  }
}

// Classes x job points -> variant, for a report over several points.
void PrintMatrix(const v1::CoverageResponse& r, bool wide, bool per_layout) {
  std::vector<std::vector<std::string>> rows = {ClassHeaders(per_layout)};
  const size_t first = rows[0].size();  // the first point's column
  std::map<std::string, size_t> row_of;
  for (int i = 0; i < r.points_size(); ++i) {
    rows[0].push_back(PointLabel(r.points(i)));
    for (const v1::ClassCoverage& c : r.points(i).classes()) {
      // By the full form: short names need not be unique.
      auto [it, added] =
          row_of.try_emplace(ClassLabel(c, /*wide=*/true), rows.size());
      if (added) rows.push_back(ClassCells(c, wide, per_layout));
      std::vector<std::string>& row = rows[it->second];
      row.resize(first + i);
      row.push_back(OutcomeText(c, /*wide=*/false));
    }
  }
  // Job points that do not fit beside the class columns go to further
  // tables, each with the class columns again.
  std::vector<size_t> natural;
  for (const auto& row : rows) {
    natural.resize(std::max(natural.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) {
      natural[c] = std::max(natural[c], row[c].size());
    }
  }
  size_t keys = kColumnGap * (first - 1);
  for (size_t c = 0; c < first; ++c) keys += natural[c];
  for (size_t begin = first; begin < natural.size();) {
    size_t end = begin + 1;
    size_t used = keys + kColumnGap + natural[begin];
    while (end < natural.size() &&
           (WideOutput() || used + kColumnGap + natural[end] <= kTableWidth)) {
      used += kColumnGap + natural[end++];
    }
    std::vector<std::vector<std::string>> part;
    for (const auto& row : rows) {
      part.emplace_back(row.begin(), row.begin() + first);
      for (size_t c = begin; c < end; ++c) {
        part.back().push_back(c < row.size() ? row[c] : "");
      }
    }
    if (begin > first) std::printf("\n");
    PrintTable(part);
    begin = end;
  }
}

void PrintReport(const v1::CoverageResponse& r, bool wide) {
  PrintFitted(stdout, absl::StrCat("kernel ", r.kernel(),
                                   r.what_if() ? " (what-if)" : "",
                                   ": variants ", JoinList(r.variants())));
  const bool per_layout = PerLayout(r);
  if (r.points_size() > 1) PrintMatrix(r, wide, per_layout);
  if (r.points_size() == 1 || wide) {
    for (const v1::CoveragePoint& p : r.points()) {
      std::printf("\njob: %s\n", PointLabel(p).c_str());
      PrintPoint(p, wide, per_layout);
    }
  } else {
    for (const v1::CoveragePoint& p : r.points()) {
      for (const v1::ClassChange& c : p.changes()) {
        PrintFitted(
            stdout,
            absl::StrCat(
                "change at ", PointLabel(p), ": ", ClassName(c, wide),
                c.node_layout().empty()
                    ? ""
                    : absl::StrCat(" on layout ", c.node_layout()),
                ": ",
                c.new_class() ? "(new class)" : OutcomeKeyText(c.before()),
                " -> ", OutcomeKeyText(c.after())));
      }
    }
  }
  PrintFitted(stdout, absl::StrCat("dead variants (no live device gets them): ",
                                   r.dead_variants_size() == 0
                                       ? "none"
                                       : JoinList(r.dead_variants())));
}

int RunCoverage(const std::vector<std::string>& args) {
  // -o is global (main has checked it); json and yaml print the response.
  const OutputFormat format =
      OutputFormatFromFlags().value_or(OutputFormat::kTable);
  const bool from_source = absl::GetFlag(FLAGS_from_source);
  if (!args.empty() && !from_source) return UsageError(kCoverageCommand);
  if (from_source && args.empty()) {
    return BadUsage(kWhat, "--from_source needs FILE...");
  }
  v1::CoverageRequest request;
  absl::StatusOr<v1::Job> job =
      JobFromFlags(/*client=*/nullptr, /*read_variables=*/false);
  if (!job.ok()) return BadUsage(kWhat, job.status().message());
  *request.mutable_job() = *std::move(job);
  absl::StatusOr<VariableRanges> ranges = VariableRangesFromFlags();
  if (!ranges.ok()) return BadUsage(kWhat, ranges.status().message());
  for (const auto& [name, values] : *ranges) {
    if (values.size() == 1) {
      (*request.mutable_job()->mutable_variables())[name] = values[0];
      continue;
    }
    v1::VariableRange* range = request.add_variable_ranges();
    range->set_name(name);
    for (int64_t v : values) range->add_values(v);
  }
  for (absl::Status s :
       {AddConstructLists(request), AddWhatIfVariants(args, request),
        AddHypotheticalNodes(request)}) {
    if (!s.ok()) return BadUsage(kWhat, s.message());
  }
  absl::StatusOr<v1::CoverageResponse> response =
      ConnectToServer()->Coverage(request);
  if (!response.ok()) return ReportError(kWhat, response.status());
  if (!PrintMessage(*response)) {
    PrintReport(*response, format == OutputFormat::kWide);
  }
  return kExitOk;
}

}  // namespace

const Command kCoverageCommand = {
    "coverage",
    "coverage --kernel=KERNEL [--construct=NAME,...] "
    "[--construct_lists='NAME,...;NAME,...'] [--var=NAME=V[,V...],...] "
    "[--impl_vendor=NAME,...] [--requires=NAME,...] "
    "[--with='NAME=SELECTOR;...'] [--without=NAME,...] "
    "[--with_devices=FILE[:COUNT],...] [--binary=APP]\n"
    "coverage --kernel=KERNEL --from_source [--define=NAME[=VALUE],...] "
    "[--undefine=NAME,...] [--fortran_form=auto|fixed|free] [job and "
    "what-if flags] FILE...",
    "Where a kernel's variants run in the fleet, and what a change would do.",
    RunCoverage};

}  // namespace ctxsel::cli
