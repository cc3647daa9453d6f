// A stand-in for rocprofiler-sdk (librocprofiler-sdk.so), enough of it for a
// tool that does buffered KERNEL_DISPATCH tracing. Like the real SDK it is
// loaded by the runtime when a tool is present, finds the tools'
// rocprofiler_configure (the global scope and ROCP_TOOL_LIBRARIES), calls
// their initialize (where contexts and buffers may be created), delivers
// batches of records to buffer callbacks from its own thread when a
// watermark is reached or on rocprofiler_flush_buffer, and calls finalize at
// exit. Timestamps are CLOCK_BOOTTIME ns, as the real SDK's. A lossless
// buffer that is full is delivered right away on the thread that enqueued the
// kernel (inside its launch call); TICKWISE_FAKE_SDK_WATERMARK_DELIVERY=0 stops
// the delivery thread's watermark deliveries, so that every batch is
// delivered that way (tests of a tool called back inside a launch).
// TICKWISE_FAKE_SDK_FLUSH_ON_DELIVERY_THREAD=1 makes rocprofiler_flush_buffer
// hand the batch over on the delivery thread (the caller waits for it), as
// CUPTI delivers its last buffers on its own thread.
// TICKWISE_FAKE_SDK_SIGNAL_IN_DELIVERY=<signo> raises that signal once, on the
// delivering thread, while it holds the buffer's delivery lock with the batch
// taken out of the buffer: the worst place for a signal to land.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "abi/rocprofiler_abi.h"
#include "fake_hip_table.h"

#define SDK_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr rocprofiler_status_t kContextNotFound = 2;
constexpr rocprofiler_status_t kBufferNotFound = 3;
constexpr rocprofiler_status_t kContextIdNotZero = 13;
constexpr rocprofiler_status_t kConfigurationLocked = 16;
constexpr rocprofiler_status_t kInvalidArgument = 19;

using DispatchRecord = rocprofiler_buffer_tracing_kernel_dispatch_record_t;

struct Buffer {
  uint64_t id = 0;
  uint64_t context = 0;
  size_t capacity = 0, watermark = 0;  // records
  rocprofiler_buffer_policy_t policy = 0;
  rocprofiler_buffer_tracing_cb_t callback = nullptr;
  void* callback_data = nullptr;
  std::mutex mu;  // records
  std::vector<DispatchRecord> records;
  uint64_t dropped = 0;
  std::mutex deliver_mu;  // one delivery at a time per buffer
};

struct Context {
  uint64_t id = 0;
  bool started = false;
  uint64_t dispatch_buffer = 0;
};

struct Tool {
  rocprofiler_tool_configure_result_t* result;
  rocprofiler_client_id_t client;
  bool finalized = false;
};

struct Sdk {
  std::mutex mu;  // contexts, buffers, tools
  std::vector<Context> contexts;
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<Tool> tools;
  bool configuring = false;
  std::atomic<uint64_t> correlation{0};
  std::mutex wake_mu;
  std::condition_variable wake;
  bool stop = false;
  bool watermark_delivery = true;
  std::atomic<int> signal_in_delivery{0};  // raised once, then 0
  bool flush_on_delivery_thread = false;
  std::vector<Buffer*> flush_queue;  // under wake_mu: buffers the delivery thread is to flush
  uint64_t flushes_done = 0;         // under wake_mu
  std::condition_variable flushed;
  std::thread delivery;
  std::atomic<bool> restart_delivery{false};  // a forked child starts its delivery thread lazily
};

Sdk* g_sdk = nullptr;

struct ExternalEntry {
  uint64_t context;
  uint64_t value;
};
thread_local std::vector<ExternalEntry> t_external;

Buffer* find_buffer(uint64_t id) {
  for (auto& b : g_sdk->buffers)
    if (b->id == id) return b.get();
  return nullptr;
}
Context* find_context(uint64_t id) {
  for (auto& c : g_sdk->contexts)
    if (c.id == id) return &c;
  return nullptr;
}

void deliver(Buffer& b) {
  std::lock_guard<std::mutex> d(b.deliver_mu);
  std::vector<DispatchRecord> batch;
  uint64_t dropped;
  {
    std::lock_guard<std::mutex> l(b.mu);
    batch.swap(b.records);
    dropped = b.dropped;
    b.dropped = 0;
  }
  if (batch.empty() && !dropped) return;
  if (const int sig = g_sdk->signal_in_delivery.exchange(0)) raise(sig);
  std::vector<rocprofiler_record_header_t> headers(batch.size());
  std::vector<rocprofiler_record_header_t*> ptrs(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    headers[i].category = kRocpBufferCategoryTracing;
    headers[i].kind = uint32_t(kRocpBufferTracingKernelDispatch);
    headers[i].payload = &batch[i];
    ptrs[i] = &headers[i];
  }
  b.callback(rocprofiler_context_id_t{b.context}, rocprofiler_buffer_id_t{b.id}, ptrs.data(), ptrs.size(),
             b.callback_data, dropped);
}

