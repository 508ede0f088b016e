// reducelab explain: the CPU model of each rung (src/model/model.hpp) as markdown tables: per
// step, the active lanes, divergent warps, bank-conflict degree and barriers of one block, then
// the grid the first pass launches for n elements. Needs no GPU, so it also runs in CI.

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "ladder/ladder.hpp"
#include "model/model.hpp"
#include "reducelab/error.hpp"

namespace reducelab::cli {
namespace {

struct ExplainOptions {
  int block = 256;
  std::string rungs = "all";
  std::string n = "2^27";
  int sms = 132;
  int blocks_per_sm = 0;
};

void run_explain(const ExplainOptions& o) {
  // Checked here, before the model, so the message names the flag.
  if (o.block < 64 || o.block > 1024 || (o.block & (o.block - 1)) != 0)
    throw Error(ErrorCode::invalid_argument,
                "--block " + std::to_string(o.block) +
                    ": expected a power of two from 64 to 1024 (V4 and V5 need at least 64 "
                    "threads, a block holds at most 1024)");
  if (o.sms < 1) throw Error(ErrorCode::invalid_argument, "--sms must be at least 1");
  if (o.blocks_per_sm < 0 || o.blocks_per_sm > 32)
    throw Error(ErrorCode::invalid_argument,
                "--blocks-per-sm must be 1..32, or 0 to derive it from 2048 threads per SM");
  const std::size_t n = parse_count(o.n);
  const std::vector<const ladder::Rung*> chosen = ladder::parse_rung_list(o.rungs);
  const model::Machine machine{o.sms, o.blocks_per_sm};

  std::vector<model::RungModel> models;
  for (const ladder::Rung* rung : chosen) models.push_back(model::model_rung(*rung, o.block));

  std::cout << "# reducelab explain: B = " << o.block
            << " threads per block, n = " << model::format_count(n) << "\n\n"
            << "A CPU replay of one block of each rung's kernel after its global load (no GPU is "
               "used). Bank conflict: the most distinct 4-byte words one of the 32 banks serves "
               "for one shared-memory instruction of one warp (1: none, -: no shared memory).\n";
  // V7 sizes its grid from the device; without one, say which figures stand in for it.
  const auto resident = std::find_if(chosen.begin(), chosen.end(), [](const ladder::Rung* rung) {
    return rung->grid == ladder::GridRule::resident;
  });
  if (resident != chosen.end())
    std::cout << (*resident)->id << "'s grid assumes " << o.sms << " SMs and "
              << (o.blocks_per_sm > 0
                      ? std::to_string(o.blocks_per_sm)
                      : "2048 / B = " + std::to_string(std::min(32, 2048 / o.block)))
              << " resident blocks per SM (defaults: an H200; set --sms and --blocks-per-sm).\n";
  // The kernels hard-code their block size; other sizes answer "what would the same code do".
  for (const ladder::Rung* rung : chosen) {
    if (rung->block_size != o.block) {
      std::cout << "The ladder kernels are compiled for B = " << rung->block_size
                << "; B = " << o.block << " shows what the same code would do.\n";
      break;
    }
  }
  if (models.size() > 1) {
    std::cout << "\n## Overview\n\n" << model::render_overview_markdown(models, n, machine);
  }
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const ladder::Rung& rung = *chosen[i];
    std::cout << "\n## " << rung.id << ": " << rung.name << "\n\n"
              << "Change: " << rung.change << ". Removes: " << rung.bottleneck << ".\n\n"
              << model::render_markdown(models[i], n, machine);
  }
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* command = app.add_subcommand(
      "explain",
      "Per-step lanes, divergence, bank conflicts and barriers of each rung (CPU model, no GPU)");
  command->add_option("--block", options->block, "Threads per block: a power of two, 64..1024")
      ->capture_default_str();
  command->add_option("--rungs", options->rungs, rungs_help(false))->capture_default_str();
  command->add_option("--n", options->n, "Elements for the grid summary: 134217728, 2^27, 2^20+3")
      ->capture_default_str();
  command->add_option("--sms", options->sms, "SM count V7's grid assumes (H200: 132)")
      ->capture_default_str();
  command
      ->add_option("--blocks-per-sm", options->blocks_per_sm,
                   "Resident blocks per SM V7's grid assumes; 0: 2048 / block")
      ->capture_default_str();
  command->callback([options] { run_explain(*options); });
}

}  // namespace reducelab::cli
