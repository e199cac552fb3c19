// The runtime seam (common/runtime.h): no code in src/ outside src/common/ waits, locks,
// sleeps, yields, starts a thread or reads a clock except through it, so a simulated runtime
// can take all of that over in one place. Comments may name the std facilities; code may not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace dmindex {
namespace {

namespace fs = std::filesystem;

// What bypasses the seam: std's threads, locks, condition variables, futures and the
// futex-based waits (semaphores, latches, barriers, atomic wait/notify), sleeps and yields,
// reading std's clocks (also through an alias: `using Clock = std::chrono::steady_clock;`
// then `Clock::now()`), and thread_local variables (a simulated thread shares its OS thread
// with the others: runtime::ThreadLocal follows it).
const std::regex& Forbidden() {
  static const std::regex re(
      R"(std::(thread|jthread|mutex|shared_mutex|recursive_mutex|timed_mutex|condition_variable(_any)?|async|counting_semaphore|binary_semaphore|latch|barrier)\b)"
      R"(|this_thread::|\bnow\()"  // any clock's now(), also through an alias (Clock::now())
      R"(|\bthread_local\b)"  // simulated threads share an OS thread: runtime::ThreadLocal
      R"(|\brandom_device\b)"  // not reproducible in a simulation: runtime::Entropy
      R"(|\.(wait|notify_one|notify_all)\()");
  return re;
}

// The code of one line: without a // comment (no source line puts // inside a string here
// except URLs in comments; a false hit would show up as a failure naming the line).
std::string Code(const std::string& line) {
  const size_t c = line.find("//");
  return c == std::string::npos ? line : line.substr(0, c);
}

std::vector<std::string> Bypasses(const fs::path& src, size_t* files) {
  std::vector<std::string> hits;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    const fs::path& p = e.path();
    if (!e.is_regular_file() || (p.extension() != ".cc" && p.extension() != ".h")) continue;
    if (fs::relative(p, src).begin()->string() == "common") continue;  // the seam itself
    ++*files;
    std::ifstream in(p);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (std::regex_search(Code(line), Forbidden()))
        hits.push_back(fs::relative(p, src).string() + ":" + std::to_string(n) + ": " + line);
  }
  return hits;
}

TEST(RuntimeSeam, TheMatcherSeesEveryKindOfBypass) {
  for (const char* code : {"std::thread t([] {});", "std::mutex mu_;", "std::shared_mutex m;",
                           "std::this_thread::sleep_for(d);", "std::this_thread::yield();",
                           "auto t = std::chrono::steady_clock::now();", "const auto t0 = Clock::now();", "thread_local int x;", "std::random_device rd;", "word.wait(1);",
                           "flag.notify_all();", "std::condition_variable cv;",
                           "auto f = std::async(work);", "std::counting_semaphore<4> s(1);"})
    EXPECT_TRUE(std::regex_search(Code(code), Forbidden())) << code;
  for (const char* code : {"runtime::Thread t([] {});", "std::lock_guard lock(mu_);",
                           "// std::mutex in a comment", "runtime::Now();", "cv_.Wait(lock, ready);"})
    EXPECT_FALSE(std::regex_search(Code(code), Forbidden())) << code;
}

TEST(RuntimeSeam, NothingInSrcOutsideCommonBypassesIt) {
  const fs::path src = fs::path(DMINDEX_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::is_directory(src / "common")) << src;
  size_t files = 0;
  const std::vector<std::string> hits = Bypasses(src, &files);
  EXPECT_GT(files, 100u) << "the scan found too few sources under " << src;
  std::ostringstream all;
  for (const std::string& h : hits) all << "\n  " << h;
  EXPECT_TRUE(hits.empty()) << "waits, locks, threads or clock reads outside common/runtime.h:" << all.str();
}

}  // namespace
}  // namespace dmindex
