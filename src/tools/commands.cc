#include "tools/commands.h"

#include <CLI/CLI.hpp>

namespace dmindex::tools {

void AddCommands(CLI::App& app) {
  AddFabricBenchCommand(app);
  AddMemserverCommand(app);
  AddBenchCommand(app);
  AddPlotCommand(app);
  AddCheckCommand(app);
  AddIndexesCommand(app);
  AddSoakCommand(app);
  AddSoakWriterCommand(app);
  AddKnobsCommand(app);
}

}  // namespace dmindex::tools
