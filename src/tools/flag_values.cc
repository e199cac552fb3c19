#include "tools/flag_values.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>

namespace dmindex::tools {

CLI::Option* AddParsed(CLI::App& cmd, const std::string& name, const std::string& help,
                       std::function<Status(const std::string&)> apply) {
  return cmd.add_option_function<std::string>(
      name,
      [name, apply](const std::string& text) {
        if (Status s = apply(text); !s.ok()) throw CLI::ValidationError(name, s.message());
      },
      help);
}

CLI::Option* AddList(CLI::App& cmd, const std::string& name, std::vector<std::string>* target,
                     const std::string& help) {
  auto* opt = cmd.add_option(
      name,
      [name, target](const CLI::results_t& values) {
        for (const std::string& value : values) {
          size_t start = 0;
          for (;;) {
            const size_t comma = value.find(',', start);
            std::string item = value.substr(start, comma == std::string::npos ? comma : comma - start);
            if (item.empty())
              throw CLI::ValidationError(name, "'" + value + "': empty item in a comma-separated list");
            target->push_back(std::move(item));
            if (comma == std::string::npos) break;
            start = comma + 1;
          }
        }
        return true;
      },
      help);
  opt->type_name("LIST")->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return opt;
}

Status ProbeWritable(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty file name");
  struct stat st {};
  const bool existed = stat(path.c_str(), &st) == 0;
  if (existed && S_ISDIR(st.st_mode)) return Status::InvalidArgument("'" + path + "' is a directory");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::InvalidArgument("cannot write '" + path + "': " + std::strerror(errno));
  close(fd);
  if (!existed) unlink(path.c_str());
  return Status::Ok();
}

CLI::Option* AddOutputFile(CLI::App& cmd, const std::string& name, std::string* target,
                           const std::string& help) {
  return AddParsed(cmd, name, help, [target](const std::string& path) -> Status {
    DMX_RETURN_IF_ERROR(ProbeWritable(path));
    *target = path;
    return Status::Ok();
  });
}

CLI::Option* AddStallTimeout(CLI::App& cmd, double* seconds) {
  return AddDuration(cmd, "--stall-timeout", seconds, 1.0, {0, 30 * 24 * 3600.0},
                     "When no operation completes for this many seconds, print what every "
                     "thread is doing and exit " + std::to_string(kStalledExitCode) +
                     " (0: wait forever; default 60)");
}

WatchdogOptions StallWatchdog(const std::string& command, double seconds) {
  WatchdogOptions w;
  w.stall_after = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  w.on_stall = [command](const std::string& report) { ExitWithStallReport(command, report); };
  return w;
}

}  // namespace dmindex::tools
