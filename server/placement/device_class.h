// device_class.h: device classes and node layouts, the units placement
// reasons about instead of single devices.
//
// A *device class* is the set of devices with identical traits (kind, arch,
// isa, vendor, extension), SYCL architecture and capacity (memory and
// compute units, ClassCapacityOf): a fleet of 10,000 H100s is one class, an
// 80 GB and a 40 GB H100 are two, and the engine's static resolution is done
// once per class. Two classes that differ only in capacity share their name
// and short name; DeviceClass::capacity tells them apart. A
// class is named by its traits written as a device selector, e.g.
//   device={kind(gpu, nohost), arch(nvptx, sm_90), vendor(nvidia)}
// so a class name can be pasted into `--device_filter`. Its *short name*
// (DeviceClassShortName) is what tables show: "nvidia_gpu_sm_90",
// "x86_64_v4/avx512".
//
// A *node layout* is which class sits at which device number on a node
// (the host CPU at -1). The `target_device` trait sets of a job depend only
// on the layout of the candidate device's node, so nodes with the same
// layout share every dynamic evaluation. A layout is written (NodeLayoutText)
// as its device numbers with their classes' short names, runs of one class
// joined: "-1:x86_64_v4/amx,0-7:nvidia_gpu_sm_90". That is the one text
// form: Explain, the FAILED_PRECONDITION of Select and coverage all use it,
// and it depends on traits alone, so it is the same in every process.
//
//   DeviceClass gpu = MakeDeviceClass(1, device.traits,
//                                     device.sycl_architecture,
//                                     ClassCapacityOf(device));
//   NodeLayout layout = MakeNodeLayout(7, {{-1, &cpu}, {0, &gpu}});
//   selector::TargetDevicesView td = layout.TargetDevicesFor(gpu.id);
#ifndef CTXSEL_SERVER_PLACEMENT_DEVICE_CLASS_H_
#define CTXSEL_SERVER_PLACEMENT_DEVICE_CLASS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "selector/device_variables.h"
#include "selector/selector.h"
#include "server/model/model.h"

namespace ctxsel::server::placement {

// Immutable once made. The Fleet owns its classes through shared_ptr, so an
// answer (Choice::device_class) shares the class it names, and the class
// outlives the fleet's last device of it for as long as an answer needs it.
struct DeviceClass : std::enable_shared_from_this<DeviceClass> {
  int id = 0;              // stable while the class lives; never reused
  std::string key;         // DeviceClassKey(traits, sycl_architecture)
  std::string name;        // the traits as a device selector (see above)
  std::string short_name;  // DeviceClassShortName(traits, sycl_architecture)
  selector::DeviceTraits traits;
  std::string sycl_architecture;
  // What its devices have (ClassCapacityOf); also what condition()s read
  // through the device variables (selector/device_variables.h).
  selector::DeviceCapacity capacity;
  // What every answer says of a device of this class, in its ctxsel.v1
  // form, built once by MakeDeviceClass: traits (names sorted),
  // sycl_architecture, device_class and device_class_short_name. An
  // answer copies it and sets the device's own fields (DeviceStateToProto).
  v1::Device proto;
};

// The capacity that makes a device's class: its memory and compute units as
// reported, except for the host CPU, whose memory is the node's and differs
// between otherwise identical nodes by a few pages (it would split one CPU
// class per node): a host's class has no capacity.
selector::DeviceCapacity ClassCapacityOf(const Device& device);

// "80 GiB, 132 compute units" (what is known; "capacity not reported").
std::string CapacityText(const selector::DeviceCapacity& capacity);

// The identity of a class: equal keys iff equal traits, SYCL architecture
// and capacity (names within a set are sorted, so report order is
// irrelevant).
std::string DeviceClassKey(const selector::DeviceTraits& traits,
                           const std::string& sycl_architecture,
                           const selector::DeviceCapacity& capacity = {});

// The class name of `traits` (see above); canonical as the selector engine
// prints it when the traits form a valid selector.
std::string DeviceClassName(const selector::DeviceTraits& traits);

// A readable name of a few words for a class, not unique: the SYCL
// architecture of an accelerator ("nvidia_gpu_sm_90"); for a CPU its
// x86-64 level (else its SYCL architecture or arch) and its widest vector
// extension ("x86_64_v4/avx512"); else "<kind>/<arch>" ("gpu/my_accel").
std::string DeviceClassShortName(const selector::DeviceTraits& traits,
                                 const std::string& sycl_architecture);

// The names a listing shows for a device's class.
struct DeviceClassNames {
  std::string name;
  std::string short_name;
};

DeviceClass MakeDeviceClass(int id, selector::DeviceTraits traits,
                            std::string sycl_architecture,
                            selector::DeviceCapacity capacity = {});

struct NodeLayout {
  int id = 0;  // stable while the layout lives; never reused
  // "-1:3,0:1,1:1": index:class id, by index; this process's identity of
  // the layout, never shown (class ids differ between processes).
  std::string key;
  std::string text;  // NodeLayoutText(slots): what people and the API see
  // index -> class, by index.
  std::vector<std::pair<int32_t, const DeviceClass*>> slots;
  // The target-device trait sets of a node with this layout, built once and
  // shared by every class on it (O(devices), not O(devices x classes)).
  selector::TargetDevices target_devices;
  // Class id -> the device number of its first device here: the default
  // device as seen from a device of that class (every device of one class
  // has the same traits, so which of them is the candidate does not matter).
  absl::flat_hash_map<int, int32_t> default_device_by_class;

  // The target devices seen from a device of class `class_id`, which must
  // be on this layout.
  selector::TargetDevicesView TargetDevicesFor(int class_id) const;
};

// The layout key of a node's (index, class) pairs, any order.
std::string NodeLayoutKey(
    std::vector<std::pair<int32_t, const DeviceClass*>> slots);

// The layout's text form (see above) of a node's (index, class) pairs, any
// order: "-1:x86_64_v3/avx2,0-1:amd_gpu_gfx90a". Not unique: short names
// need not be.
std::string NodeLayoutText(
    std::vector<std::pair<int32_t, const DeviceClass*>> slots);

// A layout from a node's (index, class) pairs, any order; the classes must
// outlive the layout.
NodeLayout MakeNodeLayout(
    int id, std::vector<std::pair<int32_t, const DeviceClass*>> slots);

}  // namespace ctxsel::server::placement

#endif  // CTXSEL_SERVER_PLACEMENT_DEVICE_CLASS_H_
