#include "server/main/check_config.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/flag_file.h"
#include "base/metrics_endpoint.h"
#include "server/access/auth.h"
#include "server/rpc/listener.h"
#include "server/store/data_dir.h"
#include "server/store/etcd/etcd_client.h"
#include "server/store/sqlite_store.h"

namespace ctxsel::server {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool Exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void CheckDataDir(const ServerOptions& options, ConfigCheck& check) {
  const std::string& dir = options.data_dir;
  if (dir.empty()) {
    check.plan.push_back(
        "data_dir: none: a fresh temporary directory, for this run only");
    if (!options.restore_from.empty()) {
      check.problems.push_back(
          "restore_from: needs --data_dir (a temporary directory is lost)");
    }
    return;
  }
  if (!Exists(dir)) {
    const std::string parent = Parent(dir);
    if (!IsDirectory(parent) || access(parent.c_str(), W_OK | X_OK) != 0) {
      check.problems.push_back(absl::StrCat("data_dir: ", dir,
                                            " does not exist and ", parent,
                                            " is not a writable directory"));
      return;
    }
    check.plan.push_back(absl::StrCat("data_dir: create ", dir));
  } else if (!IsDirectory(dir) || access(dir.c_str(), W_OK | X_OK) != 0) {
    check.problems.push_back(
        absl::StrCat("data_dir: ", dir, " is not a writable directory"));
    return;
  } else if (absl::Status mode = CheckDataDirMode(dir); !mode.ok()) {
    check.problems.push_back(absl::StrCat("data_dir: ", mode.message()));
    return;
  } else {
    absl::StatusOr<std::unique_ptr<DataDirLock>> lock =
        DataDirLock::Acquire(dir);
    if (!lock.ok()) {
      check.problems.push_back(
          absl::StrCat("data_dir: ", lock.status().message()));
      return;
    }
    absl::StatusOr<std::optional<StoreState>> state = ReadStoreState(dir);
    if (!state.ok()) {
      check.problems.push_back(
          absl::StrCat("data_dir: ", state.status().message()));
      return;
    }
    const bool has_store =
        state->has_value() ||
        Exists(absl::StrCat(dir, "/", SqliteStore::kFileName));
    if (state->has_value()) {
      check.plan.push_back(absl::StrCat(
          "data_dir: ", dir, " holds a store at revision ", (*state)->revision,
          " with ", (*state)->variant_count, " variant(s)"));
    } else {
      check.plan.push_back(
          absl::StrCat("data_dir: ", dir,
                       has_store ? " holds a store" : " holds no store yet"));
    }
    if (has_store && !options.restore_from.empty()) {
      check.problems.push_back(
          absl::StrCat("restore_from: ", dir,
                       " already holds a store; restore into an empty one"));
    }
  }
  if (!options.restore_from.empty()) {
    if (access(options.restore_from.c_str(), R_OK) != 0) {
      check.problems.push_back(absl::StrCat("restore_from: cannot read ",
                                            options.restore_from, ": ",
                                            std::strerror(errno)));
    } else {
      check.plan.push_back(
          absl::StrCat("restore_from: restore ", options.restore_from));
    }
  }
}

// The files a start reads before it serves: the TLS pair, the client CA
// and the tokens file, read here as the start would (as the user it runs
// as: the unit's ExecStartPre runs as the service's user, and --as_user
// runs the check as another), so a missing or unreadable file fails the
// check, not the start.
void CheckSecurity(const ServerOptions& options, ConfigCheck& check) {
  if (options.insecure) {
    check.plan.push_back("security: plaintext (--insecure)");
  } else if (options.tls_cert.empty() || options.tls_key.empty()) {
    check.problems.push_back(
        "tls_cert, tls_key: both are needed, or --insecure for plaintext");
  }
  const std::pair<const char*, const std::string*> files[] = {
      {"tls_cert", &options.tls_cert},
      {"tls_key", &options.tls_key},
      {"client_ca", &options.client_ca},
  };
  for (const auto& [flag, path] : files) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> pem = ReadPemFlagFile(flag, *path);
    if (!pem.ok()) {
      check.problems.push_back(std::string(pem.status().message()));
    } else {
      check.plan.push_back(absl::StrCat(flag, ": ", *path, " (readable)"));
    }
  }
  const std::pair<const char*, const std::string*> lists[] = {
      {"tokens_file", &options.tokens_file},
      {"revoked_certs", &options.revoked_certs},
  };
  for (const auto& [flag, path] : lists) {
    if (path->empty()) continue;
    AuthOptions auth;
    (path == &options.tokens_file ? auth.tokens_file : auth.revoked_certs) =
        *path;
    Authorizer authorizer(auth);
    absl::StatusOr<int> loaded = authorizer.Load();
    if (loaded.ok()) {
      check.plan.push_back(absl::StrCat(flag, ": ", *path, " (loads)"));
    } else {
      check.problems.push_back(std::string(loaded.status().message()));
    }
  }
}

