// End-to-end tests of the recorder under the fakes: each test runs a test
// application with the recorder preloaded, then reads the capture with the
// reader and checks it against what the application says it did.
//   tw_recorder_tests <test>     (ctest runs one process per test)
// Environment (set by CMake): TW_BIN_DIR, TW_RECORDER, TW_FAKE_XDNA,
// TW_PRELOAD_FIRST (the ASan runtime in sanitizer builds), TW_TMP.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "elf_symbols.h"
#include "json_mini.h"
#include "reader.h"

extern char** environ;

using namespace tickwise;
using Rec = fmt::Record;

namespace {

std::vector<std::string> g_extra_env;  // added to every run (variants of a test)
std::string g_variant;                 // the variant's name (its capture directory)

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

#define CHECK(cond, ...)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      char _m[512];                                                                 \
      snprintf(_m, sizeof _m, __VA_ARGS__);                                         \
      throw Failure(std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " + #cond + ": " + _m); \
    }                                                                               \
  } while (0)

std::string env(const char* n) {
  const char* v = getenv(n);
  if (!v) throw Failure(std::string("missing environment variable ") + n);
  return v;
}

std::string bin(const std::string& app) { return env("TW_BIN_DIR") + "/tw_app_" + app; }

std::string fresh_dir(const std::string& name) {
  std::string base = env("TW_TMP");
  mkdir(base.c_str(), 0775);
  std::string d = base + "/" + name;
  std::string cmd = "rm -rf '" + d + "' '" + d + ".summary.json' '" + d + ".counter'";
  if (system(cmd.c_str()) != 0) throw Failure("cannot clean " + d);
  return d;
}

struct Run {
  std::vector<std::string> args;
  std::vector<std::string> env;  // NAME=value
  std::string capture_dir;       // "" = no TICKWISE_CAPTURE_DIR
  bool recorder = true;
};

pid_t spawn(const std::string& exe, const Run& r) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string s = *e;
    if (s.rfind("LD_PRELOAD=", 0) == 0 || s.rfind("TICKWISE_", 0) == 0) continue;
    envs.push_back(s);
  }
  std::string preload;
  auto add = [&](const std::string& p) {
    if (!p.empty()) preload += (preload.empty() ? "" : ":") + p;
  };
  add(getenv("TW_PRELOAD_FIRST") ? getenv("TW_PRELOAD_FIRST") : "");
  if (r.recorder) add(env("TW_RECORDER"));
  add(env("TW_FAKE_XDNA"));
  envs.push_back("LD_PRELOAD=" + preload);
  if (!r.capture_dir.empty()) envs.push_back("TICKWISE_CAPTURE_DIR=" + r.capture_dir);
  for (const auto& e : r.env) envs.push_back(e);
  for (const auto& e : g_extra_env) envs.push_back(e);
  std::vector<char*> argv{const_cast<char*>(exe.c_str())};
  for (const auto& a : r.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own process group: a hung app and its children are killed together
    execve(exe.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

/// Stacks of every process in the group, for a hang's diagnosis (gdb if present).
void dump_group_stacks(pid_t pgid) {
  if (system("command -v gdb >/dev/null 2>&1") != 0) return;
  DIR* proc = opendir("/proc");
  if (!proc) return;
  std::vector<pid_t> pids;
  while (dirent* e = readdir(proc)) {
    const pid_t p = pid_t(atoi(e->d_name));
    if (p > 0 && getpgid(p) == pgid) pids.push_back(p);
  }
  closedir(proc);
  for (pid_t p : pids) {
    fprintf(stderr, "---- stacks of %d\n", int(p));
    const std::string cmd = "gdb -batch -p " + std::to_string(p) + " -ex 'thread apply all bt' >&2 2>&1";
    (void)!system(cmd.c_str());
  }
}

/// Waits for the app; a hang is a test failure with stacks, never a ctest time-out.
int wait_status(pid_t pid) {
  int st = 0;
  const int limit_s = getenv("TW_APP_TIMEOUT_S") ? atoi(getenv("TW_APP_TIMEOUT_S")) : 60;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  for (;;) {
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return st;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  fprintf(stderr, "app %d still running after %d s: a hang\n", int(pid), limit_s);
  dump_group_stacks(pid);
  kill(-pid, SIGKILL);
  waitpid(pid, &st, 0);
  CHECK(false, "app %d hung (killed after %d s)", int(pid), limit_s);
  return st;
}

int run(const std::string& exe, const Run& r) {
  int st = wait_status(spawn(exe, r));
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

json::Value load_json(const std::string& p) {
  std::string t = slurp(p);
  CHECK(!t.empty(), "empty or missing %s", p.c_str());
  return json::parse(t);
}

reader::Capture load_capture(const std::string& dir, bool allow_truncated = false) {
  reader::Capture c;
  std::string err;
  CHECK(reader::read_capture(dir, c, err), "%s", err.c_str());
  auto errs = reader::validate(c);
  CHECK(errs.empty(), "%zu validation errors, first: %s", errs.size(), errs.empty() ? "" : errs[0].c_str());
  if (!allow_truncated) CHECK(!c.truncated, "capture truncated: %s", c.stop_reason.c_str());
  return c;
}

template <typename F>
size_t count_if(const reader::Capture& c, fmt::Kind k, F f) {
  size_t n = 0;
  for (const auto& r : c.records)
    if (r.prefix.kind == uint16_t(k) && f(r)) ++n;
  return n;
}
size_t count(const reader::Capture& c, fmt::Kind k) {
  return count_if(c, k, [](const Rec&) { return true; });
}

/// ThreadStats totals per tid (the last record of a tid holds its totals).
std::map<uint32_t, fmt::ThreadStats> thread_totals(const reader::Capture& c) {
  std::map<uint32_t, fmt::ThreadStats> m;
  for (const auto& r : c.records)
    if (r.prefix.kind == uint16_t(fmt::Kind::kThreadStats)) m[r.thread_stats.tid] = r.thread_stats;
  return m;
}

// ---- tests ---------------------------------------------------------------------

void test_launch_counts() {
  const std::string dir = fresh_dir(g_variant.empty() ? "launch_counts" : g_variant), summary = dir + ".summary.json";
  Run r;
  r.args = {"--threads", "8", "--launches", "3000", "--graph-every", "50", "--out", summary};
  r.capture_dir = dir;
  r.env = {"TICKWISE_MARKERS=mul_mat_q4_K,flash_attn_ext"};
  CHECK(run(bin("launcher"), r) == 0, "app failed");
  auto s = load_json(summary);
  auto c = load_capture(dir);
  auto meta = json::parse(c.meta_json);
  CHECK(meta["complete"].b && meta["end_reason"].str() == "exit", "meta not complete");
  CHECK(meta["records_dropped_total"].u64() == 0, "drops: %llu", (unsigned long long)meta["records_dropped_total"].u64());

  const std::pair<const char*, fmt::HipApi> apis[] = {
      {"hipLaunchKernel", fmt::HipApi::kLaunchKernel},
      {"hipModuleLaunchKernel", fmt::HipApi::kModuleLaunchKernel},
      {"hipExtModuleLaunchKernel", fmt::HipApi::kExtModuleLaunchKernel},
      {"hipLaunchKernelExC", fmt::HipApi::kLaunchKernelExC},
      {"hipLaunchCooperativeKernel", fmt::HipApi::kLaunchCooperativeKernel},
      {"hipExtLaunchKernel", fmt::HipApi::kExtLaunchKernel},
      {"hipGraphLaunch", fmt::HipApi::kGraphLaunch}};
  for (const auto& [name, api] : apis) {
    const size_t got = count_if(c, fmt::Kind::kHipLaunch, [&](const Rec& x) { return x.hip_launch.api == uint16_t(api); });
    CHECK(got == s[name].u64(), "%s: recorded %zu, launched %llu", name, got, (unsigned long long)s[name].u64());
  }
  CHECK(count(c, fmt::Kind::kHipLaunch) == s["launch_calls"].u64(), "launch total");
  CHECK(count(c, fmt::Kind::kHipSync) == s["sync_calls"].u64(), "sync total %zu vs %llu", count(c, fmt::Kind::kHipSync),
        (unsigned long long)s["sync_calls"].u64());
  for (const auto& t : s["threads"].items) {
    const uint32_t tid = uint32_t(t["tid"].u64());
    const size_t got = count_if(c, fmt::Kind::kHipLaunch, [&](const Rec& x) { return x.hip_launch.tid == tid; });
    CHECK(got == t["launch_calls"].u64(), "thread %u: %zu of %llu", tid, got, (unsigned long long)t["launch_calls"].u64());
  }
  // Every kernel execution arrived from rocprofiler and names its launch.
  std::map<uint64_t, const fmt::HipLaunch*> launches;
  for (const auto& x : c.records)
    if (x.prefix.kind == uint16_t(fmt::Kind::kHipLaunch)) launches[x.hip_launch.launch_id] = &x.hip_launch;
  std::map<uint64_t, int> per_launch;
  const int64_t boot_off = c.header.boottime_minus_monotonic_ns;
  size_t dispatches = 0;
  for (const auto& x : c.records) {
    if (x.prefix.kind != uint16_t(fmt::Kind::kHipDispatch)) continue;
    ++dispatches;
    const auto& d = x.hip_dispatch;
    CHECK(d.time_domain == uint16_t(fmt::Domain::kHostBoottime), "dispatch domain %u", d.time_domain);
    auto it = launches.find(d.correlation_external);
    CHECK(it != launches.end(), "dispatch %llu has no launch (external id %llu)", (unsigned long long)d.dispatch_id,
          (unsigned long long)d.correlation_external);
    ++per_launch[d.correlation_external];
    // The fake starts a kernel >= 3 us after the launch call read the clock; the
    // recorder's stamps (TSC, converted) must agree to better than that.
    const int64_t start_mono = int64_t(d.start) - boot_off;
    CHECK(start_mono + 1000 >= int64_t(it->second->host_enter_ns), "dispatch starts %lld ns before its launch",
          (long long)(int64_t(it->second->host_enter_ns) - start_mono));
    CHECK(d.tid == it->second->tid, "dispatch tid %u vs launch tid %u", d.tid, it->second->tid);
  }
  // Host stamps: ordered per thread, inside the capture's span.
  std::map<uint32_t, std::vector<const fmt::HipLaunch*>> by_tid;
  for (const auto& [id, l] : launches) by_tid[l->tid].push_back(l);  // launch ids rise per thread
  for (auto& [tid, v] : by_tid)
    for (size_t i = 1; i < v.size(); ++i)
      CHECK(v[i]->host_enter_ns >= v[i - 1]->host_exit_ns && v[i]->host_exit_ns >= v[i]->host_enter_ns &&
                v[i]->host_enter_ns >= c.header.host_start_ns,
            "thread %u: launch %zu at %llu before the previous one ended at %llu", tid, i,
            (unsigned long long)v[i]->host_enter_ns, (unsigned long long)v[i - 1]->host_exit_ns);
  CHECK(dispatches == s["kernels"].u64(), "dispatches %zu, kernels %llu", dispatches, (unsigned long long)s["kernels"].u64());
  for (const auto& [id, l] : launches) {
    const int want = l->api == uint16_t(fmt::HipApi::kGraphLaunch) ? int(s["graph_nodes"].u64()) : 1;
    CHECK(per_launch[id] == want, "launch %llu has %d dispatches, want %d", (unsigned long long)id, per_launch[id], want);
    if (l->api != uint16_t(fmt::HipApi::kGraphLaunch)) {
      const uint32_t kk = (l->api == uint16_t(fmt::HipApi::kModuleLaunchKernel) ||
                           l->api == uint16_t(fmt::HipApi::kExtModuleLaunchKernel))
                              ? 1u
                              : 2u;
      CHECK(c.names.count({kk, l->function}), "no name for function %llx", (unsigned long long)l->function);
    }
  }
  std::set<std::string> names;
  for (const auto& [k, v] : c.names) names.insert(v);
  for (const char* n : {"mul_mat_q4_K_rows", "flash_attn_ext_f16", "rms_norm_f32", "rope_neox_f32", "soft_max_f32"})
    CHECK(names.count(n), "name %s missing", n);
  // Clock samples: boottime and hip:0 at start and at exit.
  for (uint16_t dom : {uint16_t(1), uint16_t(16)}) {
    for (uint32_t why : {0u, 2u})
      CHECK(count_if(c, fmt::Kind::kClockSample, [&](const Rec& x) { return x.clock.domain == dom && x.clock.reason == why; }) == 1,
            "clock domain %u reason %u", dom, why);
  }
  bool hip_domain = false;
  for (const auto& d : meta["clock_domains"].items)
    if (d["id"].u64() == 16) hip_domain = d["tick_hz_declared"].u64() == 100000000ull && d["unit"].str() == "tick";
  CHECK(hip_domain, "meta lacks the hip:0 clock domain with its declared frequency");
  // Provenance: the loaded libraries with build ids; markers counted in the app.
  bool saw_recorder = false, saw_hip = false, saw_marker = false;
  for (const auto& p : meta["provenance"].items) {
    const std::string& path = p["path"].str();
    if (path.find("libtickwise_recorder.so") != std::string::npos) saw_recorder = p["build_id"].str().size() >= 16;
    if (path.find("libamdhip64.so") != std::string::npos) saw_hip = p["size_bytes"].u64() > 0 && p["mtime_ns"].str().size() > 0;
    if (path.find("tw_app_launcher") != std::string::npos) saw_marker = p["markers"]["mul_mat_q4_K"].u64() >= 1;
  }
  CHECK(saw_recorder && saw_hip && saw_marker, "provenance: recorder %d hip %d marker %d", saw_recorder, saw_hip, saw_marker);
  printf("launch_counts: %zu launches, %zu dispatches, %zu records\n", launches.size(), dispatches, c.records.size());
}

void test_npu_counts() {
  const std::string dir = fresh_dir("npu_counts"), summary = dir + ".summary.json";
  Run r;
  r.args = {"--threads", "4", "--cmds", "150", "--out", summary};
  r.capture_dir = dir;
  r.env = {"TICKWISE_FAKE_XDNA_DELAY_US=300"};
  CHECK(run(bin("npu"), r) == 0, "app failed");
  auto s = load_json(summary);
  auto c = load_capture(dir);
  CHECK(count(c, fmt::Kind::kXdnaExecCmd) == s["exec"].u64(), "exec %zu vs %llu", count(c, fmt::Kind::kXdnaExecCmd),
        (unsigned long long)s["exec"].u64());
  CHECK(count(c, fmt::Kind::kXdnaWaitCmd) == s["wait_cmd"].u64(), "wait_cmd");
  CHECK(count(c, fmt::Kind::kXdnaSyncobjTimelineWait) == s["timeline_pairs"].u64(), "timeline pairs");
  CHECK(count(c, fmt::Kind::kXdnaSyncBo) == s["sync_bo"].u64(), "sync_bo");
  CHECK(count(c, fmt::Kind::kXdnaUnknownIoctl) == s["unknown"].u64(), "unknown %zu vs %llu",
        count(c, fmt::Kind::kXdnaUnknownIoctl), (unsigned long long)s["unknown"].u64());
  CHECK(count(c, fmt::Kind::kXdnaHwctxCreate) == s["hwctx"].u64(), "hwctx");
  CHECK(count(c, fmt::Kind::kXdnaHwctxDestroy) == s["hwctx"].u64(), "hwctx destroy");
  CHECK(count(c, fmt::Kind::kXdnaDevice) == 4, "4 device fds recognised, got %zu", count(c, fmt::Kind::kXdnaDevice));
  // Each command's completion is observed: a wait covering (syncobj, seq) or WAIT_CMD (hwctx, seq).
  std::map<std::pair<int, uint32_t>, uint32_t> syncobj_of;  // (fd, hwctx) -> syncobj
  for (const auto& x : c.records)
    if (x.prefix.kind == uint16_t(fmt::Kind::kXdnaHwctxCreate))
      syncobj_of[{x.xdna.fd, x.xdna_hwctx_create.hwctx}] = x.xdna_hwctx_create.syncobj;
  std::map<std::tuple<int, uint32_t, uint64_t>, uint64_t> done;  // (fd, syncobj, point) -> wait exit
  std::map<std::tuple<int, uint32_t, uint64_t>, uint64_t> done_cmd;  // (fd, hwctx, seq)
  for (const auto& x : c.records) {
    if (x.prefix.kind == uint16_t(fmt::Kind::kXdnaSyncobjTimelineWait) && x.xdna.result == 0)
      done[{x.xdna.fd, x.xdna_wait.syncobj, x.xdna_wait.point}] = x.xdna.host_exit_ns;
    if (x.prefix.kind == uint16_t(fmt::Kind::kXdnaWaitCmd) && x.xdna.result == 0)
      done_cmd[{x.xdna.fd, x.xdna_wait_cmd.hwctx, x.xdna_wait_cmd.seq}] = x.xdna.host_exit_ns;
    if (x.prefix.kind == uint16_t(fmt::Kind::kXdnaUnknownIoctl))
      CHECK(x.xdna_unknown.nr == 0x5F || (x.xdna_unknown.nr == 0x46 && x.xdna_unknown.size == 48), "unknown nr %u size %u",
            x.xdna_unknown.nr, x.xdna_unknown.size);
  }
  size_t matched = 0;
  for (const auto& x : c.records) {
    if (x.prefix.kind != uint16_t(fmt::Kind::kXdnaExecCmd)) continue;
    const auto& e = x.xdna_exec;
    CHECK(e.result == 0 && e.seq > 0 && e.cmd_count == 1, "exec result %d seq %llu", e.result, (unsigned long long)e.seq);
    uint64_t exit = 0;
    auto a = done.find({e.fd, syncobj_of[{e.fd, e.hwctx}], e.seq});
    if (a != done.end()) exit = a->second;
    auto b = done_cmd.find({e.fd, e.hwctx, e.seq});
    if (b != done_cmd.end()) exit = b->second;
    CHECK(exit != 0, "no completion observed for hwctx %u seq %llu", e.hwctx, (unsigned long long)e.seq);
    CHECK(exit >= e.host_enter_ns + 300000, "completion %llu ns after submit, less than the 300 us delay",
          (unsigned long long)(exit - e.host_enter_ns));
    ++matched;
  }
  printf("npu_counts: %zu commands, each with an observed completion\n", matched);
}

void test_drops() {
  const std::string dir = fresh_dir("drops"), summary = dir + ".summary.json";
  Run r;
  r.args = {"--threads", "8", "--launches", "20000", "--graph-every", "0", "--out", summary};
  r.capture_dir = dir;
  r.env = {"TICKWISE_RING_RECORDS=16", "TICKWISE_DRAIN_PERIOD_MS=200", "TICKWISE_ROCPROFILER=0"};
  CHECK(run(bin("launcher"), r) == 0, "app failed");
  auto s = load_json(summary);
  auto c = load_capture(dir);
  auto meta = json::parse(c.meta_json);
  const uint64_t dropped = meta["records_dropped_total"].u64();
  CHECK(dropped > 0, "no drops with a 16-record ring");
  CHECK(meta["ring_records"].u64() == 16, "ring_records %llu", (unsigned long long)meta["ring_records"].u64());
  auto totals = thread_totals(c);
  uint64_t dropped_in_stats = 0;
  for (const auto& t : s["threads"].items) {
    const uint32_t tid = uint32_t(t["tid"].u64());
    CHECK(totals.count(tid), "no ThreadStats for thread %u", tid);
    const auto& st = totals[tid];
    const uint64_t issued = t["launch_calls"].u64() + t["syncs"].u64();
    CHECK(st.pushed_total + st.dropped_total == issued, "thread %u: pushed %llu + dropped %llu != issued %llu", tid,
          (unsigned long long)st.pushed_total, (unsigned long long)st.dropped_total, (unsigned long long)issued);
    const size_t in_file = count_if(c, fmt::Kind::kHipLaunch, [&](const Rec& x) { return x.prefix.tid == tid; }) +
                           count_if(c, fmt::Kind::kHipSync, [&](const Rec& x) { return x.prefix.tid == tid; });
    CHECK(in_file == st.pushed_total, "thread %u: %zu records in file, %llu pushed", tid, in_file,
          (unsigned long long)st.pushed_total);
    dropped_in_stats += st.dropped_total;
  }
  CHECK(dropped_in_stats <= dropped, "meta drops %llu < per-thread %llu", (unsigned long long)dropped,
        (unsigned long long)dropped_in_stats);
  printf("drops: %llu dropped of %llu, every drop accounted per thread\n", (unsigned long long)dropped,
         (unsigned long long)(s["launch_calls"].u64() + s["sync_calls"].u64()));
}

uint64_t read_counter(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  uint64_t v = 0;
  f.read(reinterpret_cast<char*>(&v), sizeof v);
  return v;
}

pid_t start_until(const std::string& dir, const std::string& counter, uint64_t at_least) {
  Run r;
  r.args = {"--counter", counter};
  r.capture_dir = dir;
  pid_t pid = spawn(bin("sigterm"), r);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (read_counter(counter) < at_least) {
    CHECK(std::chrono::steady_clock::now() < until, "app did not reach %llu launches", (unsigned long long)at_least);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pid;
}

/// A capture ended by SIGTERM: the app died of it, the capture is complete and
/// every recorded launch but at most the one in flight has its dispatch record.
void check_sigterm_capture(const std::string& dir, const std::string& counter, int status, size_t at_least) {
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "app should die of SIGTERM (status %d)", status);
  const uint64_t launched = read_counter(counter);
  auto c = load_capture(dir);
  auto meta = json::parse(c.meta_json);
  CHECK(meta["complete"].b && meta["end_reason"].str() == "signal:15", "meta end_reason %s", meta["end_reason"].str().c_str());
  CHECK(meta["flush_timeouts"].items.empty(), "the final flush timed out");
  const size_t recorded = count(c, fmt::Kind::kHipLaunch);
  CHECK(recorded >= at_least && recorded <= launched + 1, "recorded %zu, launched %llu", recorded,
        (unsigned long long)launched);
  std::set<uint64_t> with_dispatch;
  for (const auto& x : c.records)
    if (x.prefix.kind == uint16_t(fmt::Kind::kHipDispatch)) with_dispatch.insert(x.hip_dispatch.correlation_external);
  size_t missing = 0;
  for (const auto& x : c.records)
    if (x.prefix.kind == uint16_t(fmt::Kind::kHipLaunch) && !with_dispatch.count(x.hip_launch.launch_id)) ++missing;
  CHECK(missing <= 1, "%zu launches without their dispatch record after SIGTERM", missing);
  printf("sigterm: %zu of %llu launches recorded, capture complete\n", recorded, (unsigned long long)launched);
}

void test_sigterm() {
  const std::string dir = fresh_dir("sigterm"), counter = dir + ".counter";
  pid_t pid = start_until(dir, counter, 500);
  kill(pid, SIGTERM);
  check_sigterm_capture(dir, counter, wait_status(pid), 500);
}

// The signal lands on the SDK's thread while it holds the buffer's delivery lock,
// with a batch of dispatch records taken out of the buffer. A handler that waited
// there for the capture to finish would stall the final flush (it needs that
// lock) and lose the batch. The fake SDK raises it there, every run.
void test_sigterm_in_delivery() {
  const std::string dir = fresh_dir("sigterm-delivery"), counter = dir + ".counter";
  Run r;
  r.args = {"--counter", counter};
  r.capture_dir = dir;
  r.env = {"TICKWISE_FAKE_SDK_SIGNAL_IN_DELIVERY=" + std::to_string(SIGTERM)};
  check_sigterm_capture(dir, counter, wait_status(spawn(bin("sigterm"), r)), 1);
}

uint64_t read_counter_word(const std::string& path, int word) {
  std::ifstream f(path, std::ios::binary);
  uint64_t v[2] = {0, 0};
  f.read(reinterpret_cast<char*>(v), sizeof v);
  return v[word];
}

// SIGTERM on the app's main thread in its own code (it sends it itself,
// between launches): the handler holds the thread until the capture is
// finished, so nothing runs after the kill and the capture ends exactly at
// the last launch. (A handler that returned at once let the app launch on
// during the final flush: CUPTI's flush then missed its deadline every time
// on an H200.)
void test_sigterm_holds_app_thread() {
  const std::string dir = fresh_dir("sigterm-self"), counter = dir + ".counter";
  Run r;
  r.args = {"--counter", counter, "--self-term", "300"};
  r.capture_dir = dir;
  const int status = wait_status(spawn(bin("sigterm"), r));
  CHECK(read_counter_word(counter, 1) == 0, "the app ran on after SIGTERM (its handler returned)");
  CHECK(read_counter(counter) == 300, "launched %llu, the kill was after 300", (unsigned long long)read_counter(counter));
  check_sigterm_capture(dir, counter, status, 300);
  auto c = load_capture(dir);
  CHECK(count(c, fmt::Kind::kHipLaunch) == 300, "recorded %zu launches, 300 were made", count(c, fmt::Kind::kHipLaunch));
}

// The runtime hands its last buffered records over on its own thread during
// the final flush (as CUPTI does), more of them than that thread's ring holds,
// while the drain thread waits on the flush: they must reach the capture
// without waiting for ring room (which made the flush miss its deadline on an
// H200). The buffer holds exactly 1000 dispatch records at the kill: watermark
// deliveries are off, and the first full-buffer delivery would be at 1025.
void test_sigterm_flush_on_runtime_thread() {
  const std::string dir = fresh_dir("sigterm-flush-thread"), counter = dir + ".counter";
  Run r;
  r.args = {"--counter", counter, "--self-term", "1000"};
  r.capture_dir = dir;
  r.env = {"TICKWISE_FAKE_SDK_FLUSH_ON_DELIVERY_THREAD=1", "TICKWISE_FAKE_SDK_WATERMARK_DELIVERY=0", "TICKWISE_RING_RECORDS=512"};
  const int status = wait_status(spawn(bin("sigterm"), r));
  // launch records may be dropped from the app's small ring on a slow machine (counted drops, not
  // under test); the 1000 dispatch records the flush hands over must all arrive
  check_sigterm_capture(dir, counter, status, 1);
  auto c = load_capture(dir);
  CHECK(count(c, fmt::Kind::kHipDispatch) == 1000, "%zu dispatch records, 1000 launches", count(c, fmt::Kind::kHipDispatch));
}

void test_crash_readable() {
  const std::string dir = fresh_dir("crash"), counter = dir + ".counter";
  pid_t pid = start_until(dir, counter, 3000);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  kill(pid, SIGKILL);
  wait_status(pid);
  const uint64_t launched = read_counter(counter);
  auto c = load_capture(dir, true);
  auto meta = json::parse(c.meta_json);
  CHECK(!meta["complete"].b, "a SIGKILLed capture cannot be complete");
  const size_t recorded = count(c, fmt::Kind::kHipLaunch);
  CHECK(recorded >= 1000 && recorded <= launched, "recorded %zu of %llu", recorded, (unsigned long long)launched);
  printf("crash_readable: %zu of %llu launches readable after SIGKILL (%llu chunks)\n", recorded,
         (unsigned long long)launched, (unsigned long long)c.chunks_ok);
}

void fork_test(bool own) {
  const std::string dir = fresh_dir(own ? "fork_own" : "fork_off"), summary = dir + ".summary.json";
  Run r;
  r.args = {"--parent-launches", "4000", "--child-launches", "500", "--out", summary};
  r.capture_dir = dir;
  if (!own) r.env = {"TICKWISE_FORK=off"};
  CHECK(run(bin("fork"), r) == 0, "app failed");
  auto s = load_json(summary);
  const uint32_t child = uint32_t(s["child_pid"].u64());
  auto c = load_capture(dir);
  CHECK(c.header.pid != child && !(c.header.flags & 1), "parent header");
  CHECK(count(c, fmt::Kind::kHipLaunch) == s["parent_launches"].u64(), "parent launches %zu vs %llu",
        count(c, fmt::Kind::kHipLaunch), (unsigned long long)s["parent_launches"].u64());
  for (const auto& x : c.records) CHECK(x.prefix.tid != child, "a record of the child (tid %u) in the parent's capture", child);
  const std::string cdir = dir + "/proc-" + std::to_string(child);
  struct stat sb;
  if (!own) {
    CHECK(stat(cdir.c_str(), &sb) != 0, "TICKWISE_FORK=off must not write a child capture");
    printf("fork_off: parent intact (%zu launches), child not recorded\n", count(c, fmt::Kind::kHipLaunch));
    return;
  }
  auto cc = load_capture(cdir);
  CHECK(cc.header.pid == child && (cc.header.flags & 1) && cc.header.parent_pid == c.header.pid, "child header");
  CHECK(count(cc, fmt::Kind::kHipLaunch) == s["child_launches"].u64(), "child launches %zu",
        count(cc, fmt::Kind::kHipLaunch));
  CHECK(count(cc, fmt::Kind::kHipDispatch) == s["child_launches"].u64(), "child dispatches %zu",
        count(cc, fmt::Kind::kHipDispatch));
  auto cm = json::parse(cc.meta_json);
  CHECK(cm["fork_child"].b && cm["parent_pid"].u64() == c.header.pid && cm["complete"].b, "child meta");
  printf("fork_own: parent %zu launches, child %zu launches in %s\n", count(c, fmt::Kind::kHipLaunch),
         count(cc, fmt::Kind::kHipLaunch), cdir.c_str());
}

struct Fit {
  long double hz, ppm, offset_err_ticks, max_resid_ns;
  size_t n;
};

/// Weighted least squares host_mid = a + b * tick, narrow brackets weighted most.
Fit fit_domain(const reader::Capture& c, uint16_t domain, long double nominal_hz, long double true_offset,
               long double true_ticks_per_ns) {
  std::vector<fmt::ClockSample> s;
  for (const auto& x : c.records)
    if (x.prefix.kind == uint16_t(fmt::Kind::kClockSample) && x.clock.domain == domain) s.push_back(x.clock);
  CHECK(s.size() >= 10, "only %zu samples in domain %u", s.size(), domain);
  const long double x0 = s.front().device_value, y0 = s.front().host_before_ns;
  long double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& k : s) {
    const long double w = 1.0L / (std::pow((long double)(k.host_after_ns - k.host_before_ns), 2) + 100.0L * 100.0L);
    const long double x = (long double)k.device_value - x0;
    const long double y = ((long double)k.host_before_ns + (long double)k.host_after_ns) / 2 - y0;
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const long double b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);  // ns per tick
  const long double a = (sy - b * sx) / sw;
  Fit f{};
  f.n = s.size();
  f.hz = 1e9L / b;
  f.ppm = (f.hz / nominal_hz - 1) * 1e6L;
  for (const auto& k : s) {
    const long double mid = ((long double)k.host_before_ns + (long double)k.host_after_ns) / 2;
    const long double pred = y0 + a + b * ((long double)k.device_value - x0);
    f.max_resid_ns = std::max(f.max_resid_ns, std::fabs(mid - pred));
  }
  // The injected clock at the middle of the capture against the fitted one.
  const long double t_mid = ((long double)s.front().host_before_ns + (long double)s.back().host_after_ns) / 2;
  const long double tick_true = true_offset + t_mid * true_ticks_per_ns;
  const long double tick_fit = x0 + (t_mid - y0 - a) / b;
  f.offset_err_ticks = std::fabs(tick_fit - tick_true);
  return f;
}

void test_clock_fit() {
  const std::string dir = fresh_dir("clock_fit"), summary = dir + ".summary.json";
  Run r;
  r.args = {"--threads", "2", "--launches", "300", "--duration-ms", "1500", "--out", summary};
  r.capture_dir = dir;
  r.env = {"TICKWISE_CLOCK_PERIOD_MS=50", "TICKWISE_FAKE_HIP_DEVICES=2", "TICKWISE_FAKE_HIP_DRIFT_PPM=37.5",
           "TICKWISE_FAKE_HIP_OFFSET_TICKS=123456789012", "TICKWISE_FAKE_CLOCK_JITTER_NS=20000"};
  CHECK(run(bin("launcher"), r) == 0, "app failed");
  auto c = load_capture(dir);
  for (int d = 0; d < 2; ++d) {
    const long double ppm_true = 37.5L + 3.0L * d;
    const long double offset = 123456789012.0L + d * 1000000007.0L;
    const long double rate = 100e6L / 1e9L * (1 + ppm_true / 1e6L);
    Fit f = fit_domain(c, uint16_t(16 + d), 100e6L, offset, rate);
    printf("clock_fit hip:%d: %zu samples, fitted %.3Lf Hz, drift %.3Lf ppm (injected %.1Lf), offset error %.1Lf ticks, "
           "max residual %.0Lf ns\n",
           d, f.n, f.hz, f.ppm, ppm_true, f.offset_err_ticks, f.max_resid_ns);
    CHECK(std::fabs(f.ppm - ppm_true) < 5.0L, "drift %.3Lf ppm vs injected %.1Lf", f.ppm, ppm_true);
    CHECK(f.offset_err_ticks < 200.0L, "offset error %.1Lf ticks", f.offset_err_ticks);
  }
  // The BOOTTIME samples agree with the header's offset.
  for (const auto& x : c.records)
    if (x.prefix.kind == uint16_t(fmt::Kind::kClockSample) && x.clock.domain == 1) {
      const int64_t off = int64_t(x.clock.device_value) - int64_t((x.clock.host_before_ns + x.clock.host_after_ns) / 2);
      CHECK(std::llabs(off - c.header.boottime_minus_monotonic_ns) < 1000000, "boottime offset moved by %lld ns",
            (long long)(off - c.header.boottime_minus_monotonic_ns));
    }
}

void test_inert() {
  const std::string dir = fresh_dir("inert"), summary = dir + ".summary.json";
  Run r;
  r.args = {"--threads", "2", "--launches", "200", "--out", summary};
  CHECK(run(bin("launcher"), r) == 0, "app failed without capture dir");
  struct stat sb;
  CHECK(stat(dir.c_str(), &sb) != 0, "inert run created %s", dir.c_str());
  CHECK(load_json(summary)["launch_calls"].u64() == 400, "app summary");
  printf("inert: app ran unchanged without TICKWISE_CAPTURE_DIR\n");
}

void test_reader_truncated() {
  const std::string dir = fresh_dir("truncated"), summary = dir + ".summary.json";
  Run r;
  r.args = {"--threads", "4", "--launches", "3000", "--out", summary};
  r.capture_dir = dir;
  CHECK(run(bin("launcher"), r) == 0, "app failed");
  auto full = load_capture(dir);
  CHECK(full.chunks_ok >= 3, "want several chunks, got %llu", (unsigned long long)full.chunks_ok);
  const std::string data = slurp(dir + "/records.twr");
  auto variant = [&](const std::string& name, const std::string& bytes) {
    const std::string d = fresh_dir(name);
    mkdir(d.c_str(), 0775);
    std::ofstream(d + "/records.twr", std::ios::binary) << bytes;
    return load_capture(d, true);
  };
  // Cut inside the last chunk: everything before it survives.
  auto cut = variant("truncated_cut", data.substr(0, data.size() - 10));
  CHECK(cut.truncated && cut.chunks_ok == full.chunks_ok - 1, "cut: truncated %d chunks %llu", cut.truncated,
        (unsigned long long)cut.chunks_ok);
  CHECK(cut.records.size() < full.records.size() && !cut.records.empty(), "cut records");
  // Flip one payload byte of the second chunk: reading stops there.
  std::string flipped = data;
  fmt::ChunkHeader h0;
  memcpy(&h0, data.data() + sizeof(fmt::FileHeader), sizeof h0);
  const size_t second = sizeof(fmt::FileHeader) + sizeof h0 + h0.payload_bytes;
  flipped[second + sizeof(fmt::ChunkHeader) + 5] ^= 0x40;
  auto bad = variant("truncated_flip", flipped);
  CHECK(bad.truncated && bad.chunks_ok == 1 && bad.stop_reason.find("CRC") != std::string::npos, "flip: %s",
        bad.stop_reason.c_str());
  printf("reader_truncated: cut -> %llu/%llu chunks; flipped byte -> stops at chunk 2 (%s)\n",
         (unsigned long long)cut.chunks_ok, (unsigned long long)full.chunks_ok, bad.stop_reason.c_str());
}

// ---- the real HIP runtime (libamdhip64.so.5, HIP 5.2.3), no AMD GPU ----------------

constexpr int kSkip = 77;  // ctest SKIP_RETURN_CODE

/// Entry points the recorder hooks under a name HIP 5.2.3's libamdhip64.so.5 does
/// not define: hipLaunchKernelExC is a later release's; hipExtModuleLaunchKernel
/// exists there only under its C++ (mangled) name, which the recorder hooks too.
const std::set<std::string> kHookedAbsentInReal = {"hipLaunchKernelExC", "hipExtModuleLaunchKernel"};

/// The recorder's HIP hooks: its exported functions whose name contains "hip".
std::set<std::string> recorder_hip_hooks(const std::map<std::string, elfsyms::Symbol>& rec) {
  std::set<std::string> out;
  for (const auto& [name, sym] : rec)
    if (sym.function && name.find("hip") != std::string::npos) out.insert(name);
  return out;
}

void check_symbol_tables(const std::string& real_path) {
  const auto real = elfsyms::defined_symbols(real_path);
  const auto fake = elfsyms::defined_symbols(env("TW_FAKE_HIP"));
  const auto rec = elfsyms::defined_symbols(env("TW_RECORDER"));
  const std::set<std::string> hooks = recorder_hip_hooks(rec);
  CHECK(hooks.size() >= 10, "only %zu hip hooks exported by the recorder", hooks.size());
  std::string resolved;
  for (const std::string& h : hooks) {
    // Unversioned in the recorder: such a definition satisfies a reference of any version.
    CHECK(rec.at(h).version.empty(), "the recorder's %s has version %s", h.c_str(), rec.at(h).version.c_str());
    auto it = real.find(h);
    if (it == real.end()) {
      CHECK(kHookedAbsentInReal.count(h), "the recorder hooks %s, which %s does not define", h.c_str(),
            real_path.c_str());
      continue;
    }
    CHECK(it->second.function && it->second.is_default && !it->second.version.empty(),
          "%s in the real library: not a default versioned function", h.c_str());
    // The fake defines every hooked entry point the real library has, in the same version.
    auto f = fake.find(h);
    CHECK(f != fake.end(), "the fake lacks %s@@%s", h.c_str(), it->second.version.c_str());
    CHECK(f->second.version == it->second.version && f->second.is_default,
          "%s: fake version %s, real %s", h.c_str(), f->second.version.c_str(), it->second.version.c_str());
    resolved += " " + h + "@@" + it->second.version;
  }
  for (const std::string& a : kHookedAbsentInReal) {
    CHECK(hooks.count(a), "the recorder no longer hooks %s: update kHookedAbsentInReal", a.c_str());
    CHECK(!real.count(a), "%s is in the real library now: update kHookedAbsentInReal and the README", a.c_str());
  }
  // Every export of the fake is the real library's, same name, version and default-ness,
  // except two (fakes/fake_hip.map says why).
  for (const auto& [name, sym] : fake) {
    if (name == "hipLaunchKernelExC") {
      CHECK(!real.count(name), "hipLaunchKernelExC appeared in the real library");
      continue;
    }
    if (name == "hsaKmtGetClockCounters") {
      const std::string kmt = getenv("TW_REAL_HSAKMT") ? getenv("TW_REAL_HSAKMT") : "";
      if (!kmt.empty() && kmt.find("NOTFOUND") == std::string::npos) {
        const auto k = elfsyms::defined_symbols(kmt);
        CHECK(k.count(name) && k.at(name).version == sym.version, "hsaKmtGetClockCounters: fake %s, %s has %s",
              sym.version.c_str(), kmt.c_str(), k.count(name) ? k.at(name).version.c_str() : "none");
      }
      continue;
    }
    auto it = real.find(name);
    CHECK(it != real.end(), "the fake exports %s, which the real library does not", name.c_str());
    CHECK(it->second.version == sym.version && it->second.is_default == sym.is_default &&
              it->second.function == sym.function,
          "%s: fake %s%s, real %s%s", name.c_str(), sym.is_default ? "@@" : "@", sym.version.c_str(),
          it->second.is_default ? "@@" : "@", it->second.version.c_str());
  }
  // The fake's version nodes: the real library's chain (hip_4.2 <- ... <- hip_5.2), then its own two.
  const auto real_chain = elfsyms::version_chain(real_path);
  auto fake_chain = elfsyms::version_chain(env("TW_FAKE_HIP"));
  CHECK(fake_chain.size() == real_chain.size() + 2, "fake has %zu version nodes, real %zu", fake_chain.size(),
        real_chain.size());
  fake_chain.resize(real_chain.size());
  CHECK(fake_chain == real_chain, "the fake's version chain differs from the real library's");
  // Launch-like exports of the real library that the recorder does not hook (reported, not failed).
  std::string unhooked;
  for (const auto& [name, sym] : real)
    if (sym.function && !hooks.count(name) &&
        (name.find("Launch") != std::string::npos || name.find("Synchronize") != std::string::npos))
      unhooked += " " + name + "@" + sym.version;
  printf("real_hip: hooks resolved in the real library:%s\n", resolved.c_str());
  printf("real_hip: launch/sync exports not hooked:%s\n", unhooked.c_str());
}

void test_real_hip() {
  const char* lib = getenv("TW_REAL_AMDHIP64");
  if (!lib || !*lib || strstr(lib, "NOTFOUND")) {
    printf("SKIP real_hip: libamdhip64.so.5 (Debian package libamdhip64-5, HIP 5.2.3) is not installed; "
           "scripts/setup installs it (apt-get install libamdhip64-5)\n");
    exit(kSkip);
  }
  check_symbol_tables(lib);

  const std::string dir = fresh_dir("real_hip");
  Run plain;
  plain.args = {"--out", dir + ".plain.json"};
  plain.recorder = false;
  CHECK(run(bin("real_hip"), plain) == 0, "the app failed without the recorder");
  Run r;
  r.args = {"--out", dir + ".summary.json"};
  r.capture_dir = dir;
  CHECK(run(bin("real_hip"), r) == 0, "the app failed under the recorder");
  auto p = load_json(dir + ".plain.json"), s = load_json(dir + ".summary.json");
  CHECK(s["real_library"].str().find("libamdhip64.so.5") != std::string::npos, "real library %s",
        s["real_library"].str().c_str());
  // The real library's own answers: with no GPU, no device and an error for every call.
  const bool no_gpu = p["device_count"].i64() == 0;
  if (no_gpu) CHECK(p["device_count_rc"].i64() == 100, "hipGetDeviceCount: %lld, want hipErrorNoDevice (100)",
                    (long long)p["device_count_rc"].i64());
  CHECK(s["absent_in_real"].items.size() == 2, "hipLaunchKernelExC and the C-named hipExtModuleLaunchKernel absent");
  CHECK(p["calls"].items.size() == s["calls"].items.size() && s["calls"].items.size() == 9, "calls");

  auto c = load_capture(dir);
  auto meta = json::parse(c.meta_json);
  CHECK(meta["complete"].b && meta["end_reason"].str() == "exit", "meta not complete");
  std::vector<const fmt::HipLaunch*> launches;
  std::vector<const fmt::HipSync*> syncs;
  for (const auto& x : c.records) {
    if (x.prefix.kind == uint16_t(fmt::Kind::kHipLaunch)) launches.push_back(&x.hip_launch);
    if (x.prefix.kind == uint16_t(fmt::Kind::kHipSync)) syncs.push_back(&x.hip_sync);
  }
  CHECK(count(c, fmt::Kind::kHipDispatch) == 0, "dispatch records with no device");
  size_t li = 0, si = 0;
  std::string table;
  for (size_t i = 0; i < s["calls"].items.size(); ++i) {
    const auto& call = s["calls"].items[i];
    const auto& base = p["calls"].items[i];
    const std::string name = call["name"].str();
    const int64_t rc = call["rc"].i64();
    // Unchanged: the code the program got under the recorder is the real library's own
    // (called directly, past any preload) and the one it gets without the recorder.
    CHECK(rc == call["rc_real"].i64() && rc == base["rc"].i64() && base["rc"].i64() == base["rc_real"].i64(),
          "%s: %lld under the recorder, %lld from the real library directly, %lld without the recorder", name.c_str(),
          (long long)rc, (long long)call["rc_real"].i64(), (long long)base["rc"].i64());
    if (no_gpu) CHECK(rc != 0, "%s succeeded with no GPU", name.c_str());
    CHECK(base["resolved_in"].str().find("libamdhip64.so.5") != std::string::npos, "%s bound to %s without the recorder",
          name.c_str(), base["resolved_in"].str().c_str());
    CHECK(call["resolved_in"].str().find("libtickwise_recorder.so") != std::string::npos,
          "%s bound to %s under the recorder", name.c_str(), call["resolved_in"].str().c_str());
    const std::string kind = call["kind"].str();
    if (kind == "launch") {
      CHECK(li < launches.size(), "%s: no launch record", name.c_str());
      const fmt::HipLaunch& l = *launches[li++];
      CHECK(l.api == call["api"].u64() && l.result == rc && l.function == call["function"].u64() && l.stream == 0 &&
                l.grid_blocks == call["grid_blocks"].u64() && l.block_threads == call["block_threads"].u64() &&
                l.shared_mem_bytes == call["shared_mem_bytes"].u64() && l.host_exit_ns >= l.host_enter_ns,
            "%s: record api %u result %d function %llx grid %u block %u shm %u", name.c_str(), l.api, l.result,
            (unsigned long long)l.function, l.grid_blocks, l.block_threads, l.shared_mem_bytes);
    } else if (kind == "sync") {
      CHECK(si < syncs.size(), "%s: no sync record", name.c_str());
      const fmt::HipSync& y = *syncs[si++];
      CHECK(y.api == call["api"].u64() && y.result == rc, "%s: sync record api %u result %d", name.c_str(), y.api,
            y.result);
    }
    table += " " + name + "=" + std::to_string(rc) + "(" + call["rc_name"].str() + ")";
  }
  CHECK(li == launches.size() && si == syncs.size(), "%zu launch and %zu sync records, %zu and %zu calls",
        launches.size(), syncs.size(), li, si);
  // No name is registered for a failed hipModuleGetFunction.
  CHECK(c.names.empty(), "%zu names registered", c.names.size());
  bool hip_backend = false, provenance = false;
  for (const auto& b : meta["backends"].items)
    if (b["name"].str() == "hip")
      hip_backend = b["state"].str() == "enabled" && (!no_gpu || b["device_count"].u64() == 0) &&
                    b["rocprofiler"]["dispatch_records"].u64() == 0;
  for (const auto& q : meta["provenance"].items)
    if (q["path"].str().find("libamdhip64.so.5") != std::string::npos) provenance = q["build_id"].str().size() >= 16;
  CHECK(hip_backend, "meta's hip backend: enabled, no device, no dispatch records");
  CHECK(provenance, "meta's provenance lacks libamdhip64.so.5 with its build id");
  printf("real_hip: %s, hipGetDeviceCount=%lld; recorded, codes unchanged:%s\n", s["real_library"].str().c_str(),
         (long long)p["device_count_rc"].i64(), table.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, std::function<void()>> tests = {
      {"launch_counts", test_launch_counts},
      {"launch_counts_gettime", [] {
         g_extra_env = {"TICKWISE_HOST_CLOCK=clock_gettime"};
         g_variant = "launch_counts_gettime";
         test_launch_counts();
       }},
      // Every batch of dispatch records is delivered inside a launch call, on the
      // launching thread, while its launch record is being built (the SDK's lossless
      // buffer is full): no record may be lost or overwritten.
      {"launch_counts_sync_delivery", [] {
         g_extra_env = {"TICKWISE_FAKE_SDK_WATERMARK_DELIVERY=0"};
         g_variant = "launch_counts_sync_delivery";
         test_launch_counts();
       }},
      {"npu_counts", test_npu_counts},
      {"drops", test_drops},
      {"sigterm", test_sigterm},
      {"sigterm_in_delivery", test_sigterm_in_delivery},
      {"sigterm_holds_app_thread", test_sigterm_holds_app_thread},
      {"sigterm_flush_on_runtime_thread", test_sigterm_flush_on_runtime_thread},
      {"crash_readable", test_crash_readable},
      {"fork_own", [] { fork_test(true); }},
      {"fork_off", [] { fork_test(false); }},
      {"clock_fit", test_clock_fit},
      {"inert", test_inert},
      {"reader_truncated", test_reader_truncated},
      {"real_hip", test_real_hip},
  };
  if (argc < 2 || !tests.count(argv[1])) {
    fprintf(stderr, "usage: tw_recorder_tests <test>; tests:");
    for (const auto& [n, f] : tests) fprintf(stderr, " %s", n.c_str());
    fprintf(stderr, "\n");
    return 2;
  }
  try {
    tests.at(argv[1])();
  } catch (const std::exception& e) {
    fprintf(stderr, "FAIL %s: %s\n", argv[1], e.what());
    return 1;
  }
  return 0;
}
