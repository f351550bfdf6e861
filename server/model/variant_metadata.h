// variant_metadata.h: what a launcher needs besides the selector to call a
// registered variant. Split from model.h so that stores, which never parse
// selectors, do not depend on the selector engine.
#ifndef CTXSEL_SERVER_MODEL_VARIANT_METADATA_H_
#define CTXSEL_SERVER_MODEL_VARIANT_METADATA_H_

#include <string>
#include <vector>

namespace ctxsel::server {

// adjust_args / append_args of a declare variant, kept so that launchers can
// pass arguments as the selected variant expects.
struct VariantMetadata {
  std::vector<std::string> adjust_args;  // e.g. "need_device_ptr:a,b"
  std::vector<std::string> append_args;  // e.g. "interop(target,targetsync)"
  std::string source_file;               // where it was imported from, if any
  int source_line = 0;
  // Image ids ("cubin:sm_90") of the binary it was registered from
  // (images/device_image.h); checked at registration.
  std::vector<std::string> images;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_VARIANT_METADATA_H_
