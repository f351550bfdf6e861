#include "selector/pragma/embedded.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
