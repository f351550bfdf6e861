// etcd secured (issue 23, docs/deployment.md "Securing etcd"): a real etcd
// serving TLS with client certificates, and with etcd authentication, and
// the real ctxsel-server as a replica on it. A replica refuses an etcd it
// cannot verify, is refused by an etcd that does not trust its certificate,
// and logs in with --etcd_user and --etcd_password_file; each failure is
// one clear line at start that names the flags to check.
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/etcd/etcd_client.h"
#include "tests/testing/etcd_process.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A refusal must come at once, not after the 15 s a replica waits for an
// etcd that does not answer yet (EtcdStore::kOpenPatience).
constexpr absl::Duration kPromptRefusal = absl::Seconds(10);

// A CA, a server certificate for 127.0.0.1 and the client certificate
// "ctxsel-replica", from tools/make_certs.sh, in a fresh directory.
std::string MakeCerts(const std::string& name) {
  const std::string dir = MakeTempDir(name);
  CommandResult made = RunCommand(
      {"/bin/bash", RunfilePath("tools/make_certs.sh"), dir, "ctxsel-replica"});
  EXPECT_EQ(made.exit_code, 0) << made.stderr_text;
  return dir;
}

std::vector<std::string> TlsFlags(const std::string& ca_dir,
                                  const std::string& cert_dir) {
  return {"--etcd_ca=" + ca_dir + "/ca.pem",
          "--etcd_cert=" + cert_dir + "/ctxsel-replica.pem",
          "--etcd_key=" + cert_dir + "/ctxsel-replica.key"};
}

struct Exit {
  CommandResult result;
  absl::Duration took;
};

// Runs a replica on `etcd_endpoint` with `flags` until it exits (it must:
// each test here expects a refusal).
Exit RunReplica(const std::string& etcd_endpoint,
                const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {RunfilePath("server/ctxsel-server"),
                                   "--insecure", "--listen=127.0.0.1:0",
                                   "--store=etcd://" + etcd_endpoint};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const absl::Time start = absl::Now();
  CommandResult result = RunCommand(argv, std::chrono::seconds(30));
  return {result, absl::Now() - start};
}

void ExpectTlsRefusal(const std::string& what, const Exit& exit) {
  std::printf("MEASURE %s: refused after %s\n", what.c_str(),
              absl::FormatDuration(exit.took).c_str());
  EXPECT_FALSE(exit.result.timed_out) << "the replica started";
  EXPECT_EQ(exit.result.exit_code, 1);
  EXPECT_THAT(exit.result.stderr_text, HasSubstr("etcd TLS handshake failed"));
  EXPECT_THAT(exit.result.stderr_text, HasSubstr("--etcd_ca"));
  EXPECT_LT(exit.took, kPromptRefusal);
}

TEST(EtcdSecurityE2E, TlsReplicaRefusesPlaintextEtcd) {
  EtcdOptions plaintext;
  plaintext.tls = false;
  auto etcd = EtcdProcess::Start(plaintext);
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  const std::string pki = MakeCerts("pki");
  ExpectTlsRefusal("plaintext etcd",
                   RunReplica((*etcd)->endpoint(), TlsFlags(pki, pki)));
}

// Each side checks the other's certificate against its own CA.
TEST(EtcdSecurityE2E, ReplicaAndEtcdRefuseCertificatesTheirCaDidNotSign) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  const std::string other = MakeCerts("other-pki");
  // A client certificate etcd trusts, but etcd's own is not --etcd_ca's.
  ExpectTlsRefusal(
      "etcd certificate from another CA",
      RunReplica((*etcd)->endpoint(), TlsFlags(other, (*etcd)->pki_dir())));
  // A client certificate another CA signed.
  ExpectTlsRefusal(
      "client certificate from another CA",
      RunReplica((*etcd)->endpoint(), TlsFlags((*etcd)->pki_dir(), other)));
  // No client certificate at all.
  ExpectTlsRefusal("no client certificate",
                   RunReplica((*etcd)->endpoint(),
                              {"--etcd_ca=" + (*etcd)->pki_dir() + "/ca.pem"}));
  // Told to log in, the replica refuses an etcd that has authentication
  // off (anyone with a certificate may write it).
  std::vector<std::string> flags =
      TlsFlags((*etcd)->pki_dir(), (*etcd)->pki_dir());
  const std::string password = MakeTempDir("password") + "/password";
  std::ofstream(password) << "secret\n";
  flags.push_back("--etcd_user=ctxsel");
  flags.push_back("--etcd_password_file=" + password);
  const Exit exit = RunReplica((*etcd)->endpoint(), flags);
  EXPECT_FALSE(exit.result.timed_out) << "the replica started";
  EXPECT_EQ(exit.result.exit_code, 1);
  EXPECT_THAT(exit.result.stderr_text,
              HasSubstr("--etcd_user: etcd at " + (*etcd)->endpoint() +
                        " has authentication off"));
  EXPECT_LT(exit.took, kPromptRefusal);
}

