#include "tests/testing/raw_http2.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::testing {
namespace {

enum FrameType : uint8_t {
  kData = 0,
  kHeaders = 1,
  kRstStream = 3,
  kContinuation = 9,
  kSettings = 4,
  kPing = 6,
  kGoaway = 7,
  kWindowUpdate = 8,
};
constexpr uint8_t kEndStream = 0x1;
constexpr uint8_t kAck = 0x1;
constexpr uint8_t kEndHeaders = 0x4;

uint32_t ReadU32(const std::string& s, size_t at) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data() + at);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | p[3];
}

std::string U32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
          static_cast<char>(v >> 8), static_cast<char>(v)};
}

// HPACK: a string's length as a 7-bit prefix integer (RFC 7541, 5.1), no
// Huffman, then the string.
std::string HpackString(const std::string& s) {
  std::string out;
  size_t n = s.size();
  if (n < 127) {
    out.push_back(static_cast<char>(n));
  } else {
    out.push_back(static_cast<char>(127));
    for (n -= 127; n >= 128; n >>= 7) {
      out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    }
    out.push_back(static_cast<char>(n));
  }
  return out + s;
}

// HPACK: a literal header field without indexing, new name.
std::string Literal(const std::string& name, const std::string& value) {
  return absl::StrCat(std::string(1, '\0'), HpackString(name),
                      HpackString(value));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RawHttp2Connection>> RawHttp2Connection::Connect(
    int port, const std::string& source) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  std::unique_ptr<RawHttp2Connection> connection(new RawHttp2Connection(fd));
  if (!source.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (inet_pton(AF_INET, source.c_str(), &from.sin_addr) != 1 ||
        bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("source ", source, ": ", std::strerror(errno)));
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
          0 &&
      errno != EINPROGRESS) {
    return absl::UnavailableError(std::strerror(errno));
  }
  pollfd p{fd, POLLOUT, 0};
  if (poll(&p, 1, 5000) != 1) return absl::UnavailableError("no connection");
  connection->out_ = absl::StrCat("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                                  Frame(kSettings, 0, 0, ""));
  connection->Flush();
  return connection;
}

RawHttp2Connection::~RawHttp2Connection() { close(fd_); }

std::string RawHttp2Connection::Frame(uint8_t type, uint8_t flags,
                                      uint32_t stream,
                                      const std::string& payload) {
  const uint32_t length = payload.size();
  return absl::StrCat(
      U32(length).substr(1),
      std::string{static_cast<char>(type), static_cast<char>(flags)},
      U32(stream & 0x7fffffff), payload);
}

std::string RawHttp2Connection::CallHeaders(const std::string& path) {
  return absl::StrCat(
      Literal(":method", "POST"), Literal(":scheme", "http"),
      Literal(":path", path), Literal(":authority", "localhost"),
      Literal("content-type", "application/grpc"), Literal("te", "trailers"));
}

void RawHttp2Connection::OpenCall(
    const std::string& path, uint32_t message_bytes, int64_t send_bytes,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  const uint32_t stream = next_stream_;
  next_stream_ += 2;
  std::string block = CallHeaders(path);
  for (const auto& [name, value] : headers) block += Literal(name, value);
  out_ += Frame(kHeaders, kEndHeaders, stream, block);
  Call& call = calls_[stream];
  call.prefix = std::string(1, '\0') + U32(message_bytes);
  call.left = send_bytes;
  call.window = initial_window_;
}

void RawHttp2Connection::Pump(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!closed_ && !Done() && std::chrono::steady_clock::now() < deadline) {
    // Keep little queued: the windows, not this buffer, pace the sending.
    while (out_.size() < (256 << 10) && QueueData()) {
    }
    pollfd p{fd_, static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0};
    if (poll(&p, 1, 20) < 0) break;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) Receive();
    if (p.revents & POLLOUT) Flush();
  }
  Flush();
}

void RawHttp2Connection::Exchange(std::chrono::milliseconds wait) {
  pollfd p{fd_, static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0};
  if (poll(&p, 1, static_cast<int>(wait.count())) < 0) return;
  if (p.revents & (POLLIN | POLLHUP | POLLERR)) Receive();
  if (p.revents & POLLOUT) Flush();
}

int64_t RawHttp2Connection::RapidReset(const std::string& path,
                                       std::chrono::milliseconds period) {
  const auto end = std::chrono::steady_clock::now() + period;
  const std::string block = CallHeaders(path);
  const std::string cancel = U32(8);  // RST_STREAM's CANCEL
  int64_t opened = 0;
  while (!closed_ && std::chrono::steady_clock::now() < end &&
         next_stream_ < (1u << 31) - 256) {
    // Batches of 64, queued only when the last has mostly left.
    while (out_.size() < (64 << 10)) {
      for (int i = 0; i < 64; ++i) {
        out_ += Frame(kHeaders, kEndHeaders, next_stream_, block);
        out_ += Frame(kRstStream, 0, next_stream_, cancel);
        next_stream_ += 2;
        ++opened;
      }
    }
    Exchange(std::chrono::milliseconds(10));
  }
  // Calls still queued here never left.
  const size_t per_call = 2 * 9 + block.size() + cancel.size();
  return opened - static_cast<int64_t>((out_.size() + per_call - 1) / per_call);
}

