// ctxsel-cli eval: offline evaluation of context selectors (no server).
#include "client/cli/eval_command.h"

#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/eval_context.h"
#include "client/cli/eval_kernel.h"
#include "client/cli/input_file.h"
#include "client/cli/json_output.h"
#include "selector/compiler_profile.h"
#include "selector/selector.h"

ABSL_FLAG(std::string, directive, "",
          "eval: declare_variant, begin_declare_variant or metadirective "
          "(overrides the document's)");
ABSL_FLAG(std::vector<std::string>, device_kind, {}, "eval: device kinds");
ABSL_FLAG(std::vector<std::string>, device_arch, {}, "eval: device arches");
ABSL_FLAG(std::vector<std::string>, device_isa, {}, "eval: device ISAs");

namespace ctxsel::cli {
namespace {

namespace sel = ::ctxsel::selector;
using nlohmann::json;

// Input errors: where (variant, line, column) and what.
struct InputError {
  json variant = nullptr;
  int line = 0;
  int column = 0;
  std::string message;
};

EvalOutcome Fail(InputError e) {
  EvalOutcome out;
  out.exit_code = kExitBadInput;
  out.output = {{"error",
                 {{"variant", e.variant},
                  {"line", e.line},
                  {"column", e.column},
                  {"message", e.message}}}};
  std::string where =
      e.variant.is_string()
          ? absl::StrCat("variant '", e.variant.get<std::string>(), "': ")
          : "";
  out.text = e.line > 0
                 ? absl::StrCat(where, e.line, ":", e.column, ": ", e.message)
                 : absl::StrCat(where, e.message);
  return out;
}

// Throws InputError with the message of a failed `status`.
void Check(const absl::Status& status) {
  if (!status.ok()) {
    throw InputError{nullptr, 0, 0, std::string(status.message())};
  }
}

// "L:C: message" from the engine -> line, column, message.
InputError SelectorError(const std::string& variant, absl::string_view status) {
  InputError e{variant, 0, 0, std::string(status)};
  std::vector<absl::string_view> parts =
      absl::StrSplit(status, absl::MaxSplits(':', 2));
  if (parts.size() == 3 && absl::SimpleAtoi(parts[0], &e.line) &&
      absl::SimpleAtoi(parts[1], &e.column)) {
    e.message = std::string(absl::StripLeadingAsciiWhitespace(parts[2]));
  }
  return e;
}

std::string String(const json& j, absl::string_view what) {
  if (!j.is_string())
    throw InputError{nullptr, 0, 0, absl::StrCat(what, " must be a string")};
  return j.get<std::string>();
}

std::vector<KernelVariant> Variants(const json& j, sel::Directive directive,
                                    sel::CompilerProfile compiler) {
  if (!j.is_array())
    throw InputError{nullptr, 0, 0, "variants must be an array"};
  std::vector<KernelVariant> out;
  for (const json& v : j) {
    Check(CheckFields(v, "a variant", {"name", "selector", "kernel"}));
    if (!v.contains("name") || !v["name"].is_string() ||
        !v.contains("selector") || !v["selector"].is_string()) {
      throw InputError{nullptr, 0, 0,
                       "a variant needs string \"name\" and \"selector\""};
    }
    std::string name = v["name"].get<std::string>();
    absl::StatusOr<sel::Selector> s =
        sel::Selector::Parse(v["selector"].get<std::string>(), directive);
    if (!s.ok()) throw SelectorError(name, s.status().message());
    if (absl::Status refused = sel::CheckForCompiler(compiler, *s);
        !refused.ok()) {
      throw SelectorError(name, refused.message());
    }
    out.push_back(
        {v.contains("kernel") ? String(v["kernel"], "a variant's kernel") : "",
         {name, *std::move(s)}});
  }
  return out;
}

json CandidateJson(const sel::CandidateReport& c) {
  json terms = json::array();
  for (const sel::ScoreTerm& t : c.terms)
    terms.push_back({{"trait", t.trait}, {"value", t.value}});
  return {{"name", c.name},           {"compatible", c.compatible},
          {"score", c.score},         {"dynamic", c.dynamic},
          {"reason", c.reason},       {"terms", terms},
          {"evaluated", c.evaluated}, {"subset_of", c.subset_of},
          {"selector", c.selector},   {"runtime_only", c.runtime_only}};
}

EvalDocument Read(const json& input) {
  Check(CheckFields(
      input, "the document",
      {"directive", "context", "variants", "kernel", "compiler", "ties"}));
  sel::CompilerProfile compiler = sel::CompilerProfile::kSpec;
  if (input.contains("compiler")) {
    absl::StatusOr<sel::CompilerProfile> c =
        sel::CompilerProfileFromName(String(input["compiler"], "compiler"));
    Check(c.status());
    compiler = *c;
  }
  absl::StatusOr<sel::TieChoice> ties = sel::TieChoiceFromName(
      input.contains("ties") ? String(input["ties"], "ties") : "");
  Check(ties.status());
  sel::Directive directive = sel::Directive::kDeclareVariant;
  if (input.contains("directive")) {
    absl::StatusOr<sel::Directive> d = sel::ParseDirective(
        input["directive"].is_string() ? input["directive"].get<std::string>()
                                       : "");
    if (!d.ok())
      throw InputError{nullptr, 0, 0, std::string(d.status().message())};
    directive = *d;
  }
  absl::StatusOr<sel::Context> read =
      ReadEvalContext(input.value("context", json()));
  Check(read.status());
  EvalDocument doc;
  doc.context = *std::move(read);
  doc.directive = directive;
  doc.compiler = compiler;
  doc.ties = *ties;
  std::vector<KernelVariant> variants =
      Variants(input.value("variants", json::array()), directive, compiler);
  absl::StatusOr<std::string> kernel = ChooseKernel(
      input.contains("kernel") ? String(input["kernel"], "kernel") : "",
      variants);
  if (!kernel.ok()) {
    throw InputError{nullptr, 0, 0, std::string(kernel.status().message())};
  }
  doc.kernel = *std::move(kernel);
  doc.candidates = CandidatesOf(doc.kernel, std::move(variants));
  return doc;
}

EvalOutcome Evaluate(const json& input) {
  EvalDocument doc = Read(input);
  const sel::Context& ctx = doc.context;
  const sel::ResolveOptions options =
      sel::ResolveOptionsFor(doc.compiler, doc.directive, doc.ties);
  absl::StatusOr<sel::Resolution> r =
      sel::Resolve(std::move(doc.candidates), ctx, options);
  if (!r.ok())
    throw InputError{nullptr, 0, 0, std::string(r.status().message())};
  sel::Explanation e = sel::Explain(*r, ctx.variables, ctx.target_devices);
  EvalOutcome out;
  json list = json::array();
  for (const sel::CandidateReport& c : e.candidates)
    list.push_back(CandidateJson(c));
  json runtime_only = json::array();
  for (int index : e.selection.runtime_only)
    runtime_only.push_back(e.candidates[index].name);
  out.output = {
      {"kernel", doc.kernel.empty() ? json(nullptr) : json(doc.kernel)},
      {"compiler", sel::CompilerProfileName(doc.compiler)},
      {"ties", options.ties == sel::TieBreak::kLastDeclared ? "last" : "first"},
      {"selected", e.selection.base()
                       ? json(nullptr)
                       : json(e.candidates[e.selection.index].name)},
      {"score", e.selection.score},
      {"runtime_only", runtime_only},
      {"candidates", list}};
  out.text = absl::StrCat(
      doc.kernel.empty() ? "" : "kernel: ", doc.kernel,
      doc.kernel.empty() ? "" : "\n",
      doc.compiler == sel::CompilerProfile::kSpec
          ? ""
          : absl::StrCat("compiler: ", sel::CompilerProfileName(doc.compiler),
                         " (", sel::CompilerProfileSummary(doc.compiler),
                         ")\n"),
      e.ToText());
  return out;
}

// Folds the command-line flags and NAME=SELECTOR arguments into `doc`.
void ApplyFlags(json& doc, const std::vector<std::string>& variants) {
  if (!absl::GetFlag(FLAGS_directive).empty())
    doc["directive"] = absl::GetFlag(FLAGS_directive);
  if (!absl::GetFlag(FLAGS_kernel).empty())
    doc["kernel"] = absl::GetFlag(FLAGS_kernel);
  if (!absl::GetFlag(FLAGS_compiler).empty())
    doc["compiler"] = absl::GetFlag(FLAGS_compiler);
  if (!absl::GetFlag(FLAGS_ties).empty())
    doc["ties"] = absl::GetFlag(FLAGS_ties);
  json& ctx = doc["context"];
  if (ctx.is_null()) ctx = json::object();
  for (const std::string& c : ConstructNamesFromFlags())
    ctx["construct"].push_back(c);
  for (const auto& [flag, field] : {std::make_pair(&FLAGS_device_kind, "kind"),
                                    std::make_pair(&FLAGS_device_arch, "arch"),
                                    std::make_pair(&FLAGS_device_isa, "isa")}) {
    for (const std::string& name : absl::GetFlag(*flag))
      ctx["device"][field].push_back(name);
  }
  absl::StatusOr<JobVariables> variables = JobVariablesFromFlags();
  if (!variables.ok()) {
    throw InputError{nullptr, 0, 0, std::string(variables.status().message())};
  }
  for (const auto& [name, value] : *variables) ctx["variables"][name] = value;
  for (const std::string& v : variants) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(v, absl::MaxSplits('=', 1));
    doc["variants"].push_back({{"name", kv.first}, {"selector", kv.second}});
  }
}

// Line and column of byte `offset` (1-based) in `text`.
InputError JsonError(absl::string_view text, size_t offset, const char* what) {
  InputError e{nullptr, 1, 1, absl::StrCat("malformed JSON: ", what)};
  for (size_t i = 0; i + 1 < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++e.line;
      e.column = 1;
    } else {
      ++e.column;
    }
  }
  return e;
}

}  // namespace