void delivery_main() {
  std::unique_lock<std::mutex> l(g_sdk->wake_mu);
  while (!g_sdk->stop) {
    g_sdk->wake.wait_for(l, std::chrono::milliseconds(100));
    l.unlock();
    std::vector<Buffer*> ready;
    if (g_sdk->watermark_delivery) {
      std::lock_guard<std::mutex> s(g_sdk->mu);
      for (auto& b : g_sdk->buffers) {
        std::lock_guard<std::mutex> bl(b->mu);
        if (b->records.size() >= b->watermark) ready.push_back(b.get());
      }
    }
    for (Buffer* b : ready) deliver(*b);
    l.lock();
    while (!g_sdk->flush_queue.empty()) {
      Buffer* b = g_sdk->flush_queue.back();
      g_sdk->flush_queue.pop_back();
      l.unlock();
      deliver(*b);
      l.lock();
      ++g_sdk->flushes_done;
      g_sdk->flushed.notify_all();
    }
  }
}

void report_dispatch(const FakeDispatch* d) {
  if (g_sdk->restart_delivery.exchange(false)) g_sdk->delivery = std::thread(delivery_main);
  std::vector<Buffer*> targets;
  {
    std::lock_guard<std::mutex> s(g_sdk->mu);
    for (auto& c : g_sdk->contexts)
      if (c.started && c.dispatch_buffer)
        if (Buffer* b = find_buffer(c.dispatch_buffer)) targets.push_back(b);
  }
  for (Buffer* b : targets) {
    DispatchRecord r{};
    r.size = sizeof r;
    r.kind = kRocpBufferTracingKernelDispatch;
    r.operation = kRocpKernelDispatchComplete;
    r.correlation_id.internal = g_sdk->correlation.fetch_add(1) + 1;
    r.correlation_id.external.value = 0;
    for (auto it = t_external.rbegin(); it != t_external.rend(); ++it)
      if (it->context == b->context) {
        r.correlation_id.external.value = it->value;
        break;
      }
    r.thread_id = d->thread_id;
    r.start_timestamp = d->start_boot_ns;
    r.end_timestamp = d->end_boot_ns;
    r.dispatch_info.size = sizeof r.dispatch_info;
    r.dispatch_info.agent_id.handle = d->agent_handle;
    r.dispatch_info.queue_id.handle = d->queue_handle;
    r.dispatch_info.kernel_id = d->kernel_id;
    r.dispatch_info.dispatch_id = d->dispatch_id;
    r.dispatch_info.grid_size = {d->grid[0], d->grid[1], d->grid[2]};
    r.dispatch_info.workgroup_size = {d->workgroup[0], d->workgroup[1], d->workgroup[2]};
    bool full = false, over_watermark = false;
    {
      std::lock_guard<std::mutex> l(b->mu);
      if (b->records.size() >= b->capacity) {
        if (b->policy == kRocpBufferPolicyLossless) full = true;
        else ++b->dropped;
      }
      if (!full && !(b->records.size() >= b->capacity)) b->records.push_back(r);
      over_watermark = b->records.size() >= b->watermark;
    }
    if (full) {  // lossless: hand the batch over right here, then keep the record
      deliver(*b);
      std::lock_guard<std::mutex> l(b->mu);
      b->records.push_back(r);
    } else if (over_watermark) {
      g_sdk->wake.notify_one();
    }
  }
}

void client_finalize(rocprofiler_client_id_t id) {
  Tool* t = nullptr;
  {
    std::lock_guard<std::mutex> s(g_sdk->mu);
    for (auto& x : g_sdk->tools)
      if (x.client.handle == id.handle && !x.finalized) t = &x, x.finalized = true;
  }
  if (t && t->result->finalize) t->result->finalize(t->result->tool_data);
}

void sdk_atexit() {
  if (!g_sdk) return;
  for (auto& t : g_sdk->tools)
    if (!t.finalized) {
      t.finalized = true;
      if (t.result->finalize) t.result->finalize(t.result->tool_data);
    }
  {
    std::lock_guard<std::mutex> l(g_sdk->wake_mu);
    g_sdk->stop = true;
  }
  g_sdk->wake.notify_all();
  if (g_sdk->delivery.joinable()) g_sdk->delivery.join();
}

