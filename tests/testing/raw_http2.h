// A bare HTTP/2 client over plaintext TCP, for attack tests: it speaks just
// enough HTTP/2 (the preface, SETTINGS, HEADERS, DATA, WINDOW_UPDATE, PING)
// to open gRPC calls and send part of a message, honouring the server's
// flow control as a real client does, which no gRPC client library lets a
// test do; and the floods of the HTTP/2 CVEs: rapid reset (CVE-2023-44487)
// and CONTINUATION (CVE-2024-27316 and kin). Loopback only; the caller
// bounds every wait.
//
//   auto connection = RawHttp2Connection::Connect(port);
//   // A 4 MiB request of which all but the last byte is ever sent.
//   (*connection)->OpenCall("/ctxsel.v1.Placement/Select", 4 << 20,
//                           (4 << 20) - 1);
//   (*connection)->Pump(std::chrono::seconds(5));
#ifndef CTXSEL_TESTS_TESTING_RAW_HTTP2_H_
#define CTXSEL_TESTS_TESTING_RAW_HTTP2_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace ctxsel::testing {

class RawHttp2Connection {
 public:
  // Connects to 127.0.0.1:`port` from `source` (a loopback address such as
  // 127.0.0.2, so that a front tells this client from others; empty: any)
  // and sends the client preface and SETTINGS.
  static absl::StatusOr<std::unique_ptr<RawHttp2Connection>> Connect(
      int port, const std::string& source = "");
  ~RawHttp2Connection();
  RawHttp2Connection(const RawHttp2Connection&) = delete;
  RawHttp2Connection& operator=(const RawHttp2Connection&) = delete;

  // Opens a gRPC call of `path` whose request announces `message_bytes`,
  // of which `send_bytes` are to be sent (by Pump); the stream is never
  // half-closed.
  // `headers` are sent after gRPC's own, as they are (raw bytes: HPACK
  // lets a value hold what HTTP/2 forbids, a newline for one).
  void OpenCall(
      const std::string& path, uint32_t message_bytes, int64_t send_bytes,
      const std::vector<std::pair<std::string, std::string>>& headers = {});
  // Rapid reset: opens calls of `path` and cancels each at once
  // (HEADERS, then RST_STREAM), as fast as the connection takes them, for
  // `period` or until the connection is closed. Returns the calls opened
  // (written to the socket, not necessarily read by the peer).
  int64_t RapidReset(const std::string& path, std::chrono::milliseconds period);
  // CONTINUATION flood: opens a call of `path` whose header block never
  // ends, sending CONTINUATION frames of made-up headers until `bytes` are
  // sent, the connection is closed, or the server stops reading for
  // `stall`. Returns the header bytes sent.
  int64_t ContinuationFlood(const std::string& path, int64_t bytes,
                            std::chrono::milliseconds stall);
  // Sends what OpenCall queued as the server's windows allow, and answers
  // its SETTINGS and PINGs, until everything is sent, the server closes
  // the connection or ends every call, or `timeout` passes.
  void Pump(std::chrono::milliseconds timeout);

  // Message bytes sent so far, over all calls.
  int64_t sent() const { return sent_; }
  // True once the server closed the connection or sent GOAWAY.
  bool closed() const { return closed_; }

 private:
  struct Call {
    std::string prefix;  // the gRPC message prefix, then `left` of body
    int64_t left = 0;
    int64_t window = 0;
    bool ended = false;  // RST_STREAM or END_STREAM from the server
  };

  explicit RawHttp2Connection(int fd) : fd_(fd) {}
  static std::string Frame(uint8_t type, uint8_t flags, uint32_t stream,
                           const std::string& payload);
  // The header block of a gRPC call of `path`.
  static std::string CallHeaders(const std::string& path);
  // Reads what arrived and writes what the socket takes, waiting up to
  // `wait` for either.
  void Exchange(std::chrono::milliseconds wait);
  // Frames the server sent, as far as they arrived.
  void Receive();
  void Handle(uint8_t type, uint8_t flags, uint32_t stream,
              const std::string& payload);
  // Queues DATA frames the windows allow; true if any was queued.
  bool QueueData();
  // Writes as much of out_ as the socket takes.
  void Flush();
  bool Done() const;

  int fd_;
  std::string in_;
  std::string out_;
  std::map<uint32_t, Call> calls_;
  uint32_t next_stream_ = 1;
  int64_t connection_window_ = 65535;
  int64_t initial_window_ = 65535;
  int64_t max_frame_ = 16384;
  int64_t sent_ = 0;
  bool closed_ = false;
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_RAW_HTTP2_H_
