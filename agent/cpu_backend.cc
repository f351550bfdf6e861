#include "agent/cpu_backend.h"

#include <hwloc.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/arch_traits.h"

namespace ctxsel::agent {
namespace {

// hwloc's view of the machine; all zero if hwloc cannot load a topology.
CpuTopology ReadTopology() {
  CpuTopology t;
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return t;
  if (hwloc_topology_load(topology) == 0) {
    auto count = [&](hwloc_obj_type_t type) {
      return std::max(0, hwloc_get_nbobjs_by_type(topology, type));
    };
    t.packages = count(HWLOC_OBJ_PACKAGE);
    t.cores = count(HWLOC_OBJ_CORE);
    t.threads = count(HWLOC_OBJ_PU);
    t.numa_nodes = count(HWLOC_OBJ_NUMANODE);
    t.memory_bytes =
        static_cast<int64_t>(hwloc_get_root_obj(topology)->total_memory);
  }
  hwloc_topology_destroy(topology);
  return t;
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// (busy, total) jiffies of a /proc/stat "cpu ..." line.
std::pair<uint64_t, uint64_t> Jiffies(const std::string& line) {
  std::istringstream in(line);
  std::string label;
  in >> label;
  std::vector<uint64_t> fields;
  for (uint64_t v; in >> v;) fields.push_back(v);
  if (label != "cpu" || fields.size() < 4) return {0, 0};
  // user nice system idle iowait irq softirq steal guest guest_nice; guest
  // time is already counted in user and nice.
  if (fields.size() > 8) fields.resize(8);
  uint64_t total = std::accumulate(fields.begin(), fields.end(), uint64_t{0});
  uint64_t idle = fields[3] + (fields.size() > 4 ? fields[4] : 0);
  return {total - idle, total};
}

class CpuBackend : public DiscoveryBackend {
 public:
  CpuBackend(std::string proc_stat, const std::string& proc_cpuinfo)
      : proc_stat_(std::move(proc_stat)),
        device_(DescribeCpu(ReadCpu(proc_cpuinfo), ReadTopology())),
        last_sample_(FirstLine(proc_stat_)) {}

  std::string name() const override { return "cpu"; }

  absl::StatusOr<std::vector<DeviceInfo>> Discover() override {
    if (device_.sycl_architecture.empty()) return std::vector<DeviceInfo>();
    std::string sample = FirstLine(proc_stat_);
    device_.utilisation = CpuBusyFraction(last_sample_, sample);
    last_sample_ = std::move(sample);
    return std::vector<DeviceInfo>{device_};
  }

 private:
  std::string proc_stat_;
  DeviceInfo device_;
  std::string last_sample_;
};

}  // namespace

DeviceInfo DescribeCpu(const CpuInfo& cpu, const CpuTopology& topology) {
  DeviceInfo d;
  if (cpu.level == 0) return d;  // not an x86-64 processor
  d.backend = "cpu";
  d.sycl_architecture = "x86_64";
  (void)ApplyArchTraits(d);  // x86_64 is always in the catalog
  d.vendor = {cpu.vendor};
  d.name = cpu.brand.empty() ? cpu.vendor_id : cpu.brand;
  d.isa = cpu.isas;
  for (int level = 2; level <= cpu.level; ++level) {
    d.isa.push_back(absl::StrCat("x86_64_v", level));
  }
  d.compute_units = topology.cores;
  d.threads = topology.threads;
  d.numa_nodes = topology.numa_nodes;
  d.memory_bytes = topology.memory_bytes;
  d.attributes["vendor_id"] = cpu.vendor_id;
  d.attributes["family"] = absl::StrCat(cpu.family);
  d.attributes["model"] = absl::StrCat(cpu.model);
  d.attributes["stepping"] = absl::StrCat(cpu.stepping);
  d.attributes["packages"] = absl::StrCat(topology.packages);
  return d;
}

double CpuBusyFraction(const std::string& before, const std::string& after) {
  auto [busy0, total0] = Jiffies(before);
  auto [busy1, total1] = Jiffies(after);
  if (total0 == 0 || total1 <= total0 || busy1 < busy0) return 0.0;
  return static_cast<double>(busy1 - busy0) /
         static_cast<double>(total1 - total0);
}

std::unique_ptr<DiscoveryBackend> MakeCpuBackend(std::string proc_stat,
                                                 std::string proc_cpuinfo) {
  return std::make_unique<CpuBackend>(std::move(proc_stat), proc_cpuinfo);
}

}  // namespace ctxsel::agent
