// The service's domain types, shared by the registry, the inventory and
// placement. Plain values: the RPC layer converts them to and from
// ctxsel.v1 messages (server/rpc/proto_convert.h); nothing here knows gRPC.
#ifndef CTXSEL_SERVER_MODEL_MODEL_H_
#define CTXSEL_SERVER_MODEL_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "images/device_image.h"
#include "selector/compiler_profile.h"
#include "selector/selector.h"
#include "server/model/cordon.h"
#include "server/model/policy.h"
#include "server/model/variant_metadata.h"

namespace ctxsel::server {

// A registered kernel variant. `order` is its declaration order within the
// kernel (ties in score go to the lower order).
struct Variant {
  std::string kernel;  // the base function
  std::string name;    // the variant function; unique within a kernel
  std::string selector_text;
  selector::Selector selector;
  int64_t order = 0;
  int64_t revision = 0;  // registry revision that stored it
  VariantMetadata metadata;
};

// Numeric device properties; utilisation changes with every heartbeat.
struct DeviceProperties {
  uint64_t memory_bytes = 0;
  int32_t compute_units = 0;
  double utilisation = 0.0;  // 0..1
  // How many claims may hold the device at once (>= 1; > 1 for sharing).
  int32_t claim_capacity = 1;
};

// What a vendor runtime can pin a device by (ctxsel.v1.Device documents
// each); empty / -1 when unknown.
struct DeviceIdentity {
  std::string uuid;
  std::string pci_bus_id;
  int32_t vendor_index = -1;

  friend bool operator==(const DeviceIdentity& a, const DeviceIdentity& b) {
    return a.uuid == b.uuid && a.pci_bus_id == b.pci_bus_id &&
           a.vendor_index == b.vendor_index;
  }
};

// What the agent's checks say of a device (ctxsel.v1.DeviceHealth, whose
// unset value is kHealthy). Ordered: a larger value is worse.
enum class DeviceHealth { kHealthy = 0, kDegraded = 1, kUnhealthy = 2 };

// A device's condition beyond its traits: its reported health, its parent
// (it is a partition of that device) and an operator's cordon.
struct DeviceCondition {
  DeviceHealth health = DeviceHealth::kHealthy;
  std::string health_reason;  // empty when healthy
  std::string parent;         // a device id of the same node; empty: none
  // Set by the server from its cordons (never from a report).
  bool cordoned = false;
  bool draining = false;
  std::string cordon_reason;

  friend bool operator==(const DeviceCondition& a, const DeviceCondition& b) {
    return a.health == b.health && a.health_reason == b.health_reason &&
           a.parent == b.parent && a.cordoned == b.cordoned &&
           a.draining == b.draining && a.cordon_reason == b.cordon_reason;
  }
  friend bool operator!=(const DeviceCondition& a, const DeviceCondition& b) {
    return !(a == b);
  }
};

// What is a device's own, not its device class's: identity, numbers and
// condition. Placement keeps devices (and answers with them) as this, their
// traits once per class (server/placement/device_class.h).
struct DeviceState {
  std::string id;     // unique in the fleet, e.g. "node7/gpu0"
  std::string node;   // node id
  int32_t index = 0;  // device_num on its node; the host CPU is -1
  DeviceProperties properties;
  DeviceIdentity identity;
  DeviceCondition condition;
};

// One device of one node as the inventory knows it: its state and the
// traits that make its class.
struct Device : DeviceState {
  std::string sycl_architecture;  // e.g. "nvidia_gpu_sm_90"; may be empty
  // kind, arch, isa, vendor, extension as reported (arch already enriched
  // with the SYCL architecture's aliases by the catalog).
  selector::DeviceTraits traits;
};

// A part of one device that a claim holds (ClaimRequest.memory_bytes,
// compute_percent); both 0: the whole device.
struct ClaimShare {
  uint64_t memory_bytes = 0;
  int32_t compute_percent = 0;  // 0..100
  bool whole() const { return memory_bytes == 0 && compute_percent == 0; }
};

// A job launcher's question: which variant of `kernel`, on which device?
struct Job {
  std::string kernel;
  std::vector<selector::ConstructTrait> construct;  // outermost first
  selector::ImplementationTraits implementation;
  selector::Variables variables;
  // Constraints: only these nodes (empty: any); only devices matching this
  // device selector filter (empty text: any).
  std::vector<std::string> nodes;
  std::string device_filter;
  // Only these devices, by id or UUID (the launcher's allocation); empty:
  // any device.
  std::vector<std::string> allowed_devices;
  Policy policy = kDefaultPolicy;
  int top_k = 3;  // alternatives to return besides the choice
  // Write Placement::explanation; false leaves it empty (a launcher that
  // reads only the placement spares the server formatting it).
  bool explanation = true;
  // Devices to place on, each a distinct device (all or nothing).
  int count = 1;
  // A `kind` trait every chosen device must have ("gpu"); empty: any.
  std::string required_kind;
  // Never the base function.
  bool require_variant = false;
  // With count > 1: every rank on one node.
  bool same_node = false;
  // The least capacity a chosen device's class must have (0: any); a host
  // CPU's class has none (ClassCapacityOf, server/placement/device_class.h).
  uint64_t min_memory_bytes = 0;
  int32_t min_compute_units = 0;
  // The binary's device images: only devices that run one, instead of the
  // kernel's images (KernelEntry::images); empty: the kernel's.
  std::vector<images::DeviceImage> images;
  // With a claim: the share of each chosen device it takes (placement then
  // skips devices without that much left; server/claims/claims.h).
  ClaimShare share;
  // Whose binary the answer is for, and its tie rule (compiler_profile.h):
  // part of the job's signature, so resolutions are cached per compiler.
  selector::CompilerProfile compiler = selector::CompilerProfile::kSpec;
  selector::TieChoice ties = selector::TieChoice::kCompilerDefault;
};

// The most devices one Select may place (Job::count) or name
// (Job::allowed_devices): a node holds at most a few dozen devices, and a
// multi-node job of more asks per node.
inline constexpr int kMaxJobCount = 256;
inline constexpr int kMaxAllowedDevices = 4096;
// The most device images a variant or a job names (a fat binary carries
// one per target it was built for: a few dozen at most).
inline constexpr size_t kMaxImages = 256;

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_MODEL_H_
