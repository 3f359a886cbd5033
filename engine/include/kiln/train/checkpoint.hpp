#pragma once
/// What SupervisedTraining writes to disk (engine/src/train/checkpoint.cpp): the history
/// (artifact_dir/history.json) and, with a file checkpointer, after epoch e in
/// artifact_dir/checkpoint/ (see learner.hpp's top comment):
///   model-e.safetensors  the model (written by the recorder);
///   optim-e.safetensors  the optimizer's state record, always F32;
///   state-e.json         epoch, scheduler steps, the loaders' epoch counts and the history;
///                        written last, so its presence marks a complete checkpoint.
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "kiln/optim/optimizer.hpp"
#include "kiln/train/event.hpp"

namespace kiln::train::detail {

/// The history as JSON text (written to artifact_dir/history.json and in checkpoints): an
/// array of {epoch, train: {metric: value}, valid: {...}, train_seconds, valid_seconds,
/// train_items_per_second, interrupted}; a nan metric value is null.
std::string history_to_json(const std::vector<EpochSummary>& history);
/// Parses history_to_json's output ("interrupted" may be absent: false). Throws FormatError
/// naming `path`.
std::vector<EpochSummary> history_from_json(const std::string& text, const std::string& path);

/// What state-<epoch>.json holds besides the model and the optimizer.
struct TrainingState {
  std::int64_t epoch = 0;                  ///< the last epoch done
  std::uint64_t scheduler_steps = 0;       ///< learning-rate scheduler steps taken
  std::uint64_t train_loader_epochs = 0;   ///< the train loader's epochs_started()
  std::uint64_t valid_loader_epochs = 0;   ///< the valid loader's epochs_started()
  std::vector<EpochSummary> history;       ///< epochs 1..epoch
};
/// Writes `dir/state-<state.epoch>.json` atomically.
/// Throws: IoError if it cannot be written.
void write_training_state(const std::filesystem::path& dir, const TrainingState& state);
/// Reads `dir/state-<epoch>.json`. Throws IoError if it cannot be read, FormatError if it is
/// malformed or of another epoch.
TrainingState read_training_state(const std::filesystem::path& dir, std::int64_t epoch);
/// `dir/model-<epoch>.safetensors`.
std::string model_checkpoint_path(const std::filesystem::path& dir, std::int64_t epoch);
/// `dir/optim-<epoch>.safetensors`.
std::string optimizer_checkpoint_path(const std::filesystem::path& dir, std::int64_t epoch);
/// Writes an optimizer state record as SafeTensors at `path` atomically: tensors as F32,
/// counts as I64 of shape [1]. Throws: IoError if it cannot be written.
void write_optimizer_state(const std::string& path, const optim::NamedStateRecord& record);
/// The bytes write_optimizer_state writes (SafeTensors: tensors as F32, counts as I64 [1],
/// metadata "format": "kiln optimizer state" plus `metadata`); for the JS
/// optimizer.saveState().
std::vector<std::uint8_t> optimizer_state_to_bytes(
    const optim::NamedStateRecord& record, const std::map<std::string, std::string>& metadata = {});
/// Parses optimizer_state_to_bytes's output; `metadata` (if given) receives the file's
/// metadata. `source` names the bytes in errors.
/// Throws: FormatError naming `source` as read_optimizer_state.
optim::NamedStateRecord optimizer_state_from_bytes(std::span<const std::uint8_t> bytes,
                                                   std::string_view source,
                                                   std::map<std::string, std::string>* metadata = nullptr);
/// Reads write_optimizer_state's file: F32 (also F16, BF16) tensors as f32 data, I64 [1] or
/// scalar entries as counts. Throws: IoError if it cannot be read; FormatError if it is not
/// SafeTensors or holds another dtype or an I64 entry of another shape.
optim::NamedStateRecord read_optimizer_state(const std::string& path);
/// The checkpoint epochs in `dir` that have a state file (complete checkpoints), ascending;
/// empty if `dir` does not exist.
std::vector<std::int64_t> checkpoint_epochs(const std::filesystem::path& dir);
/// Removes the checkpoint files (model-N.safetensors, optim-N.safetensors, state-N.json) of
/// every epoch N outside [keep_first, keep_last] from `dir` (nothing if it does not exist),
/// every state-N.json (the completion marker) before any model or optimizer file, so a
/// prune killed half-way never leaves a marked checkpoint with missing files; then the stale
/// temporaries (io::remove_stale_temporaries) that killed saves of those files left. Other
/// files are left alone. Throws: IoError if one cannot be removed.
void prune_checkpoints(const std::filesystem::path& dir, std::int64_t keep_first,
                       std::int64_t keep_last);

}  // namespace kiln::train::detail
