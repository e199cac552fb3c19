// dmindex: the command-line tool. Each subcommand lives in its own file (commands.h).
//
// Exit status: 0 success, 1 the work failed (a check found a violation, a run failed),
// 2 the command line was wrong (unknown command or flag, a value out of range) - always
// with one line saying what. A subcommand may use others (130: interrupted).
#include <CLI/CLI.hpp>

#include <cstring>
#include <iostream>
#include <new>

#include "tools/commands.h"

namespace {

constexpr int kBadCommandLine = 2;

// CLI11 says only "A subcommand is required" for a mistyped command; name it instead.
bool IsUnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->check_name(argv[1])) return false;
  std::string known;
  for (const CLI::App* sub : app.get_subcommands({})) known += (known.empty() ? "" : ", ") + sub->get_name();
  std::cerr << "dmindex: unknown command '" << argv[1] << "' (commands: " << known
            << "; dmindex --help lists them)\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dmindex: a range index for disaggregated memory"};
  app.set_version_flag("--version", "dmindex 0.1");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("dmindex: ") + e.what() + "\nRun with --help for more information.\n";
  });
  dmindex::tools::AddCommands(app);
  if (IsUnknownCommand(app, argc, argv)) return kBadCommandLine;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version exit 0; a command's own failure carries its status (RuntimeError);
    // every other parse error is a bad command line.
    const int code = app.exit(e);
    return code == 0 || e.get_name() == "RuntimeError" ? code : kBadCommandLine;
  } catch (const std::bad_alloc&) {
    // Limits on the flags keep a run within the machine's memory; this is the last resort.
    std::cerr << "dmindex: out of memory (a smaller --keys, --cache-mb or --ops may fit)\n";
    return 1;
  }
  return 0;
}
