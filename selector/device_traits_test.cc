#include "selector/device_traits.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/traits.h"

namespace ctxsel::selector {
namespace {

using internal::AllSelectors;
using internal::GetSetInfo;
using internal::KnownProperties;
using internal::PropertyKind;
using internal::SelectorId;
using internal::SelectorInfo;
using internal::SetId;

// device_traits.def is read for the `device` and `target_device` selectors
// and for the DeviceTraits fields: all three must name the same traits.
TEST(DeviceTraitsTest, TheFieldsAreTheDeviceSelectorsOfBothSets) {
  std::set<std::string> fields;
  for (const DeviceTraitField& field : kDeviceTraitFields) {
    fields.insert(std::string(field.name));
  }
  for (SetId set : {SetId::kDevice, SetId::kTargetDevice}) {
    std::set<std::string> selectors;
    for (const SelectorInfo& info : AllSelectors()) {
      if (info.set == set && info.kind == PropertyKind::kNames) {
        selectors.insert(std::string(info.name));
      }
    }
    EXPECT_EQ(selectors, fields) << GetSetInfo(set).name;
  }
}

TEST(DeviceTraitsTest, BothKindSelectorsKnowTheSameKinds) {
  EXPECT_EQ(KnownProperties(SelectorId::kDeviceKind),
            KnownProperties(SelectorId::kTargetDeviceKind));
  EXPECT_THAT(KnownProperties(SelectorId::kDeviceKind),
              ::testing::Contains("nohost"));
}

TEST(DeviceTraitsTest, AFieldReadsItsMember) {
  DeviceTraits traits;
  traits.isa = {"avx512f"};
  for (const DeviceTraitField& field : kDeviceTraitFields) {
    EXPECT_EQ((traits.*field.member).contains("avx512f"), field.name == "isa")
        << field.name;
  }
}

}  // namespace
}  // namespace ctxsel::selector
