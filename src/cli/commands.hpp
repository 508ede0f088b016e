#pragma once
// The subcommands of `reducelab`; each file registers one on the app.

#include <CLI/CLI.hpp>

namespace reducelab::cli {

void add_bench_command(CLI::App& app);    // bench_command.cpp: the article's table on this GPU
void add_sweep_command(CLI::App& app);    // sweep_command.cpp: sizes 2^a..2^b, CSV/JSON for plots
void add_explain_command(CLI::App& app);  // explain_command.cpp: the CPU model of each rung
void add_profile_command(CLI::App& app);  // profile_command.cpp: Nsight Compute counters per rung

}  // namespace reducelab::cli