EvalOutcome ReadEvalDocument(const json& input, EvalDocument& document) {
  try {
    document = Read(input);
    return EvalOutcome{};
  } catch (const InputError& e) {
    return Fail(e);
  } catch (const json::exception& e) {
    return Fail(InputError{nullptr, 0, 0, e.what()});
  }
}

EvalOutcome EvaluateJson(const json& input) {
  try {
    return Evaluate(input);
  } catch (const InputError& e) {
    return Fail(e);
  } catch (const json::exception& e) {
    return Fail(InputError{nullptr, 0, 0, e.what()});
  }
}

EvalOutcome EvaluateDocument(absl::string_view input) {
  try {
    return EvaluateJson(json::parse(input.begin(), input.end()));
  } catch (const json::parse_error& e) {
    return Fail(JsonError(input, e.byte, e.what()));
  }
}

namespace {

int RunEval(const std::vector<std::string>& args) {
  std::vector<std::string> variants;
  std::string path;
  for (const std::string& a : args) {
    (a.find('=') != std::string::npos ? variants.push_back(a) : void(path = a));
  }
  EvalOutcome out;
  std::string text;
  try {
    json doc = json::object();
    if (!path.empty()) {
      absl::StatusOr<std::string> read = ReadInputFile(path);
      if (!read.ok())
        throw InputError{nullptr, 0, 0, std::string(read.status().message())};
      text = *std::move(read);
      doc = json::parse(text);
    }
    ApplyFlags(doc, variants);
    out = EvaluateJson(doc);
  } catch (const InputError& e) {
    out = Fail(e);
  } catch (const json::parse_error& e) {
    out = Fail(JsonError(text, e.byte, e.what()));
  } catch (const json::exception& e) {
    out = Fail(InputError{nullptr, 0, 0, e.what()});
  }
  if (!PrintJsonDocument(out.output)) {
    const bool ok = out.exit_code == kExitOk;
    std::fprintf(ok ? stdout : stderr, "%s%s", out.text.c_str(),
                 ok ? "" : "\n");
  }
  return out.exit_code;
}

}  // namespace

const Command kEvalCommand = {
    "eval",
    "eval [FILE|-] [NAME=SELECTOR...] [--kernel=K] "
    "[--directive=declare_variant|begin_declare_variant|metadirective] "
    "[--construct=C,...] [--device_kind=K,...] [--device_arch=A,...] "
    "[--device_isa=I,...] [--var=NAME=INTEGER,...] "
    "[--compiler=spec|gcc-12|clang-14] [--ties=first|last] [--json]",
    "Evaluate selectors offline (no server).", RunEval};

}  // namespace ctxsel::cli