// The etcd credentials, read as the start reads them (LoadEtcdSecurity);
// without them a replica on etcd runs in the clear, which the plan says.
void CheckEtcdSecurity(const ServerOptions& options, ConfigCheck& check) {
  absl::StatusOr<etcd::EtcdSecurity> security = LoadEtcdSecurity(options);
  if (!security.ok()) {
    check.problems.push_back(std::string(security.status().message()));
    return;
  }
  if (options.store.empty()) return;
  check.plan.push_back(absl::StrCat(
      "etcd security: ",
      security->ca_pem.empty()
          ? "plaintext, no client certificate (docs/deployment.md, \"Securing "
            "etcd\")"
          : absl::StrCat(
                "TLS, etcd verified by ", options.etcd_ca,
                security->cert_pem.empty()
                    ? ", no client certificate"
                    : absl::StrCat(", client certificate ", options.etcd_cert)),
      security->user.empty()
          ? ", no etcd user"
          : absl::StrCat(", etcd user ", security->user, " (password from ",
                         options.etcd_password_file, ")")));
}

}  // namespace

std::vector<std::string> LimitProblems(const ServerOptions& options) {
  // One row per rule: does the value break it, and what to say.
  struct Rule {
    bool broken;
    const char* message;
  };
  const absl::Duration suspect_after = EffectiveSuspectAfter(options);
  const absl::Duration node_ttl = EffectiveNodeTtl(options);
  const Rule rules[] = {
      {options.heartbeat_interval <= absl::ZeroDuration(),
       "heartbeat_interval: must be positive"},
      {options.node_ttl < absl::ZeroDuration(),
       "node_ttl: must not be negative (0: 3 x heartbeat_interval)"},
      {options.suspect_after < absl::ZeroDuration(),
       "suspect_after: must not be negative (0: 2 x heartbeat_interval)"},
      {suspect_after >= node_ttl,
       "suspect_after: must be shorter than node_ttl (a node is suspect "
       "before it expires)"},
      {options.node_ttl > absl::ZeroDuration() &&
           options.node_ttl <= options.heartbeat_interval,
       "node_ttl: must be longer than heartbeat_interval"},
      {options.max_store_bytes < 0, "max_store_bytes: must not be negative"},
      {options.report_limits.max_devices_per_node <= 0,
       "max_devices_per_node: must be positive"},
      {options.report_limits.max_traits_per_device <= 0,
       "max_traits_per_device: must be positive"},
      {options.max_message_bytes < (4 << 10),
       "max_message_bytes: must be at least 4 KiB (a reply must hold one "
       "item)"},
      {options.max_batch_size <= 0, "max_batch_size: must be positive"},
      {options.self_probe_interval < absl::ZeroDuration(),
       "self_probe_interval: must not be negative (0: no probe)"},
      {options.self_probe_failures <= 0,
       "self_probe_failures: must be positive"},
      {options.max_connection_idle < absl::ZeroDuration(),
       "max_connection_idle: must not be negative"},
      {options.max_connection_age < absl::ZeroDuration(),
       "max_connection_age: must not be negative"},
      {options.max_connection_age_grace < absl::ZeroDuration(),
       "max_connection_age_grace: must not be negative"},
      {options.max_concurrent_streams < 0,
       "max_concurrent_streams: must not be negative (0: no limit)"},
      {options.max_header_list_bytes <= 0,
       "max_header_list_bytes: must be positive"},
      {options.max_threads < 1, "max_threads: must be at least 1"},
      {options.heartbeat_queues < 0 || options.heartbeat_queues > 64,
       "heartbeat_queues: must be 0 (one per 4 cores) to 64"},
      {options.max_grpc_memory_bytes < 0,
       "max_grpc_memory_bytes: must not be negative (0: no limit)"},
      {options.fd_headroom < 0, "fd_headroom: must not be negative"},
      {!options.store.empty() &&
           (options.max_store_bytes > 0 || !options.restore_from.empty()),
       "store: --max_store_bytes and --restore_from are for the SQLite "
       "store; etcd has its own quota and snapshot restore"},
      {!(options.store_utilisation_delta >= 0 &&
         options.store_utilisation_delta <= 1),
       "store_utilisation_delta: must be from 0 to 1"},
      {options.store_utilisation_interval < absl::ZeroDuration(),
       "store_utilisation_interval: must not be negative"},
  };
  std::vector<std::string> problems;
  for (const Rule& rule : rules) {
    if (rule.broken) problems.push_back(rule.message);
  }
  return problems;
}

