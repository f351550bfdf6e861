// Selector errors travel as an absl::Status payload: length-prefixed
// fields, so messages may hold any byte.
#include "selector/selector_error.h"

#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::selector {
namespace {

constexpr absl::string_view kPayloadUrl = "type.ctxsel/selector.SelectorError";

void Put(std::string& out, absl::string_view field) {
  absl::StrAppend(&out, field.size(), ":", field);
}

// Reads one field written by Put() from the front of `in`.
bool Take(absl::string_view& in, std::string& field) {
  size_t colon = in.find(':');
  size_t size = 0;
  if (colon == absl::string_view::npos ||
      !absl::SimpleAtoi(in.substr(0, colon), &size) ||
      size > in.size() - colon - 1) {
    return false;
  }
  field = std::string(in.substr(colon + 1, size));
  in.remove_prefix(colon + 1 + size);
  return true;
}

bool TakeInt(absl::string_view& in, int& value) {
  std::string field;
  return Take(in, field) && absl::SimpleAtoi(field, &value);
}

void PutPosition(std::string& out, const TextPosition& p) {
  Put(out, absl::StrCat(p.line));
  Put(out, absl::StrCat(p.column));
  Put(out, absl::StrCat(p.text));
}

bool TakePosition(absl::string_view& in, TextPosition& p) {
  return TakeInt(in, p.line) && TakeInt(in, p.column) && TakeInt(in, p.text);
}

}  // namespace

std::string TextPosition::ToString() const {
  if (text == 0) return absl::StrCat(line, ":", column);
  return absl::StrCat(line, ":", column, " of selector text ", text);
}

std::string SelectorError::ToString() const {
  std::string out = absl::StrCat(position.ToString(), ": ", message);
  if (first) absl::StrAppend(&out, " (first at ", first->ToString(), ")");
  if (!context.empty()) absl::StrAppend(&out, " (", context, ")");
  return out;
}

absl::Status MakeSelectorError(const SelectorError& error) {
  absl::Status status = absl::InvalidArgumentError(error.ToString());
  std::string payload;
  PutPosition(payload, error.position);
  Put(payload, error.message);
  Put(payload, error.first ? "1" : "0");
  if (error.first) PutPosition(payload, *error.first);
  Put(payload, error.context);
  status.SetPayload(kPayloadUrl, absl::Cord(payload));
  return status;
}

std::optional<SelectorError> GetSelectorError(const absl::Status& status) {
  // absl::optional (Debian builds Abseil with its own optional).
  const auto payload = status.GetPayload(kPayloadUrl);
  if (!payload) return std::nullopt;
  const std::string flat(*payload);
  absl::string_view in = flat;
  SelectorError error;
  std::string has_first;
  if (!TakePosition(in, error.position) || !Take(in, error.message) ||
      !Take(in, has_first)) {
    return std::nullopt;
  }
  if (has_first == "1" && !TakePosition(in, error.first.emplace())) {
    return std::nullopt;
  }
  if (!Take(in, error.context) || !in.empty()) return std::nullopt;
  return error;
}

}  // namespace ctxsel::selector
