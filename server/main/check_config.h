// check_config.h: what `ctxsel-server --check_config` checks, as which user,
// and the limit rules every start applies.
//
//   ConfigCheck check = CheckConfig(options);
//   for (const std::string& line : check.plan) std::cout << line << "\n";
//   for (const std::string& p : check.problems) std::cerr << p << "\n";
//   return check.problems.empty() ? 0 : 2;
#ifndef CTXSEL_SERVER_MAIN_CHECK_CONFIG_H_
#define CTXSEL_SERVER_MAIN_CHECK_CONFIG_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "server/main/server_setup.h"

namespace ctxsel::server {

struct ConfigCheck {
  // What the server would do, one line each ("listen on 127.0.0.1:7070").
  std::vector<std::string> plan;
  // Why it would not start, one line each, naming the flag.
  std::vector<std::string> problems;
};

// The limits and durations of `options` that no server can run with
// (zero or negative sizes, a TTL not longer than the suspect time, ...),
// one line each naming the flag. ctxsel-server refuses to start with any.
std::vector<std::string> LimitProblems(const ServerOptions& options);

// A dry run of BuildServer: LimitProblems; the TLS files, client CA and
// tokens file read and loaded as the start would (or --insecure); then
// binds options.listen and
// options.metrics_listen and lets them go, and checks that options.data_dir
// exists and is writable and not in use by another server (taking its lock
// for a moment) or can be created, and that options.restore_from is
// readable and the directory holds no store — or, with options.store, that
// it is an etcd://HOST:PORT[,...] list (without contacting etcd) and that
// the etcd credentials load (LoadEtcdSecurity). Serves
// nothing and changes no store; with no problems the server would start, unless
// something changes before it does (a port taken meanwhile).
ConfigCheck CheckConfig(const ServerOptions& options);

// Runs `body` in a child process that has become `user` for good (the
// user's groups, then its group and user id), and returns the child's exit
// status: `--check_config --as_user=USER` opens each file as the service
// will. The child exits 2 naming `user` when it cannot become it (the
// caller is not root); a child killed by a signal is 1. InvalidArgumentError
// for a user the system does not know. Forks: call before any thread starts.
//
//   absl::StatusOr<int> code = RunAsUser("ctxsel", [&] { return Check(); });
absl::StatusOr<int> RunAsUser(const std::string& user,
                              absl::FunctionRef<int()> body);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MAIN_CHECK_CONFIG_H_
