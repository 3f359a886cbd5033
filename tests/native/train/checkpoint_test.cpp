// Checkpoint pruning (kiln/train/checkpoint.hpp): the completion markers (state-N.json) go
// before the files they vouch for, so a prune stopped half-way never leaves a marked
// checkpoint with a missing model or optimizer file; and the temporaries of killed saves of
// pruned checkpoints go too.
#include "kiln/train/checkpoint.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/core/error.hpp"
#include "support/temp_dir.hpp"

#if defined(__linux__)
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace kiln::train::detail {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& path) { std::ofstream(path) << "x"; }

/// Every checkpoint that checkpoint_epochs reports complete has its model and optimizer.
void expect_marked_checkpoints_whole(const fs::path& dir) {
  for (const std::int64_t e : checkpoint_epochs(dir)) {
    EXPECT_TRUE(fs::is_regular_file(model_checkpoint_path(dir, e))) << "epoch " << e;
    EXPECT_TRUE(fs::is_regular_file(optimizer_checkpoint_path(dir, e))) << "epoch " << e;
  }
}

TEST(CheckpointPrune, AStoppedPruneNeverLeavesAMarkedCheckpointBroken) {
  test::TempDir dir("checkpoint_prune_stopped");
  for (int e = 1; e <= 40; ++e) {
    touch(model_checkpoint_path(dir.path(), e));
    touch(dir.path() / ("state-" + std::to_string(e) + ".json"));
    if (e == 23) {
      // A file the prune cannot remove (a non-empty directory in its place) stops it
      // half-way, as a kill would.
      fs::create_directories(fs::path(optimizer_checkpoint_path(dir.path(), e)) / "x");
    } else {
      touch(optimizer_checkpoint_path(dir.path(), e));
    }
  }
  EXPECT_THROW(prune_checkpoints(dir.path(), 39, 40), IoError);
  // Every marker of a stale epoch went first.
  EXPECT_EQ(checkpoint_epochs(dir.path()), (std::vector<std::int64_t>{39, 40}));
  expect_marked_checkpoints_whole(dir.path());
  // Once the obstacle is gone, the next prune finishes the job.
  fs::remove_all(optimizer_checkpoint_path(dir.path(), 23));
  prune_checkpoints(dir.path(), 39, 40);
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 6u);
  expect_marked_checkpoints_whole(dir.path());
}

#if defined(__linux__)
TEST(CheckpointPrune, RemovesTheStaleTemporariesOfPrunedCheckpointsOnly) {
  test::TempDir dir("checkpoint_prune_temporaries");
  const pid_t child = ::fork();
  if (child == 0) std::_Exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::string dead = std::to_string(child), live = std::to_string(::getppid());
  const auto file = [&](const std::string& name) { return dir.path() / name; };
  touch(file("model-1.safetensors.kiln-tmp-" + dead + "-0"));  // killed save of a pruned epoch
  touch(file("state-1.json.kiln-tmp-" + dead + "-3"));
  touch(file("optim-1.safetensors.kiln-tmp-" + live + "-0"));  // a live writer's: kept
  touch(file("model-3.safetensors.kiln-tmp-" + dead + "-0"));  // a kept epoch's: its next save
  touch(file("notes.txt.kiln-tmp-" + dead + "-0"));            // not a checkpoint's
  prune_checkpoints(dir.path(), 2, 3);
  EXPECT_FALSE(fs::exists(file("model-1.safetensors.kiln-tmp-" + dead + "-0")));
  EXPECT_FALSE(fs::exists(file("state-1.json.kiln-tmp-" + dead + "-3")));
  EXPECT_TRUE(fs::exists(file("optim-1.safetensors.kiln-tmp-" + live + "-0")));
  EXPECT_TRUE(fs::exists(file("model-3.safetensors.kiln-tmp-" + dead + "-0")));
  EXPECT_TRUE(fs::exists(file("notes.txt.kiln-tmp-" + dead + "-0")));
}
#endif

}  // namespace
}  // namespace kiln::train::detail
