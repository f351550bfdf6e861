#include "images/image_fixtures.h"

#include "absl/strings/str_cat.h"

namespace ctxsel::images::testing {
namespace {

template <typename T>
void Put(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(
        static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  }
}

template <typename T>
void PutAt(std::string& out, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out[at + i] =
        static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  }
}

std::string ElfHeader(unsigned machine, uint32_t flags, unsigned abi) {
  std::string h(64, '\0');
  h[0] = 0x7f;
  h[1] = 'E';
  h[2] = 'L';
  h[3] = 'F';
  h[4] = 2;  // ELF64
  h[5] = 1;  // little-endian
  h[6] = 1;
  h[8] = static_cast<char>(abi);
  PutAt<uint16_t>(h, 16, 1);  // ET_REL
  PutAt<uint16_t>(h, 18, machine);
  PutAt<uint32_t>(h, 20, 1);
  PutAt<uint32_t>(h, 48, flags);
  PutAt<uint16_t>(h, 52, 64);
  PutAt<uint16_t>(h, 58, 64);
  return h;
}

}  // namespace

std::string CudaFatbin(const std::vector<FatbinEntry>& entries) {
  std::string body;
  for (const FatbinEntry& e : entries) {
    // Payloads are padded to 8 bytes; the size counts the padding.
    std::string payload = e.payload;
    payload.resize((payload.size() + 7) / 8 * 8, '\0');
    std::string h(64, '\0');
    PutAt<uint16_t>(h, 0, e.ptx ? 1 : 2);
    PutAt<uint16_t>(h, 2, 0x0101);
    PutAt<uint32_t>(h, 4, 64);
    PutAt<uint64_t>(h, 8, payload.size());
    PutAt<uint16_t>(h, 24, e.ptx ? 0 : 7);  // PTX ISA minor / major
    PutAt<uint16_t>(h, 26, e.ptx ? 8 : 0);
    PutAt<uint32_t>(h, 28, e.sm);
    PutAt<uint64_t>(h, 40, 1);  // 64-bit code
    body += h + payload;
  }
  std::string out;
  Put<uint32_t>(out, 0xBA55ED50);
  Put<uint16_t>(out, 1);
  Put<uint16_t>(out, 16);
  Put<uint64_t>(out, body.size());
  return out + body;
}

std::string DeviceElf(unsigned e_machine, uint32_t e_flags,
                      unsigned abi_version) {
  return ElfHeader(e_machine, e_flags, abi_version);
}

std::string OffloadBundle(
    const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string head = "__CLANG_OFFLOAD_BUNDLE__";
  Put<uint64_t>(head, entries.size());
  size_t table = head.size();
  for (const auto& [id, contents] : entries) table += 24 + id.size();
  std::string data;
  for (const auto& [id, contents] : entries) {
    Put<uint64_t>(head, table + data.size());
    Put<uint64_t>(head, contents.size());
    Put<uint64_t>(head, id.size());
    head += id;
    data += contents;
  }
  return head + data;
}

std::string ElfWithSections(
    const std::vector<std::pair<std::string, std::string>>& sections,
    unsigned e_machine) {
  std::string names(1, '\0');
  std::string data;
  std::string headers(64, '\0');  // the null section
  auto add = [&](const std::string& name, const std::string& contents,
                 uint32_t type) {
    std::string sh(64, '\0');
    PutAt<uint32_t>(sh, 0, names.size());
    PutAt<uint32_t>(sh, 4, type);
    PutAt<uint64_t>(sh, 24, 64 + data.size());
    PutAt<uint64_t>(sh, 32, contents.size());
    names += name + '\0';
    data += contents;
    headers += sh;
  };
  for (const auto& [name, contents] : sections) add(name, contents, 1);
  // The names section names itself; its contents are final after this.
  std::string sh(64, '\0');
  PutAt<uint32_t>(sh, 0, names.size());
  names += std::string(".shstrtab") + '\0';
  PutAt<uint32_t>(sh, 4, 3);
  PutAt<uint64_t>(sh, 24, 64 + data.size());
  PutAt<uint64_t>(sh, 32, names.size());
  data += names;
  headers += sh;
  std::string out = ElfHeader(e_machine, 0, 0);
  const uint16_t count = static_cast<uint16_t>(sections.size() + 2);
  PutAt<uint64_t>(out, 40, 64 + data.size());
  PutAt<uint16_t>(out, 60, count);
  PutAt<uint16_t>(out, 62, count - 1);
  return out + data + headers;
}

std::string CudaHostBinary(const std::vector<FatbinEntry>& entries) {
  return ElfWithSections(
      {{".text", "host code"}, {".nv_fatbin", CudaFatbin(entries)}});
}

std::string HipHostBinary(const std::vector<std::string>& target_ids) {
  std::vector<std::pair<std::string, std::string>> entries = {
      {"host-x86_64-unknown-linux--", ""}};
  for (const std::string& id : target_ids) {
    entries.push_back(
        {absl::StrCat("hipv4-amdgcn-amd-amdhsa--", id), DeviceElf(224, 0, 2)});
  }
  return ElfWithSections(
      {{".text", "host code"}, {".hip_fatbin", OffloadBundle(entries)}});
}

}  // namespace ctxsel::images::testing
