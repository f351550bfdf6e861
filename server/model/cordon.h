// cordon.h: an operator's cordon (`ctxsel-cli devices cordon`), as the
// placement, the claims and the store know it.
#ifndef CTXSEL_SERVER_MODEL_CORDON_H_
#define CTXSEL_SERVER_MODEL_CORDON_H_

#include <cstdint>
#include <string>

namespace ctxsel::server {

// Placement skips the device, or every device of the node; with `drain`,
// renewals of their claims fail too (DEVICE_DRAINED).
struct Cordon {
  std::string device;  // a device id; empty when `node` is cordoned whole
  std::string node;    // set when the whole node is cordoned
  std::string reason;
  bool drain = false;
  std::string by;       // the principal that cordoned it
  int64_t unix_ms = 0;  // when

  // "device:<id>" or "node:<name>": what the store keys it by.
  std::string Key() const {
    return device.empty() ? "node:" + node : "device:" + device;
  }
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_CORDON_H_