void add_tool(rocprofiler_configure_func_t f, std::vector<rocprofiler_configure_func_t>& seen) {
  if (!f) return;
  for (auto s : seen)
    if (s == f) return;
  seen.push_back(f);
  Tool t{};
  t.client.name = nullptr;
  t.client.handle = uint32_t(seen.size());
  t.result = f(10000, "tickwise fake rocprofiler-sdk 1.0.0", uint32_t(g_sdk->tools.size()), &t.client);
  if (t.result) g_sdk->tools.push_back(t);
}

// fork: hold every lock across it, so that the child's copies are consistent.
// wake_mu too: the delivery thread may hold it at the instant of fork, and a
// child that inherited it locked would hang in sdk_atexit.
void atfork_prepare() {
  if (!g_sdk) return;
  g_sdk->mu.lock();
  for (auto& b : g_sdk->buffers) b->deliver_mu.lock(), b->mu.lock();
  g_sdk->wake_mu.lock();
}
void atfork_release() {
  if (!g_sdk) return;
  g_sdk->wake_mu.unlock();
  for (auto& b : g_sdk->buffers) b->mu.unlock(), b->deliver_mu.unlock();
  g_sdk->mu.unlock();
}
// The child has no delivery thread: the parent's handle names a thread that
// does not exist here, and glibc may hand its descriptor to the next thread
// the child creates (e.g. the recorder's drain thread), so joining it at exit
// could wait on the wrong thread forever. Forget the handle (never join or
// detach it) and start the child's own delivery thread.
void atfork_child() {
  if (!g_sdk) return;
  atfork_release();
  new (&g_sdk->wake) std::condition_variable();
  new (&g_sdk->delivery) std::thread();
  // No thread is created here (inside fork, before the runtime has settled): the child's own
  // delivery thread starts with its first dispatch report.
  g_sdk->restart_delivery.store(!g_sdk->stop);
}

}  // namespace

SDK_EXPORT int rocprofiler_set_api_table(const char* name, uint64_t, uint64_t, void** tables, uint64_t num_tables) {
  if (!name || strcmp(name, "hip") != 0 || num_tables < 1 || g_sdk) return -1;
  g_sdk = new Sdk();
  if (const char* w = getenv("TICKWISE_FAKE_SDK_WATERMARK_DELIVERY")) g_sdk->watermark_delivery = strcmp(w, "0") != 0;
  if (const char* v = getenv("TICKWISE_FAKE_SDK_SIGNAL_IN_DELIVERY")) g_sdk->signal_in_delivery = atoi(v);
  if (const char* v = getenv("TICKWISE_FAKE_SDK_FLUSH_ON_DELIVERY_THREAD")) g_sdk->flush_on_delivery_thread = strcmp(v, "0") != 0;
  auto* table = static_cast<FakeHipProfilerTable*>(tables[0]);
  std::vector<rocprofiler_configure_func_t> seen;
  add_tool(reinterpret_cast<rocprofiler_configure_func_t>(dlsym(RTLD_DEFAULT, "rocprofiler_configure")), seen);
  if (const char* libs = getenv("ROCP_TOOL_LIBRARIES")) {
    std::string all = libs;
    size_t b = 0;
    while (b < all.size()) {
      size_t e = all.find(':', b);
      if (e == std::string::npos) e = all.size();
      std::string path = all.substr(b, e - b);
      if (!path.empty())
        if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL))
          add_tool(reinterpret_cast<rocprofiler_configure_func_t>(dlsym(h, "rocprofiler_configure")), seen);
      b = e + 1;
    }
  }
  g_sdk->configuring = true;
  for (auto& t : g_sdk->tools)
    if (t.result->initialize && t.result->initialize(client_finalize, t.result->tool_data) != 0) t.finalized = true;
  g_sdk->configuring = false;
  g_sdk->delivery = std::thread(delivery_main);
  atexit(sdk_atexit);
  pthread_atfork(atfork_prepare, atfork_release, atfork_child);
  table->report_dispatch = report_dispatch;
  return 0;
}

SDK_EXPORT rocprofiler_status_t rocprofiler_create_context(rocprofiler_context_id_t* ctx) {
  if (!g_sdk || !ctx) return kInvalidArgument;
  if (!g_sdk->configuring) return kConfigurationLocked;
  if (ctx->handle != 0) return kContextIdNotZero;
  std::lock_guard<std::mutex> s(g_sdk->mu);
  Context c;
  c.id = g_sdk->contexts.size() + 1;
  g_sdk->contexts.push_back(c);
  ctx->handle = c.id;
  return kRocpStatusSuccess;
}

