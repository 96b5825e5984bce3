// Host work in the queue (host_work.hpp).
#include "services/host_work.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "base/log.hpp"
#include "gpurt/error.hpp"

namespace gpurt::detail {

namespace {

thread_local const QueueState* running_for = nullptr;  // the queue whose host function this thread runs

// The Error a failed wait for the work before host work describes, as a kept failure.
std::exception_ptr not_run(const bridge::Status& status, const DeviceState* device, const char* what) noexcept {
  try {
    try {
      raise(status, device);
    } catch (const Error& e) {
      throw Error(e.category(),
                  std::string(what) + " did not run: the work enqueued before it failed (" + e.message() + ")",
                  e.details());
    }
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace

void run_host_function(QueueState* queue, const std::function<void()>& fn) noexcept {
  const QueueState* outer = running_for;
  running_for = queue;
  try {
    fn();
  } catch (...) {
    queue->failures.keep(std::current_exception());
  }
  running_for = outer;
}

bool in_host_function_of(const QueueState* queue) noexcept { return queue && running_for == queue; }

// ---- HostWorker ----

namespace {

// Destroys the tasks that ran, on a thread of its own: a task's function may hold the last handle
// of a buffer (or its queue's), and freeing it may wait for the device - on CUDA for every stream,
// the one waiting at the next gate of the worker included, which only the worker opens. Made on
// the first HostWorker and never destroyed (its thread is detached): a queue that ends during
// static destruction still has it. What it holds when the process ends is not destroyed.
class Disposal {
 public:
  static Disposal& get() {
    static Disposal* d = new Disposal();  // throws std::system_error from the thread, once more next time
    return *d;
  }
  void take(std::unique_ptr<HostWorker::Task> t) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      HostWorker::Task* raw = t.get();
      if (tail_)
        tail_->next = std::move(t);
      else
        head_ = std::move(t);
      tail_ = raw;
    }
    wake_.notify_one();
  }

 private:
  Disposal() { std::thread([this] { loop(); }).detach(); }
  void loop() noexcept {
    for (;;) {
      std::unique_ptr<HostWorker::Task> t;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return head_ != nullptr; });
        t = std::move(head_);
        head_ = std::move(t->next);
        if (!head_) tail_ = nullptr;
      }
      t.reset();  // the function, what it captured, and the task's hold on its queue
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::unique_ptr<HostWorker::Task> head_;
  HostWorker::Task* tail_ = nullptr;
};

}  // namespace

struct HostWorker::Shared {
  QueueState* queue;
  std::mutex mutex;
  std::condition_variable wake;
  std::unique_ptr<Task> head;  // oldest first
  Task* tail = nullptr;
  bool stop = false;
  std::thread::id thread;

  std::unique_ptr<Task> pop() {  // under mutex
    std::unique_ptr<Task> t = std::move(head);
    if (t) {
      head = std::move(t->next);
      if (!head) tail = nullptr;
    }
    return t;
  }
  // Waits for the task's marker, runs its function (or keeps why it could not run), opens its gate.
  void run(Task& t) noexcept {
    const bridge::Status before = t.marker->wait();
    if (before.ok())
      run_host_function(queue, t.fn);
    else
      queue->failures.keep(not_run(before, queue->device, "a host function (Queue::enqueue_host)"));
    // Kept before the gate opens: a finish that returns after the gate sees the failure.
    const bridge::Status opened = queue->impl->open_gate(t.gate);
    if (!opened.ok())
      log(LogLevel::error, "host work",
          "could not open the gate after a host function of queue " + std::to_string(queue->id) +
              ", so its later work may never run: " + opened.message);
  }
};

HostWorker::HostWorker(QueueState* queue) : shared_(std::make_shared<Shared>()) {
  (void)Disposal::get();
  shared_->queue = queue;
  thread_ = std::thread(&HostWorker::loop, shared_);
}

HostWorker::~HostWorker() {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->stop = true;
  }
  shared_->wake.notify_all();
  if (std::this_thread::get_id() != thread_.get_id()) {
    thread_.join();  // it runs what is left first
    return;
  }
  // On the worker itself - which cannot happen: a task waiting or running holds the queue, and a
  // task that ran is destroyed on the disposal thread. Nothing is left to run; the thread ends.
  thread_.detach();
}

std::unique_ptr<HostWorker::Task> HostWorker::make_task(std::shared_ptr<QueueState> queue, std::function<void()> fn) {
  auto t = std::make_unique<Task>();
  t->queue = std::move(queue);
  t->fn = std::move(fn);
  return t;
}

