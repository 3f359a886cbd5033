#pragma once
/// File helpers shared by configs and records.
#include <string>
#include <string_view>

namespace kiln::io {

/// The whole file as bytes.
/// Throws: IoError naming `op`, the path and the system's reason if it cannot be opened or
///         read, or if `path` is a directory (which some C++ libraries open as an empty
///         file); OutOfMemoryError naming `op` and the path if its bytes do not fit in memory.
std::string read_file(const std::string& path, std::string_view op);

/// Writes `bytes` to a temporary file next to `path`, flushes it and renames it over `path`,
/// so a failed or interrupted save never leaves a half-written file in place of a good one.
/// Throws IoError naming `op`, the path and the reason (the temporary file is removed).
void write_file_atomic(const std::string& path, std::string_view bytes, std::string_view op);

}  // namespace kiln::io
