#include "server/main/check_config.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/data_dir.h"

namespace ctxsel::server {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A fresh directory under the test's own temporary directory.
std::string FreshDir(const std::string& name) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  mkdir(dir.c_str(), 0700);
  return dir;
}

ServerOptions Loopback() {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.insecure = true;
  return options;
}

TEST(LimitProblemsTest, DefaultsAreSane) {
  EXPECT_THAT(LimitProblems(ServerOptions{}), IsEmpty());
}

TEST(EffectiveDefaultsTest, ZeroMeansAMultipleOfTheHeartbeat) {
  ServerOptions options;
  options.heartbeat_interval = absl::Seconds(2);
  EXPECT_EQ(EffectiveNodeTtl(options), absl::Seconds(6));
  EXPECT_EQ(EffectiveSuspectAfter(options), absl::Seconds(4));
  options.node_ttl = absl::Seconds(9);
  options.suspect_after = absl::Seconds(5);
  EXPECT_EQ(EffectiveNodeTtl(options), absl::Seconds(9));
  EXPECT_EQ(EffectiveSuspectAfter(options), absl::Seconds(5));
}

TEST(RunAsUserTest, UnknownUserIsInvalidAndRunsNothing) {
  bool ran = false;
  absl::StatusOr<int> code = RunAsUser("no-such-user-ctxsel", [&ran] {
    ran = true;
    return 0;
  });
  EXPECT_EQ(code.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(code.status().message(), HasSubstr("no-such-user-ctxsel"));
  EXPECT_FALSE(ran);
}

TEST(RunAsUserTest, ReturnsTheChildsExitStatus) {
  const passwd* self = getpwuid(geteuid());
  ASSERT_NE(self, nullptr);
  absl::StatusOr<int> code = RunAsUser(self->pw_name, [] { return 7; });
  ASSERT_TRUE(code.ok()) << code.status();
  // 2: this process may not set its groups (a sandbox's user namespace).
  if (*code == 2) GTEST_SKIP() << "cannot become " << self->pw_name << " here";
  EXPECT_EQ(*code, 7);
}

TEST(LimitProblemsTest, EachBrokenLimitNamesItsFlag) {
  ServerOptions options;
  options.max_threads = 0;
  options.max_message_bytes = 1000;
  EXPECT_THAT(
      LimitProblems(options),
      ElementsAre(HasSubstr("max_message_bytes:"), HasSubstr("max_threads:")));
}

TEST(LimitProblemsTest, SuspectMustComeBeforeExpiry) {
  ServerOptions options;
  options.node_ttl = absl::Seconds(2);
  options.suspect_after = absl::Seconds(2);
  EXPECT_THAT(LimitProblems(options),
              ElementsAre(HasSubstr("suspect_after: must be shorter")));
}

TEST(CheckConfigTest, GoodConfigPlansWithoutChangingAnything) {
  ServerOptions options = Loopback();
  options.data_dir = FreshDir("good") + "/not-yet";
  options.metrics_listen = "127.0.0.1:0";
  const ConfigCheck check = CheckConfig(options);
  EXPECT_THAT(check.problems, IsEmpty());
  EXPECT_THAT(check.plan, Contains(HasSubstr("listen: serve ctxsel.v1 on")));
  EXPECT_THAT(check.plan, Contains(HasSubstr("metrics_listen: serve http://")));
  EXPECT_THAT(check.plan, Contains(HasSubstr("data_dir: create")));
  struct stat info {};
  EXPECT_NE(stat(options.data_dir.c_str(), &info), 0) << "a dry run created it";
}

// The files a start reads: a missing or unreadable key, a file that is no
// PEM, a tokens file that does not load, or TLS without its pair are
// problems of the check, not failures of the start (which systemd would
// restart every 2 s).
TEST(CheckConfigTest, SecurityFilesAreReadAsTheStartWould) {
  const std::string dir = FreshDir("security");
  std::ofstream(dir + "/cert.pem") << "-----BEGIN CERTIFICATE-----\n";
  std::ofstream(dir + "/not.pem") << "hello\n";
  std::ofstream(dir + "/tokens") << "this is not a tokens line\n";
  ServerOptions options = Loopback();
  options.insecure = false;
  EXPECT_THAT(CheckConfig(options).problems,
              Contains(HasSubstr("tls_cert, tls_key: both are needed")));
  options.tls_cert = dir + "/cert.pem";
  options.tls_key = dir + "/missing.key";
  EXPECT_THAT(CheckConfig(options).problems, Contains(HasSubstr("tls_key")));
  options.tls_key = dir;  // a directory: unreadable as a file
  EXPECT_THAT(CheckConfig(options).problems, Contains(HasSubstr("tls_key")));
  options.tls_key = dir + "/not.pem";
  EXPECT_THAT(CheckConfig(options).problems,
              Contains(HasSubstr("holds no PEM block")));
  options.tls_key = dir + "/cert.pem";
  options.tokens_file = dir + "/tokens";
  EXPECT_THAT(CheckConfig(options).problems, Contains(HasSubstr("tokens")));
  options.tokens_file.clear();
  EXPECT_THAT(CheckConfig(options).problems, IsEmpty());
}

TEST(CheckConfigTest, EtcdStoreIsPlannedWithoutContactingIt) {
  ServerOptions options = Loopback();
  options.store = "etcd://10.0.0.11:2379, 10.0.0.12:2379";
  ConfigCheck check = CheckConfig(options);
  EXPECT_THAT(check.problems, IsEmpty());
  EXPECT_THAT(check.plan, Contains(HasSubstr(
                              "store: etcd at 10.0.0.11:2379,10.0.0.12:2379, "
                              "keys under /ctxsel/")));
  options.store = "sqlite:/var/lib/ctxsel";
  EXPECT_THAT(CheckConfig(options).problems,
              ElementsAre(HasSubstr("store: 'sqlite:/var/lib/ctxsel' is not "
                                    "etcd://")));
}

// The etcd credentials as a start reads them (LoadEtcdSecurity): each
// file, each pairing rule, and the plan says how etcd is reached.
TEST(CheckConfigTest, EtcdCredentialsAreReadAsTheStartWould) {
  const std::string dir = FreshDir("etcd-security");
  std::ofstream(dir + "/ca.pem") << "-----BEGIN CERTIFICATE-----\n";
  std::ofstream(dir + "/not.pem") << "hello\n";
  std::ofstream(dir + "/password") << "secret\n";
  std::ofstream(dir + "/empty");
  ServerOptions options = Loopback();
  options.etcd_ca = dir + "/ca.pem";
  EXPECT_THAT(CheckConfig(options).problems,
              ElementsAre(HasSubstr("--etcd_ca: only with --store=etcd://")));
  options.store = "etcd://10.0.0.11:2379";
  EXPECT_THAT(CheckConfig(options).plan,
              Contains(HasSubstr("etcd security: TLS, etcd verified by")));
  const std::pair<std::string ServerOptions::*, std::string> broken[] = {
      {&ServerOptions::etcd_ca, "/missing.pem"},
      {&ServerOptions::etcd_ca, "/not.pem"},
      {&ServerOptions::etcd_cert, "/ca.pem"},  // without its key
      {&ServerOptions::etcd_password_file, "/empty"},
      {&ServerOptions::etcd_password_file, "/password"},  // without a user
  };
  for (const auto& [field, file] : broken) {
    ServerOptions bad = options;
    bad.*field = dir + file;
    const std::vector<std::string> problems = CheckConfig(bad).problems;
    ASSERT_EQ(problems.size(), 1) << file;
    EXPECT_THAT(problems[0], HasSubstr("--etcd_")) << file;
  }
  options.etcd_user = "ctxsel";
  options.etcd_password_file = dir + "/password";
  ConfigCheck check = CheckConfig(options);
  EXPECT_THAT(check.problems, IsEmpty());
  EXPECT_THAT(check.plan, Contains(HasSubstr("etcd user ctxsel")));
  for (const std::string& line : check.plan) {
    EXPECT_THAT(line, ::testing::Not(HasSubstr("secret")));
  }
  options.etcd_ca.clear();  // a password in the clear
  EXPECT_THAT(CheckConfig(options).problems,
              ElementsAre(HasSubstr("--etcd_user: needs --etcd_ca")));
}

TEST(LimitProblemsTest, SqliteFlagsAndUtilisationRuleWithEtcd) {
  ServerOptions options;
  options.store = "etcd://127.0.0.1:2379";
  options.restore_from = "backup.db";
  options.store_utilisation_delta = 1.5;
  EXPECT_THAT(LimitProblems(options),
              ElementsAre(HasSubstr("store: --max_store_bytes and "
                                    "--restore_from are for the SQLite"),
                          HasSubstr("store_utilisation_delta: must be from 0 "
                                    "to 1")));
}

TEST(CheckConfigTest, DataDirInUseIsAProblem) {
  ServerOptions options = Loopback();
  options.data_dir = FreshDir("in-use");
  auto lock = DataDirLock::Acquire(options.data_dir);
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_THAT(CheckConfig(options).problems,
              ElementsAre(HasSubstr("data_dir: data directory")));
}

TEST(CheckConfigTest, BadAddressesAndUnreadableBackupAreProblems) {
  ServerOptions options;
  options.insecure = true;
  options.listen = "localhost";
  options.metrics_listen = ":9464";
  options.data_dir = FreshDir("bad");
  options.restore_from = options.data_dir + "/no-such-backup";
  EXPECT_THAT(CheckConfig(options).problems,
              ElementsAre(HasSubstr("listen: listen address 'localhost'"),
                          HasSubstr("metrics_listen: ':9464'"),
                          HasSubstr("restore_from: cannot read")));
}

}  // namespace
}  // namespace ctxsel::server
