#include "server/rpc/arena_messages.h"

#include <string>

#include "ctxsel/v1/ctxsel.pb.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using Messages = ArenaMessages<v1::SelectRequest, v1::SelectResponse>;
using Holder = grpc::MessageHolder<v1::SelectRequest, v1::SelectResponse>;

TEST(ArenaMessagesTest, PutsRequestAndResponseOnOneArena) {
  Messages messages;
  Holder* holder = messages.AllocateMessages();
  ASSERT_NE(holder->request()->GetArena(), nullptr);
  EXPECT_EQ(holder->response()->GetArena(), holder->request()->GetArena());
  holder->Release();
}

TEST(ArenaMessagesTest, TheNextCallReusesTheArenaWithFreshMessages) {
  Messages messages;
  Holder* first = messages.AllocateMessages();
  const google::protobuf::Arena* arena = first->response()->GetArena();
  first->request()->mutable_job()->set_kernel("saxpy");
  first->response()->mutable_placement()->set_node("node7");
  first->Release();

  Holder* second = messages.AllocateMessages();
  EXPECT_EQ(second->response()->GetArena(), arena);
  EXPECT_FALSE(second->request()->has_job());
  EXPECT_FALSE(second->response()->has_placement());
  second->Release();
}

TEST(ArenaMessagesTest, AnAnswerLargerThanTheBlockGrowsTheArena) {
  Messages messages(/*block_bytes=*/256, /*kept=*/1);
  for (int call = 0; call < 3; ++call) {
    Holder* holder = messages.AllocateMessages();
    EXPECT_EQ(holder->response()->alternatives_size(), 0);
    for (int i = 0; i < 100; ++i) {
      holder->response()->add_alternatives()->set_node(std::string(100, 'n'));
    }
    EXPECT_EQ(holder->response()->alternatives_size(), 100);
    holder->Release();
  }
}

TEST(ArenaMessagesTest, CallsInFlightTogetherGetArenasOfTheirOwn) {
  Messages messages(/*block_bytes=*/1024, /*kept=*/1);
  Holder* a = messages.AllocateMessages();
  Holder* b = messages.AllocateMessages();
  const google::protobuf::Arena* kept_arena = a->response()->GetArena();
  EXPECT_NE(b->response()->GetArena(), kept_arena);
  a->Release();
  b->Release();  // beyond `kept`: freed
  Holder* c = messages.AllocateMessages();
  EXPECT_EQ(c->response()->GetArena(), kept_arena);
  c->Release();
}

}  // namespace
}  // namespace ctxsel::server
