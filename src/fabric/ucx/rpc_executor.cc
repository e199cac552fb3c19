#include "fabric/ucx/rpc_executor.h"

#include <algorithm>

namespace dmindex::fabric::ucx {

RpcExecutor::RpcExecutor(MemoryNode& node, uint32_t threads, std::function<void()> wake)
    : node_(node), wake_(std::move(wake)) {
  for (uint32_t i = 0; i < std::max<uint32_t>(1, threads); ++i)
    threads_.emplace_back([this] { HandlerLoop(); });
}

RpcExecutor::~RpcExecutor() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  for (auto& t : threads_) t.join();
}

void RpcExecutor::Submit(std::unique_ptr<RpcJob> job) {
  {
    std::lock_guard lock(mu_);
    pending_.push_back(std::move(job));
  }
  cv_.NotifyOne();
}

std::vector<std::unique_ptr<RpcJob>> RpcExecutor::TakeFinished() {
  std::lock_guard lock(mu_);
  has_finished_.store(false, std::memory_order_relaxed);
  return std::exchange(finished_, {});
}

void RpcExecutor::HandlerLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.Wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (stopping_) return;
    std::unique_ptr<RpcJob> job = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    job->status = node_.Serve(job->opcode, job->request, &job->reply);
    lock.lock();
    finished_.push_back(std::move(job));
    has_finished_.store(true, std::memory_order_release);
    lock.unlock();
    wake_();  // outside the lock: it may be a system call
    lock.lock();
  }
}

}  // namespace dmindex::fabric::ucx
