// job_check.h: the rules for the names clients send: a job's OpenMP context
// (construct names, implementation requirements, variables) and device
// kinds, so the server, the agent and the CLI reject the same typos with the
// same words.
//
//   absl::Status s = CheckConstructName("paralel");
//   // InvalidArgumentError "'paralel' is not an OpenMP construct; did you
//   // mean 'parallel'?"
//   s = CheckVariablesGiven({"N"}, {{"n", 4096}});
//   // InvalidArgumentError "missing N ('n' was given: variable names are
//   // case-sensitive)"
//
// Messages do not name the field; callers prefix it ("job.construct[2].name:
// ..."). Vocabularies come from traits.def.
#ifndef CTXSEL_SELECTOR_JOB_CHECK_H_
#define CTXSEL_SELECTOR_JOB_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "selector/selector.h"

namespace ctxsel::selector {

// A construct of the job's construct trait set: a construct selector (or
// alias, `do`) or another construct that may enclose a call (`distribute`,
// `task`, ...). Names are exact: no spaces, lower case.
absl::Status CheckConstructName(absl::string_view name);

// A `requires` clause name, e.g. unified_shared_memory.
absl::Status CheckRequirement(absl::string_view name);

// An atomic_default_mem_order value, e.g. seq_cst.
absl::Status CheckMemoryOrder(absl::string_view name);

// A device `kind` a device may report (the closed list of traits.def), e.g.
// gpu; device reports use it through sycl/device_normalize.h.
absl::Status CheckDeviceKind(absl::string_view name);

// Every name in `referenced` (what the kernel's selectors read, see
// Selector::variables()) must be in `given`, except device variables
// (device_variables.h), which the implementation gives. The error lists the
// missing names, in order, and says when one was given in another case.
absl::Status CheckVariablesGiven(const std::vector<std::string>& referenced,
                                 const Variables& given);

}  // namespace ctxsel::selector

#endif  // CTXSEL_SELECTOR_JOB_CHECK_H_
