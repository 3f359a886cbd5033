#pragma once
/// File helpers shared by configs and records.
#include <string>
#include <string_view>
#include <vector>

namespace kiln::io {

/// The whole file as bytes.
/// Throws: IoError naming `op`, the path and the system's reason if it cannot be opened or
///         read, or if `path` is a directory (which some C++ libraries open as an empty
///         file); OutOfMemoryError naming `op` and the path if its bytes do not fit in memory.
std::string read_file(const std::string& path, std::string_view op);

/// Writes `bytes` to a temporary file next to `path` ("<path>.kiln-tmp-<pid>-<n>"), flushes
/// it (fsync natively) and renames it over `path`, so a failed or interrupted save never
/// leaves a half-written file in place of a good one: `path` holds the old or the new bytes.
/// First it removes the temporaries that earlier saves of the same `path` left behind when
/// they were killed mid-write (remove_stale_temporaries).
/// Throws IoError naming `op`, the path and the reason (the temporary file is removed).
void write_file_atomic(const std::string& path, std::string_view bytes, std::string_view op);

/// Removes the stale temporaries of saves of `path`: files in its directory named
/// "<name of path>.kiln-tmp-<pid>-<n>" (or the older "<name>.tmp-<pid>-<n>") whose writer
/// is gone: another process that no longer exists, or this process's pid but no thread of
/// it writing that file now; or any such file older than 24 hours (a reused pid). Never
/// touches other targets' temporaries or other files. Returns the paths removed; errors
/// (an unreadable directory, a file that cannot be removed) are ignored.
std::vector<std::string> remove_stale_temporaries(const std::string& path);

}  // namespace kiln::io
