// `dmindex plot FILE.json... --out FILE.png`: draws `dmindex bench --json` results with
// src/tools/plot.py under Debian's python3 and its python3-matplotlib: bars per design and
// workload, or throughput over time when the runs have timelines (one line per run).
#include <CLI/CLI.hpp>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "tools/commands.h"
#include "tools/flag_values.h"

extern char** environ;

namespace dmindex::tools {
namespace {

struct PlotFlags {
  std::vector<std::string> json_paths;
  std::string out_path;
  std::string title;
  std::string python;
  std::string script;
};

[[noreturn]] void Fail(const std::string& message, int code) {
  std::cerr << "dmindex plot: " << message << "\n";
  throw CLI::RuntimeError(code);
}

// plot.py where `cmake --install` puts it relative to the executable (<prefix>/bin/dmindex:
// <prefix>/share/dmindex/plot.py), so an installed tree can move; a build tree's executable
// has none there and uses the source tree it was built from.
std::string FindScript() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto installed = (exe.parent_path() / DMINDEX_PLOT_FROM_BIN).lexically_normal();
    if (std::filesystem::exists(installed, ec)) return installed.string();
  }
  return DMINDEX_PLOT_IN_SOURCE;
}

// Debian's interpreter is the one python3-matplotlib installs into; another python3 earlier
// on PATH (pyenv, a venv) usually lacks it.
std::string DefaultPython() {
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

int Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int err = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  if (err != 0) Fail("cannot run '" + argv[0] + "': " + std::strerror(err), 1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

void Run(const PlotFlags& f) {
  for (const std::string& path : f.json_paths)
    if (!std::filesystem::exists(path)) Fail("no such file: " + path, 2);
  const std::string script = f.script.empty() ? FindScript() : f.script;
  if (!std::filesystem::exists(script)) Fail("plot script not found at " + script, 1);
  std::vector<std::string> argv = {f.python.empty() ? DefaultPython() : f.python, script};
  argv.insert(argv.end(), f.json_paths.begin(), f.json_paths.end());
  argv.insert(argv.end(), {"--out", f.out_path});
  if (!f.title.empty()) argv.insert(argv.end(), {"--title", f.title});
  if (int code = Spawn(argv); code != 0) throw CLI::RuntimeError(code);  // plot.py said why
  std::cout << "wrote " << f.out_path << "\n";
}

}  // namespace

void AddPlotCommand(CLI::App& app) {
  auto f = std::make_shared<PlotFlags>();
  CLI::App* cmd = app.add_subcommand("plot", "Plot `dmindex bench --json` results: throughput "
                                             "and verbs per operation per design and workload, or "
                                             "throughput over time for runs with a timeline");
  cmd->add_option("json", f->json_paths, "Results written by dmindex bench --json (one or more "
                                         "files, e.g. one per cache size)")->required();
  AddOutputFile(*cmd, "--out", &f->out_path, "PNG (or PDF, SVG) to write")->required();
  cmd->add_option("--title", f->title, "Title of the throughput panel");
  cmd->add_option("--python", f->python, "Python interpreter with matplotlib (default: Debian's /usr/bin/python3)");
  cmd->add_option("--script", f->script, "plot.py to use (default: the one shipped with dmindex)");
  cmd->callback([f] { Run(*f); });
}

}  // namespace dmindex::tools
