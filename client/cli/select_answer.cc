#include "client/cli/select_answer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ctxsel::cli {
namespace {

// The proto's rule: index -1 is the node's host CPU; agents also mark it
// with kind(host).
bool IsHostDevice(const v1::Device& device) {
  const auto& kinds = device.traits().kind();
  return device.index() < 0 ||
         std::find(kinds.begin(), kinds.end(), "host") != kinds.end();
}

template <typename Repeated>
bool Contains(const Repeated& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// How `choice` breaks `job`'s terms, "" when it keeps them.
std::string Broken(const v1::Job& job, const v1::PlacementChoice& choice) {
  const v1::Device& device = choice.device();
  if (job.allowed_devices_size() > 0 &&
      !Contains(job.allowed_devices(), device.id()) &&
      (device.uuid().empty() ||
       !Contains(job.allowed_devices(), device.uuid()))) {
    return absl::StrCat(device.id(), ", not in Job.allowed_devices");
  }
  if (!job.required_kind().empty() &&
      !Contains(device.traits().kind(), job.required_kind())) {
    return absl::StrCat(device.id(), ", not of Job.required_kind ",
                        job.required_kind());
  }
  if (job.require_variant() && choice.base()) {
    return "the base function despite Job.require_variant";
  }
  if (job.images_size() > 0 && !Contains(job.images(), choice.image())) {
    return absl::StrCat(device.id(), ", which runs none of Job.images");
  }
  if (device.memory_bytes() < job.min_memory_bytes() ||
      device.compute_units() < job.min_compute_units()) {
    return absl::StrCat(device.id(),
                        ", below Job.min_memory_bytes or min_compute_units");
  }
  return "";
}

}  // namespace

int RankCount(const v1::SelectResponse& answer) {
  return std::max(answer.ranks_size(), 1);
}

const v1::PlacementChoice& RankPlacement(const v1::SelectResponse& answer,
                                         int rank) {
  return answer.ranks_size() > 0 ? answer.ranks(rank).placement()
                                 : answer.placement();
}

const v1::Claim& RankClaim(const v1::SelectResponse& answer, int rank) {
  return answer.ranks_size() > 0 ? answer.ranks(rank).claim() : answer.claim();
}

EnvVars RankEnv(const v1::SelectRequest& request,
                const v1::SelectResponse& answer, int rank) {
  if (answer.ranks_size() > 0) {
    EnvVars env;
    for (const v1::EnvironmentVariable& v : answer.ranks(rank).environment()) {
      env.emplace_back(v.name(), v.value());
    }
    return env;
  }
  return launch::LaunchEnv(answer.placement(), request.job().kernel(),
                           answer.claim());
}

std::string FallbackNote(const v1::SelectRequest& request,
                         const v1::SelectResponse& answer,
                         std::optional<int> rank) {
  const v1::Job& job = request.job();
  for (int r = 0; r < RankCount(answer); ++r) {
    if (rank.has_value() && r != *rank) continue;
    const v1::PlacementChoice& p = RankPlacement(answer, r);
    const bool base = p.base() && !job.require_variant();
    const bool host = IsHostDevice(p.device()) && job.required_kind().empty();
    if (!base && !host) continue;
    const std::string what =
        base ? absl::StrCat("the base function of ", job.kernel())
             : p.variant();
    const std::string where =
        host ? absl::StrCat(" on the host CPU ", p.device().id()) : "";
    const std::string who =
        RankCount(answer) > 1 ? absl::StrCat(" for rank ", r) : "";
    const char* instead = base && host ? "--require_variant or --require=gpu"
                          : base       ? "--require_variant"
                                       : "--require=gpu";
    return absl::StrCat("placed ", what, where, who,
                        base ? " (no variant fits)" : "", "; add ", instead,
                        " to fail instead");
  }
  return "";
}

absl::Status CheckTerms(const v1::SelectRequest& request,
                        const v1::SelectResponse& answer) {
  const v1::Job& job = request.job();
  const int wanted = std::max(job.count(), 1);
  std::string broken;
  if (RankCount(answer) != wanted) {
    broken =
        absl::StrCat(RankCount(answer), " placements for Job.count ", wanted);
  }
  for (int r = 0; r < RankCount(answer) && broken.empty(); ++r) {
    broken = Broken(job, RankPlacement(answer, r));
  }
  if (broken.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the server answered ", broken,
      ": it predates these Job fields (ctxsel.v1, issue 20); upgrade it"));
}

}  // namespace ctxsel::cli
