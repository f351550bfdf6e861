#include "selector/pragma/fortran_expr.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
