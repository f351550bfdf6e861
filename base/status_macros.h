// status_macros.h: early returns for absl::Status and absl::StatusOr<T>,
// the way Abseil-based code bases write them.
//
//   absl::Status Load(Store& store) {
//     CTXSEL_RETURN_IF_ERROR(store.Open());
//     CTXSEL_ASSIGN_OR_RETURN(std::vector<Row> rows, store.ReadAll());
//     ...
//   }
//
// CTXSEL_RETURN_IF_ERROR(expr): evaluates `expr` (an absl::Status) once and
// returns it from the enclosing function when it is not OK.
// CTXSEL_ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an
// absl::StatusOr<T>) once; returns its status when not OK, otherwise moves
// the value into `lhs` (a declaration or an existing variable). The
// enclosing function may return absl::Status or any absl::StatusOr<U>.
#ifndef CTXSEL_BASE_STATUS_MACROS_H_
#define CTXSEL_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define CTXSEL_RETURN_IF_ERROR(expr)                \
  do {                                              \
    if (::absl::Status ctxsel_status_ = (expr);     \
        ABSL_PREDICT_FALSE(!ctxsel_status_.ok())) { \
      return ctxsel_status_;                        \
    }                                               \
  } while (false)

#define CTXSEL_STATUS_CONCAT_INNER_(a, b) a##b
#define CTXSEL_STATUS_CONCAT_(a, b) CTXSEL_STATUS_CONCAT_INNER_(a, b)

#define CTXSEL_ASSIGN_OR_RETURN(lhs, expr) \
  CTXSEL_ASSIGN_OR_RETURN_IMPL_(           \
      CTXSEL_STATUS_CONCAT_(ctxsel_statusor_, __LINE__), lhs, expr)

#define CTXSEL_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                \
    return std::move(statusor).status();                   \
  }                                                        \
  lhs = *std::move(statusor)

#endif  // CTXSEL_BASE_STATUS_MACROS_H_
