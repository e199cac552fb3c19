// Subcommands of the dmindex tool. Each lives in its own file and is registered in
// commands.cc. A command that fails prints its error and throws CLI::RuntimeError(code),
// which main turns into the exit code.
#pragma once

namespace CLI {
class App;
}

namespace dmindex::tools {

void AddCommands(CLI::App& app);  // all of the below

void AddFabricBenchCommand(CLI::App& app);
void AddMemserverCommand(CLI::App& app);
void AddBenchCommand(CLI::App& app);
void AddPlotCommand(CLI::App& app);
void AddCheckCommand(CLI::App& app);
void AddIndexesCommand(CLI::App& app);
void AddSoakCommand(CLI::App& app);        // soak_command.cc
void AddSoakWriterCommand(CLI::App& app);  // soak_writer.cc
void AddKnobsCommand(CLI::App& app);

}  // namespace dmindex::tools