void HostWorker::push(std::unique_ptr<Task> task, std::unique_ptr<bridge::Event> marker, std::uint64_t gate) noexcept {
  task->marker = std::move(marker);
  task->gate = gate;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    Task* raw = task.get();
    if (shared_->tail)
      shared_->tail->next = std::move(task);
    else
      shared_->head = std::move(task);
    shared_->tail = raw;
  }
  shared_->wake.notify_one();
}

void HostWorker::loop(std::shared_ptr<Shared> s) noexcept {
  for (;;) {
    std::unique_ptr<Task> t;
    {
      std::unique_lock<std::mutex> lock(s->mutex);
      s->wake.wait(lock, [&] { return s->head || s->stop; });
      t = s->pop();
      if (!t) return;  // stopped, nothing left
    }
    s->run(*t);
    // Destroyed elsewhere (Disposal): not while this thread may be the one a free waits for. The
    // task holds the queue; once it goes the queue may end, so nothing of it is touched after.
    Disposal::get().take(std::move(t));
  }
}

// ---- completion callbacks ----

namespace {

class EventWatcher {
 public:
  static EventWatcher& get() {
    static EventWatcher w;  // its thread starts with the first callback
    return w;
  }
  void add(const std::shared_ptr<EventState>& event, std::function<void()> fn) {
    std::list<Pending> one;
    one.push_back(Pending{event, std::move(fn), {}, false});  // allocated before anything is kept
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) {  // the process is ending: the callback is dropped with the others
      ++dropped_;
      return;
    }
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    pending_.splice(pending_.end(), one);
    wake_.notify_one();
  }
  ~EventWatcher() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) {
      if (thread_.get_id() == std::this_thread::get_id())
        thread_.detach();  // a callback ended the process (exit): its thread cannot wait for itself
      else
        thread_.join();
    }
    const std::size_t left = pending_.size() + dropped_;
    if (left > 0) {
      try {
        warn_by_default("host work", std::to_string(left) +
                                         " Event::on_complete callbacks did not run: their events had not "
                                         "completed when the process ended");
      } catch (...) {
        // no memory for the line
      }
    }
  }

 private:
  struct Pending {
    std::shared_ptr<EventState> event;
    std::function<void()> fn;
    bridge::Status status;  // of the last query
    bool done = false;
  };

  // Polls the events that have callbacks - pauses of 20 us growing to 1 ms while none completes,
  // as Event::wait with a timeout does - and runs the callbacks of those that have completed, in
  // the order they were added. Nothing here allocates but a failed query's Status: the list's
  // nodes move between lists.
  void loop() noexcept {
    std::chrono::microseconds pause(20);
    std::list<Pending> work, finished;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (pending_.empty()) {
          wake_.wait(lock, [&] { return stop_ || !pending_.empty(); });
          pause = std::chrono::microseconds(20);
        }
        if (stop_) return;  // what is left is logged by the destructor
        work.splice(work.end(), pending_);
      }
      // Queried newest first: an event found complete implies that every earlier event of its queue
      // (queried after it) is found complete too, so callbacks of one queue's events run in order.
      for (auto it = work.rbegin(); it != work.rend(); ++it) {
        bool done = false;
        it->status = it->event->impl->query(done);
        it->done = done;
      }
      for (auto it = work.begin(); it != work.end();) {
        if (!it->status.ok()) {
          it->event->failures.keep(not_run(it->status, it->event->device, "an Event::on_complete callback"));
        } else if (it->done) {
          try {
            it->fn();
          } catch (...) {
            it->event->failures.keep(std::current_exception());
          }
        } else {
          ++it;
          continue;
        }
        const auto ran = it++;
        finished.splice(finished.end(), work, ran);
      }
      const bool progress = !finished.empty();
      finished.clear();  // the callbacks that ran, and their events, go here, outside the lock
      std::unique_lock<std::mutex> lock(mutex_);
      pending_.splice(pending_.begin(), work);  // those still waiting stay ahead of the ones added meanwhile
      if (progress) {
        pause = std::chrono::microseconds(20);
      } else if (!pending_.empty()) {
        wake_.wait_for(lock, pause, [&] { return stop_; });
        pause = std::min(pause * 2, std::chrono::microseconds(1000));
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::list<Pending> pending_;
  bool stop_ = false;
  std::size_t dropped_ = 0;  // added after stop_
  std::thread thread_;
};

}  // namespace

void watch_event(const std::shared_ptr<EventState>& event, std::function<void()> fn) {
  EventWatcher::get().add(event, std::move(fn));
}

}  // namespace gpurt::detail
