#include "slurm/plugin_config.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ctxsel::slurm {
namespace {

absl::Status BadArg(absl::string_view arg, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("plugstack.conf ", arg, ": ", why));
}

absl::Status BadOption(JobOption option, absl::string_view value,
                       absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", JobOptionName(option), "=", value, ": ", why));
}

absl::StatusOr<absl::Duration> PositiveDuration(absl::string_view arg,
                                                absl::string_view text) {
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration) ||
      duration <= absl::ZeroDuration() ||
      duration == absl::InfiniteDuration()) {
    return BadArg(arg, "want a positive duration such as 5s or 10m");
  }
  return duration;
}

bool IsIdentifier(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// "a, b,c" -> {"a", "b", "c"}; an empty item is an error.
absl::StatusOr<std::vector<std::string>> Names(JobOption option,
                                               absl::string_view value) {
  std::vector<std::string> names;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) return BadOption(option, value, "an empty name");
    names.emplace_back(item);
  }
  return names;
}

}  // namespace

absl::StatusOr<PluginConfig> ParsePluginArgs(
    const std::vector<std::string>& args) {
  PluginConfig config;
  std::set<std::string> seen;
  for (const std::string& arg : args) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(arg, absl::MaxSplits('=', 1));
    const std::string& key = kv.first;
    const std::string& value = kv.second;
    if (!seen.insert(key).second) return BadArg(arg, "given twice");
    const bool has_value = arg.find('=') != std::string::npos;
    if (key == "insecure") {
      if (has_value) return BadArg(arg, "takes no value");
      config.security.insecure = true;
      continue;
    }
    if (!has_value || value.empty()) {
      return BadArg(arg,
                    "want KEY=VALUE (server, ca, token_file, timeout, "
                    "fallback, claim) or insecure");
    }
    if (key == "server") {
      config.server = value;
    } else if (key == "ca") {
      config.security.ca_file = value;
    } else if (key == "token_file") {
      config.security.token_file = value;
    } else if (key == "timeout") {
      absl::StatusOr<absl::Duration> timeout = PositiveDuration(arg, value);
      if (!timeout.ok()) return timeout.status();
      config.timeout = *timeout;
    } else if (key == "claim") {
      absl::StatusOr<absl::Duration> claim = PositiveDuration(arg, value);
      if (!claim.ok()) return claim.status();
      config.claim = *claim;
    } else if (key == "fallback") {
      if (value == "fail") {
        config.fallback = Fallback::kFail;
      } else if (value == "base") {
        config.fallback = Fallback::kBase;
      } else {
        return BadArg(arg, "want fallback=fail or fallback=base");
      }
    } else {
      return BadArg(arg,
                    "unknown argument (server, ca, token_file, "
                    "insecure, timeout, fallback, claim)");
    }
  }
  if (config.server.empty()) {
    return absl::InvalidArgumentError(
        "plugstack.conf: the ctxsel plugin needs server=HOST:PORT");
  }
  if (config.security.insecure && (!config.security.ca_file.empty() ||
                                   !config.security.token_file.empty())) {
    return absl::InvalidArgumentError(
        "plugstack.conf insecure: not with ca= or token_file= (a token is "
        "sent only over TLS)");
  }
  return config;
}

absl::string_view JobOptionName(JobOption option) {
  switch (option) {
    case JobOption::kKernel:
      return "ctxsel-kernel";
    case JobOption::kConstruct:
      return "ctxsel-construct";
    case JobOption::kVariables:
      return "ctxsel-var";
  }
  return "";
}

absl::Status SetJobOption(JobOption option, absl::string_view value,
                          JobOptions& options) {
  switch (option) {
    case JobOption::kKernel: {
      absl::string_view kernel = absl::StripAsciiWhitespace(value);
      if (kernel.empty()) return BadOption(option, value, "an empty kernel");
      options.kernel = std::string(kernel);
      return absl::OkStatus();
    }
    case JobOption::kConstruct: {
      absl::StatusOr<std::vector<std::string>> names = Names(option, value);
      if (!names.ok()) return names.status();
      options.construct = *std::move(names);
      return absl::OkStatus();
    }
    case JobOption::kVariables: {
      absl::StatusOr<std::vector<std::string>> items = Names(option, value);
      if (!items.ok()) return items.status();
      std::vector<std::pair<std::string, int64_t>> variables;
      std::set<std::string> names;
      for (const std::string& item : *items) {
        std::pair<absl::string_view, absl::string_view> kv =
            absl::StrSplit(item, absl::MaxSplits('=', 1));
        const std::string name(absl::StripAsciiWhitespace(kv.first));
        int64_t number = 0;
        if (!IsIdentifier(name) ||
            !absl::SimpleAtoi(absl::StripAsciiWhitespace(kv.second), &number)) {
          return BadOption(option, value,
                           absl::StrCat("'", item, "' is not NAME=INTEGER"));
        }
        if (!names.insert(name).second) {
          return BadOption(option, value,
                           absl::StrCat(name, " is given twice"));
        }
        variables.emplace_back(name, number);
      }
      options.variables = std::move(variables);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError("unknown option");
}

bool Requested(const JobOptions& options) {
  return !options.kernel.empty() || !options.construct.empty() ||
         !options.variables.empty();
}

absl::StatusOr<v1::Job> JobFor(const JobOptions& options) {
  if (options.kernel.empty()) {
    return absl::InvalidArgumentError(
        "--ctxsel-construct and --ctxsel-var need --ctxsel-kernel=K");
  }
  v1::Job job;
  job.set_kernel(options.kernel);
  for (const std::string& name : options.construct) {
    job.add_construct()->set_name(name);
  }
  for (const auto& [name, value] : options.variables) {
    (*job.mutable_variables())[name] = value;
  }
  return job;
}

}  // namespace ctxsel::slurm
