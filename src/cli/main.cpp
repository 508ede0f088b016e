// reducelab: GPU reductions, from the article's ladder to a production reduce, measured.
//   reducelab bench     the article's table on this GPU (ladder V0..V7, CUB, reducelab)
//   reducelab sweep     sizes 2^a..2^b, CSV/JSON for plots
//   reducelab explain   the CPU model of each rung's divergence, bank conflicts and barriers
//   reducelab profile   Nsight Compute counters per rung

#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "reducelab/error.hpp"
#include "reducelab/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"reducelab: GPU reductions, from the article's ladder to a production reduce"};
  app.require_subcommand(1);
  app.set_version_flag("--version", REDUCELAB_VERSION_STRING " (" REDUCELAB_GIT_COMMIT ")");
  reducelab::cli::add_bench_command(app);
  reducelab::cli::add_sweep_command(app);
  reducelab::cli::add_explain_command(app);
  reducelab::cli::add_profile_command(app);
  return reducelab::cli::run_app(app, argc, argv, std::cout, std::cerr);
}