SDK_EXPORT rocprofiler_status_t rocprofiler_create_buffer(rocprofiler_context_id_t context, size_t size,
                                                         size_t watermark, rocprofiler_buffer_policy_t policy,
                                                         rocprofiler_buffer_tracing_cb_t callback, void* data,
                                                         rocprofiler_buffer_id_t* buffer_id) {
  if (!g_sdk || !callback || !buffer_id) return kInvalidArgument;
  if (!g_sdk->configuring) return kConfigurationLocked;
  std::lock_guard<std::mutex> s(g_sdk->mu);
  if (!find_context(context.handle)) return kContextNotFound;
  auto b = std::make_unique<Buffer>();
  b->id = g_sdk->buffers.size() + 1;
  b->context = context.handle;
  b->capacity = size / sizeof(DispatchRecord) + 1;
  b->watermark = watermark / sizeof(DispatchRecord);
  if (b->watermark == 0) b->watermark = 1;
  b->policy = policy;
  b->callback = callback;
  b->callback_data = data;
  buffer_id->handle = b->id;
  g_sdk->buffers.push_back(std::move(b));
  return kRocpStatusSuccess;
}

SDK_EXPORT rocprofiler_status_t rocprofiler_configure_buffer_tracing_service(rocprofiler_context_id_t context,
                                                                            rocprofiler_buffer_tracing_kind_t kind,
                                                                            const rocprofiler_tracing_operation_t*,
                                                                            size_t, rocprofiler_buffer_id_t buffer) {
  if (!g_sdk) return kInvalidArgument;
  if (!g_sdk->configuring) return kConfigurationLocked;
  std::lock_guard<std::mutex> s(g_sdk->mu);
  Context* c = find_context(context.handle);
  if (!c) return kContextNotFound;
  if (!find_buffer(buffer.handle)) return kBufferNotFound;
  if (kind != kRocpBufferTracingKernelDispatch) return kInvalidArgument;  // only what tickwise needs
  c->dispatch_buffer = buffer.handle;
  return kRocpStatusSuccess;
}

SDK_EXPORT rocprofiler_status_t rocprofiler_start_context(rocprofiler_context_id_t context) {
  if (!g_sdk) return kInvalidArgument;
  std::lock_guard<std::mutex> s(g_sdk->mu);
  Context* c = find_context(context.handle);
  if (!c) return kContextNotFound;
  c->started = true;
  return kRocpStatusSuccess;
}

SDK_EXPORT rocprofiler_status_t rocprofiler_flush_buffer(rocprofiler_buffer_id_t buffer) {
  if (!g_sdk) return kInvalidArgument;
  Buffer* b;
  {
    std::lock_guard<std::mutex> s(g_sdk->mu);
    b = find_buffer(buffer.handle);
  }
  if (!b) return kBufferNotFound;
  if (g_sdk->flush_on_delivery_thread && g_sdk->delivery.joinable() && g_sdk->delivery.get_id() != std::this_thread::get_id()) {
    std::unique_lock<std::mutex> l(g_sdk->wake_mu);
    const uint64_t target = g_sdk->flushes_done + g_sdk->flush_queue.size() + 1;
    g_sdk->flush_queue.push_back(b);
    g_sdk->wake.notify_all();
    g_sdk->flushed.wait(l, [&] { return g_sdk->flushes_done >= target || g_sdk->stop; });
    return kRocpStatusSuccess;
  }
  deliver(*b);
  return kRocpStatusSuccess;
}

SDK_EXPORT rocprofiler_status_t rocprofiler_get_thread_id(rocprofiler_thread_id_t* tid) {
  if (!tid) return kInvalidArgument;
  *tid = uint64_t(syscall(SYS_gettid));
  return kRocpStatusSuccess;
}

SDK_EXPORT rocprofiler_status_t rocprofiler_push_external_correlation_id(rocprofiler_context_id_t context,
                                                                        rocprofiler_thread_id_t tid,
                                                                        rocprofiler_user_data_t value) {
  thread_local const uint64_t self = uint64_t(syscall(SYS_gettid));
  if (tid != self) return kInvalidArgument;  // fake: only the calling thread's stack
  t_external.push_back({context.handle, value.value});
  return kRocpStatusSuccess;
}

SDK_EXPORT rocprofiler_status_t rocprofiler_pop_external_correlation_id(rocprofiler_context_id_t context,
                                                                       rocprofiler_thread_id_t,
                                                                       rocprofiler_user_data_t* value) {
  for (auto it = t_external.rbegin(); it != t_external.rend(); ++it)
    if (it->context == context.handle) {
      if (value) value->value = it->value;
      t_external.erase(std::next(it).base());
      return kRocpStatusSuccess;
    }
  if (value) value->value = 0;
  return kRocpStatusSuccess;
}
