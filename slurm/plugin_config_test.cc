#include "slurm/plugin_config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::slurm {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(ParsePluginArgs, ReadsEveryArgument) {
  absl::StatusOr<PluginConfig> config =
      ParsePluginArgs({"server=a:7070,b:7070", "ca=/etc/ctxsel/ca.pem",
                       "token_file=/etc/ctxsel/slurm.token", "timeout=2s",
                       "fallback=base", "claim=30m"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "a:7070,b:7070");
  EXPECT_EQ(config->security.ca_file, "/etc/ctxsel/ca.pem");
  EXPECT_EQ(config->security.token_file, "/etc/ctxsel/slurm.token");
  EXPECT_FALSE(config->security.insecure);
  EXPECT_EQ(config->timeout, absl::Seconds(2));
  EXPECT_EQ(config->fallback, Fallback::kBase);
  EXPECT_EQ(config->claim, absl::Minutes(30));
}

TEST(ParsePluginArgs, DefaultsAndInsecure) {
  absl::StatusOr<PluginConfig> config =
      ParsePluginArgs({"server=127.0.0.1:7070", "insecure"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->security.insecure);
  EXPECT_EQ(config->timeout, absl::Seconds(5));
  EXPECT_EQ(config->fallback, Fallback::kFail);
  EXPECT_EQ(config->claim, absl::Minutes(10));
}

TEST(ParsePluginArgs, NamesTheBadArgument) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{}, "needs server=HOST:PORT"},
           {{"server=a:1", "timeout=soon"}, "plugstack.conf timeout=soon:"},
           {{"server=a:1", "timeout=-1s"}, "positive duration"},
           {{"server=a:1", "fallback=cpu"}, "fallback=fail or fallback=base"},
           {{"server=a:1", "sever=b:1"}, "sever=b:1: unknown argument"},
           {{"server=a:1", "server=b:1"}, "server=b:1: given twice"},
           {{"server=a:1", "ca"}, "plugstack.conf ca: want KEY=VALUE"},
           {{"server=a:1", "insecure=yes"}, "takes no value"},
           {{"server=a:1", "insecure", "token_file=t"}, "not with ca="},
       }) {
    absl::StatusOr<PluginConfig> config = ParsePluginArgs(c.args);
    ASSERT_FALSE(config.ok()) << c.error;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(config.status().message(), HasSubstr(c.error));
  }
}

TEST(JobOptions, BuildTheJob) {
  JobOptions options;
  EXPECT_FALSE(Requested(options));
  ASSERT_TRUE(SetJobOption(JobOption::kKernel, "saxpy", options).ok());
  ASSERT_TRUE(
      SetJobOption(JobOption::kConstruct, "target, teams,parallel", options)
          .ok());
  ASSERT_TRUE(SetJobOption(JobOption::kVariables, "N=4096,M=-2", options).ok());
  EXPECT_TRUE(Requested(options));
  absl::StatusOr<v1::Job> job = JobFor(options);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->kernel(), "saxpy");
  ASSERT_EQ(job->construct_size(), 3);
  EXPECT_EQ(job->construct(1).name(), "teams");
  EXPECT_THAT(job->variables(),
              UnorderedElementsAre(Pair("N", 4096), Pair("M", -2)));
}

TEST(JobOptions, TheLastVariableListWins) {
  JobOptions options;
  ASSERT_TRUE(SetJobOption(JobOption::kVariables, "N=1,M=2", options).ok());
  ASSERT_TRUE(SetJobOption(JobOption::kVariables, "N=3", options).ok());
  EXPECT_THAT(options.variables, ::testing::ElementsAre(Pair("N", 3)));
}

TEST(JobOptions, NameTheBadOption) {
  JobOptions options;
  absl::Status bad = SetJobOption(JobOption::kVariables, "N=4k", options);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(),
              HasSubstr("--ctxsel-var=N=4k: 'N=4k' is not NAME=INTEGER"));
  EXPECT_THAT(SetJobOption(JobOption::kVariables, "N=1,N=2", options).message(),
              HasSubstr("N is given twice"));
  EXPECT_THAT(
      SetJobOption(JobOption::kConstruct, "target,,for", options).message(),
      HasSubstr("--ctxsel-construct=target,,for: an empty name"));
  EXPECT_THAT(SetJobOption(JobOption::kKernel, " ", options).message(),
              HasSubstr("an empty kernel"));
}

TEST(JobOptions, ConstructWithoutKernelIsRefused) {
  JobOptions options;
  ASSERT_TRUE(SetJobOption(JobOption::kConstruct, "target", options).ok());
  EXPECT_TRUE(Requested(options));
  EXPECT_THAT(JobFor(options).status().message(),
              HasSubstr("need --ctxsel-kernel=K"));
}

}  // namespace
}  // namespace ctxsel::slurm