int64_t RawHttp2Connection::ContinuationFlood(const std::string& path,
                                              int64_t bytes,
                                              std::chrono::milliseconds stall) {
  const uint32_t stream = next_stream_;
  next_stream_ += 2;
  const std::string first = CallHeaders(path);
  out_ += Frame(kHeaders, 0, stream, first);
  int64_t sent = 0;
  int64_t queued = first.size();
  int64_t header = 0;
  auto progressed = std::chrono::steady_clock::now();
  while (!closed_ && sent < bytes &&
         std::chrono::steady_clock::now() < progressed + stall) {
    while (queued < bytes && out_.size() < (256 << 10)) {
      // A new name each time, so that no HPACK table or merge can fold
      // them: every byte is one the server has to keep.
      const std::string payload =
          Literal(absl::StrCat("x-flood-", header++), std::string(16000, 'f'));
      out_ += Frame(kContinuation, 0, stream, payload);
      queued += payload.size();
    }
    const size_t before = out_.size();
    Exchange(std::chrono::milliseconds(20));
    if (out_.size() < before) {
      sent += before - out_.size();
      progressed = std::chrono::steady_clock::now();
    }
  }
  return sent;
}

bool RawHttp2Connection::Done() const {
  for (const auto& [stream, call] : calls_) {
    if (!call.ended && (!call.prefix.empty() || call.left > 0)) return false;
  }
  return out_.empty();
}

bool RawHttp2Connection::QueueData() {
  bool queued = false;
  for (auto& [stream, call] : calls_) {
    const int64_t pending = call.prefix.size() + call.left;
    const int64_t n =
        std::min({pending, connection_window_, call.window, max_frame_});
    if (call.ended || n <= 0) continue;
    std::string payload = call.prefix.substr(0, n);
    call.prefix.erase(0, payload.size());
    const int64_t body = n - static_cast<int64_t>(payload.size());
    payload.append(body, 'x');
    call.left -= body;
    sent_ += body;
    call.window -= n;
    connection_window_ -= n;
    out_ += Frame(kData, 0, stream, payload);
    queued = true;
  }
  return queued;
}

void RawHttp2Connection::Flush() {
  while (!out_.empty()) {
    const ssize_t n = send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      closed_ = true;
      return;
    }
    out_.erase(0, n);
  }
}

void RawHttp2Connection::Receive() {
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      closed_ = true;
      break;
    }
    if (n < 0) break;
    in_.append(buffer, n);
  }
  while (in_.size() >= 9) {
    const size_t length = ReadU32(in_, 0) >> 8;
    if (in_.size() < 9 + length) break;
    Handle(in_[3], in_[4], ReadU32(in_, 5) & 0x7fffffff, in_.substr(9, length));
    in_.erase(0, 9 + length);
  }
}

void RawHttp2Connection::Handle(uint8_t type, uint8_t flags, uint32_t stream,
                                const std::string& payload) {
  switch (type) {
    case kSettings:
      if (flags & kAck) return;
      for (size_t i = 0; i + 6 <= payload.size(); i += 6) {
        const uint16_t id =
            (uint8_t(payload[i]) << 8) | uint8_t(payload[i + 1]);
        const int64_t value = ReadU32(payload, i + 2);
        if (id == 4) {  // SETTINGS_INITIAL_WINDOW_SIZE
          for (auto& [s, call] : calls_) call.window += value - initial_window_;
          initial_window_ = value;
        } else if (id == 5) {  // SETTINGS_MAX_FRAME_SIZE
          max_frame_ = value;
        }
      }
      out_ += Frame(kSettings, kAck, 0, "");
      return;
    case kPing:
      if (!(flags & kAck)) out_ += Frame(kPing, kAck, 0, payload);
      return;
    case kWindowUpdate: {
      const int64_t increment = ReadU32(payload, 0) & 0x7fffffff;
      if (stream == 0) {
        connection_window_ += increment;
      } else if (auto it = calls_.find(stream); it != calls_.end()) {
        it->second.window += increment;
      }
      return;
    }
    case kGoaway:
      closed_ = true;
      return;
    case kRstStream:
      if (auto it = calls_.find(stream); it != calls_.end()) {
        it->second.ended = true;
      }
      return;
    case kHeaders:
    case kData:
      if (flags & kEndStream) {
        if (auto it = calls_.find(stream); it != calls_.end()) {
          it->second.ended = true;
        }
      }
      return;
    default:
      return;
  }
}

}  // namespace ctxsel::testing
