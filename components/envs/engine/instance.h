// A task object made from one configuration, kept for the life of the process under a number
// (a compiled program names it by that number, an attribute of its FFI calls), with the
// workspaces its in-graph steps reuse.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "task.h"

namespace metagraph::engine {

template <class Task>
class Instance {
 public:
  using Workspace = typename Traits<Task>::Workspace;

  explicit Instance(std::shared_ptr<const Task> task) : task_(std::move(task)) {}
  const Task& task() const { return *task_; }

  // A workspace for the length of a scope, taken from (and given back to) the instance's
  // free list.
  class Lease {
   public:
    explicit Lease(const Instance& owner) : owner_(owner), ws_(owner.acquire()) {}
    ~Lease() { owner_.release(std::move(ws_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Workspace& get() { return *ws_; }

   private:
    const Instance& owner_;
    std::unique_ptr<Workspace> ws_;
  };

  // Keeps `task` for the life of the process and returns its number.
  static int64_t add(std::shared_ptr<const Task> task) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    registry().push_back(std::make_unique<Instance>(std::move(task)));
    return static_cast<int64_t>(registry().size()) - 1;
  }
  // The instance numbered `id`, or nullptr.
  static const Instance* find(int64_t id) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    if (id < 0 || id >= static_cast<int64_t>(registry().size())) return nullptr;
    return registry()[id].get();
  }

 private:
  std::unique_ptr<Workspace> acquire() const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        auto ws = std::move(free_.back());
        free_.pop_back();
        return ws;
      }
    }
    return std::make_unique<Workspace>(Traits<Task>::workspace(*task_));
  }
  void release(std::unique_ptr<Workspace> ws) const {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(ws));
  }
  static std::mutex& registry_mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static std::vector<std::unique_ptr<Instance>>& registry() {
    static std::vector<std::unique_ptr<Instance>> instances;
    return instances;
  }

  std::shared_ptr<const Task> task_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> free_;
};

}  // namespace metagraph::engine