ConfigCheck CheckConfig(const ServerOptions& options) {
  ConfigCheck check;
  check.problems = LimitProblems(options);
  CheckSecurity(options, check);
  absl::StatusOr<std::unique_ptr<Listener>> listener =
      Listener::Bind(options.listen, ListenerOptions{});
  if (listener.ok()) {
    check.plan.push_back(
        absl::StrCat("listen: serve ctxsel.v1 on ", options.listen));
  } else {
    check.problems.push_back(
        absl::StrCat("listen: ", listener.status().message()));
  }
  listener = absl::CancelledError();  // lets the port go
  if (options.metrics_listen.empty()) {
    check.plan.push_back("metrics_listen: none: no metrics");
  } else {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
        MetricsEndpoint::Start(options.metrics_listen, {});
    if (endpoint.ok()) {
      check.plan.push_back(absl::StrCat("metrics_listen: serve http://",
                                        options.metrics_listen,
                                        "/metrics (unauthenticated)"));
    } else {
      check.problems.push_back(std::string(endpoint.status().message()));
    }
  }
  if (options.store.empty()) {
    CheckDataDir(options, check);
  } else {
    absl::StatusOr<std::vector<std::string>> endpoints =
        etcd::ParseEtcdUrl(options.store, "store");
    if (endpoints.ok()) {
      check.plan.push_back(absl::StrCat(
          "store: etcd at ", absl::StrJoin(*endpoints, ","), ", keys under ",
          options.store_prefix, " (etcd is not contacted by a dry run)"));
    } else {
      check.problems.push_back(std::string(endpoints.status().message()));
    }
  }
  CheckEtcdSecurity(options, check);
  check.plan.push_back(
      absl::StrCat("heartbeat_interval: ",
                   absl::FormatDuration(options.heartbeat_interval)));
  return check;
}

absl::StatusOr<int> RunAsUser(const std::string& user,
                              absl::FunctionRef<int()> body) {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  const int error =
      getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "as_user: no user '", user, "'",
        error != 0 ? absl::StrCat(" (", std::strerror(error), ")") : ""));
  }
  const uid_t uid = entry.pw_uid;
  const gid_t gid = entry.pw_gid;
  std::fflush(nullptr);  // nothing buffered is printed twice
  const pid_t child = fork();
  if (child < 0) {
    return absl::InternalError(
        absl::StrCat("as_user: fork: ", std::strerror(errno)));
  }
  if (child == 0) {
    // Groups first: setgid and initgroups need root, which setuid drops.
    if (initgroups(user.c_str(), gid) != 0 || setgid(gid) != 0 ||
        setuid(uid) != 0) {
      std::fprintf(stderr,
                   "ctxsel-server: as_user: cannot become %s: %s (run as "
                   "root)\n",
                   user.c_str(), std::strerror(errno));
      std::printf("config invalid\n");
      std::fflush(nullptr);
      _exit(2);
    }
    const int code = body();
    std::fflush(nullptr);
    _exit(code);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("as_user: waitpid: ", std::strerror(errno)));
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace ctxsel::server