std::string WriteFile(const std::string& dir, const std::string& name,
                      const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

absl::Status Register(client::CtxselClient& client, const std::string& kernel) {
  v1::RegisterVariantsRequest request;
  request.set_kernel(kernel);
  v1::Variant* variant = request.add_variants();
  variant->set_name("nv");
  variant->set_selector("device={arch(nvptx)}");
  return client.RegisterVariants(request).status();
}

TEST(EtcdSecurityE2E, EtcdAuthenticationRightAndWrongPasswords) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  ASSERT_TRUE(
      (*etcd)
          ->cluster()
          .EnableAuth("root-secret", "ctxsel", "ctxsel-secret", "/ctxsel/")
          .ok());
  const std::string dir = MakeTempDir("passwords");
  const std::string pki = (*etcd)->pki_dir();

  // Authentication is on: the client certificate alone reads nothing.
  {
    auto bare = server::etcd::EtcdClient::Create(
        {(*etcd)->endpoint()}, (*etcd)->cluster().ClientOptions());
    ASSERT_TRUE(bare.ok()) << bare.status();
    auto read = (*bare)->Range("/ctxsel/", server::etcd::PrefixEnd("/ctxsel/"));
    EXPECT_EQ(read.status().code(), absl::StatusCode::kPermissionDenied)
        << read.status();
  }
  // Without a user: etcd's refusal says which flags are missing.
  Exit exit = RunReplica((*etcd)->endpoint(), TlsFlags(pki, pki));
  EXPECT_FALSE(exit.result.timed_out);
  EXPECT_EQ(exit.result.exit_code, 2) << exit.result.stderr_text;
  EXPECT_THAT(exit.result.stderr_text, HasSubstr("--etcd_user"));

  // A wrong password: exit 2 (the unit does not restart it), naming the
  // flag and the user, and not the password.
  std::vector<std::string> wrong = TlsFlags(pki, pki);
  wrong.push_back("--etcd_user=ctxsel");
  wrong.push_back("--etcd_password_file=" +
                  WriteFile(dir, "wrong", "not-the-secret\n"));
  exit = RunReplica((*etcd)->endpoint(), wrong);
  EXPECT_FALSE(exit.result.timed_out);
  EXPECT_EQ(exit.result.exit_code, 2) << exit.result.stderr_text;
  EXPECT_THAT(exit.result.stderr_text, HasSubstr("--etcd_password_file"));
  EXPECT_THAT(exit.result.stderr_text, HasSubstr("'ctxsel'"));
  EXPECT_THAT(exit.result.stderr_text, Not(HasSubstr("not-the-secret")));
  EXPECT_LT(exit.took, kPromptRefusal);

  // The right one: the replica serves and writes.
  std::vector<std::string> flags = (*etcd)->ServerFlags();
  flags.push_back("--etcd_user=ctxsel");
  flags.push_back("--etcd_password_file=" +
                  WriteFile(dir, "right", "ctxsel-secret\n"));
  auto replica = ServerProcess::Start(flags);
  ASSERT_TRUE(replica.ok()) << replica.status();
  auto client = client::CtxselClient::Connect((*replica)->address());
  ASSERT_TRUE(Register(*client, "before").ok())
      << Register(*client, "before") << (*replica)->Log();

  // etcd forgets its tokens when it restarts: the replica logs in again,
  // for its calls and for its watch.
  ASSERT_TRUE((*etcd)->Restart().ok());
  const absl::Time restarted = absl::Now();
  absl::Status written;
  while (!(written = Register(*client, "after")).ok() &&
         absl::Now() - restarted < absl::Seconds(20)) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(written.ok()) << written << (*replica)->Log();
  // The watch is back too: the store is SERVING again.
  while (HealthServing((*replica)->address(), "ctxsel.store") != true) {
    ASSERT_LT(absl::Now() - restarted, absl::Seconds(20)) << (*replica)->Log();
    absl::SleepFor(absl::Milliseconds(100));
  }
  std::printf("MEASURE write after etcd restart (new token): %s\n",
              absl::FormatDuration(absl::Now() - restarted).c_str());
  EXPECT_THAT((*replica)->Log(), Not(HasSubstr("ctxsel-secret")));
}

}  // namespace
}  // namespace ctxsel::testing
