#include "server/placement/placement.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "server/placement/device_class.h"

namespace ctxsel::server::placement {
namespace {

std::string ChoiceText(const Choice& c) {
  return absl::StrCat(c.base() ? "base function" : c.variant->name, " (score ",
                      c.score, ") on ", c.device.id, " [",
                      c.device_class->short_name, "], utilisation ",
                      c.device.properties.utilisation,
                      c.image.empty() ? "" : ", image ", c.image);
}

std::string ClassText(const ClassReport& c) {
  std::string head = absl::StrCat("device class ", c.device_class_short_name);
  if (c.capacity.memory_bytes > 0 || c.capacity.compute_units > 0) {
    absl::StrAppend(&head, " (", CapacityText(c.capacity), ")");
  }
  if (!c.node_layout.empty()) {
    absl::StrAppend(&head, " on layout ", c.node_layout);
  }
  absl::StrAppend(&head, ": ", c.device_count, " devices, ",
                  c.eligible_device_count, " within the constraints; ");
  if (c.suspect_device_count > 0) {
    absl::StrAppend(&head, c.suspect_device_count,
                    " on suspect nodes left out; ");
  }
  if (c.unhealthy_device_count > 0) {
    absl::StrAppend(&head, c.unhealthy_device_count, " unhealthy left out; ");
  }
  if (c.cordoned_device_count > 0) {
    absl::StrAppend(&head, c.cordoned_device_count, " cordoned left out; ");
  }
  if (!c.eligible) {
    absl::StrAppend(&head, "rejected: ", c.reason, "\n");
    return head;
  }
  absl::StrAppend(&head, c.winner ? "WINNER" : "outranked", "\n");
  if (!c.image.empty()) {
    absl::StrAppend(
        &head, "  runs image ", c.image,
        c.image_note.empty() ? "" : absl::StrCat(" (", c.image_note, ")"),
        "\n");
  }
  std::string body = c.explanation.ToText();
  // Indent the engine's text under its class.
  absl::StrAppend(&head, "  ", absl::StrReplaceAll(body, {{"\n", "\n  "}}));
  while (!head.empty() && head.back() == ' ') head.pop_back();
  if (head.back() != '\n') head.push_back('\n');
  return head;
}

}  // namespace

const std::string& Choice::variant_name() const {
  static const std::string* const kEmpty = new std::string;
  return base() ? *kEmpty : variant->name;
}

std::string PlacementReport::ToText() const {
  std::string out;
  if (status.ok()) {
    absl::StrAppend(&out, "placement: ", ChoiceText(placement.choice), "\n",
                    placement.explanation, "\n");
    for (const Choice& c : placement.alternatives) {
      absl::StrAppend(&out, "alternative: ", ChoiceText(c), "\n");
    }
  } else {
    absl::StrAppend(&out, "no placement: ", status.message(), "\n");
  }
  for (const ClassReport& c : classes)
    absl::StrAppend(&out, "\n", ClassText(c));
  return out;
}

}  // namespace ctxsel::server::placement
