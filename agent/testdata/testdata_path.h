// Where agent/testdata lives in a test's runfiles.
#ifndef CTXSEL_AGENT_TESTDATA_TESTDATA_PATH_H_
#define CTXSEL_AGENT_TESTDATA_TESTDATA_PATH_H_

#include <cstdlib>
#include <string>

namespace ctxsel::agent {

// Absolute path of agent/testdata/`name` in the test's runfiles.
inline std::string TestdataPath(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::string root = srcdir != nullptr ? std::string(srcdir) + "/ctxsel/" : "";
  return root + "agent/testdata/" + name;
}

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_TESTDATA_TESTDATA_PATH_H_
