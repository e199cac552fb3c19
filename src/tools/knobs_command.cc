// `dmindex knobs`: every design's knobs from its knob table (common/knob_table.h), with values,
// defaults and a line each; --markdown prints the tables the docs include (one per design,
// each under a "<!-- knobs DESIGN -->" marker line), which tests/knob_table_test.cc compares.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "designs/registry.h"
#include "tools/commands.h"

namespace dmindex::tools {
namespace {

struct KnobsFlags {
  std::vector<std::string> designs;
  bool markdown = false;
};

int Run(const KnobsFlags& f) {
  const std::vector<std::string> designs = f.designs.empty() ? designs::DesignNames() : f.designs;
  for (const std::string& d : designs) {
    auto knobs = designs::DesignKnobs(d);
    if (!knobs.ok()) {
      std::cerr << "dmindex knobs: " << knobs.status().message() << "\n";
      return 2;
    }
    if (f.markdown) {
      std::cout << "<!-- knobs " << d << " -->\n" << (knobs->empty() ? "(no knobs)\n" : KnobMarkdown(*knobs)) << "\n";
    } else {
      std::cout << d << (knobs->empty() ? ": no knobs\n" : ":\n" + KnobText(*knobs));
    }
  }
  return 0;
}

}  // namespace

void AddKnobsCommand(CLI::App& app) {
  auto f = std::make_shared<KnobsFlags>();
  CLI::App* cmd = app.add_subcommand("knobs", "List the designs' knobs (--design NAME:knob=value) with their defaults");
  cmd->add_option("designs", f->designs, "Designs to list (default: all)");
  cmd->add_flag("--markdown", f->markdown, "Markdown tables, as docs/ includes them");
  cmd->callback([f] {
    if (int code = Run(*f); code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace dmindex::tools
