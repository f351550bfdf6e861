// EtcdCluster: three real members, a member killed and restarted, quorum
// lost and regained, the leader paused.
#include "tests/testing/etcd_cluster.h"

#include <grpcpp/grpcpp.h>

#include <optional>

#include "absl/strings/match.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "gtest/gtest.h"

namespace ctxsel::testing {
namespace {

// Runs `call` on each running member's KV service until one succeeds
// (within 1 s each); whether one did.
template <typename Call>
bool OnAnyMember(const EtcdCluster& etcd, Call call) {
  for (int i = 0; i < etcd.size(); ++i) {
    if (!etcd.Running(i)) continue;
    auto kv = etcdserverpb::KV::NewStub(
        grpc::CreateChannel(etcd.endpoint(i), etcd.ClientCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(1));
    if (call(*kv, context).ok()) return true;
  }
  return false;
}

bool Put(const EtcdCluster& etcd, const std::string& value) {
  etcdserverpb::PutRequest request;
  request.set_key("/k");
  request.set_value(value);
  etcdserverpb::PutResponse response;
  return OnAnyMember(
      etcd, [&](etcdserverpb::KV::Stub& kv, grpc::ClientContext& context) {
        return kv.Put(&context, request, &response);
      });
}

std::optional<std::string> Get(const EtcdCluster& etcd) {
  etcdserverpb::RangeRequest request;
  request.set_key("/k");
  etcdserverpb::RangeResponse response;
  if (!OnAnyMember(
          etcd,
          [&](etcdserverpb::KV::Stub& kv, grpc::ClientContext& context) {
            return kv.Range(&context, request, &response);
          }) ||
      response.kvs_size() != 1) {
    return std::nullopt;
  }
  return response.kvs(0).value();
}

TEST(EtcdClusterTest, MembersDieComeBackAndPause) {
  auto etcd = EtcdCluster::Start(3);
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  EtcdCluster& cluster = **etcd;
  EXPECT_TRUE(absl::StartsWith(cluster.StoreUrl(),
                               "etcd://" + cluster.endpoint(0) + ","));
  ASSERT_TRUE(Put(cluster, "1"));

  // The leader dies: the two others elect another and take writes.
  absl::StatusOr<int> leader = cluster.Leader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  cluster.Kill(*leader);
  EXPECT_FALSE(cluster.Running(*leader));
  ASSERT_TRUE(cluster.WaitForLeader(std::chrono::seconds(20)).ok());
  EXPECT_NE(*cluster.Leader(), *leader);
  ASSERT_TRUE(Put(cluster, "2"));
  ASSERT_TRUE(cluster.Restart(*leader).ok());
  ASSERT_TRUE(cluster.WaitForLeader(std::chrono::seconds(20)).ok());

  // Two of three die: no leader, no write; both back: writes again, and
  // nothing written before was lost.
  const int a = (*leader + 1) % 3, b = (*leader + 2) % 3;
  cluster.Kill(a);
  cluster.Kill(b);
  EXPECT_FALSE(Put(cluster, "3"));
  ASSERT_TRUE(cluster.Restart(a).ok());
  ASSERT_TRUE(cluster.Restart(b).ok());
  ASSERT_TRUE(cluster.WaitForLeader(std::chrono::seconds(20)).ok());
  EXPECT_EQ(Get(cluster), std::make_optional<std::string>("2"));

  // A paused leader is replaced; resumed, it follows the new one.
  leader = cluster.Leader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  cluster.Pause(*leader);
  ASSERT_TRUE(cluster.WaitForLeader(std::chrono::seconds(20)).ok());
  EXPECT_NE(*cluster.Leader(), *leader);
  cluster.Resume(*leader);
  ASSERT_TRUE(cluster.WaitForLeader(std::chrono::seconds(20)).ok());
  EXPECT_TRUE(Put(cluster, "4"));
}

}  // namespace
}  // namespace ctxsel::testing
