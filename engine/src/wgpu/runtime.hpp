#pragma once
// The Wgpu backend's runtime: device buffers, compiled kernels and recorded dispatches, over
// the synchronous imports of bindings/webgpu/kgpu.js (integer handles; the JS side keeps
// the GPU objects). Nothing here waits for the GPU:
//   - dispatches are recorded into one command encoder and compute pass per batch; the batch
//     is submitted when JS reads a buffer (Module.kgRead), when flush() is called, or when
//     the parameter ring (256 bytes per dispatch, 1024 slots) is full;
//   - errors the GPU reports later (validation, out of memory, device lost) become a sticky
//     error that the next read rejects with and that check() throws at the next op.
// Kernels are WGSL compute shaders with entry point `main`. Their bindings, in order: the
// read-only storage buffers, then the read-write ones, then (when the kernel has
// parameters) one uniform block at binding nread + nrw, of at most 256 bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::wgpu {

/// A device storage buffer (STORAGE | COPY_SRC | COPY_DST), a handle into kgpu.js's table.
/// Destroying it returns the GPU buffer to kgpu.js's pool for later buffers of the same size
/// (GPU work runs in submission order, so a later writer runs after every recorded reader).
class Buffer {
 public:
  Buffer(int id, std::size_t bytes) noexcept : id_(id), bytes_(bytes) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  int id() const noexcept { return id_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  int id_;
  std::size_t bytes_;
};

/// Whether the module was given a device (Module.kilnGpuDevice) and the runtime is set up.
bool available() noexcept;

/// The device storage buffers held now (Buffer objects alive: tensors and what ops hold),
/// their bytes, and the most bytes held at once since the module started. Buffers released
/// to kgpu.js's pool are not counted (they are kept for reuse, not held).
struct DeviceMemory {
  std::int64_t live_buffers = 0;
  std::int64_t live_bytes = 0;
  std::int64_t peak_bytes = 0;
};
DeviceMemory device_memory() noexcept;

/// Throws the sticky error the device reported since the last check, naming `op`:
/// DeviceError (validation error, device lost), OutOfMemoryError (GPUOutOfMemoryError);
/// DeviceError when the module has no device. Every op calls it first.
void check(const char* op);

/// A new buffer of `bytes` bytes (at least 4, rounded up to 4), contents undefined.
/// Throws OutOfMemoryError past the device's maxBufferSize or when creation fails at once.
std::shared_ptr<Buffer> allocate(const char* op, std::size_t bytes);

/// A new buffer holding `bytes` bytes copied from `data` (mappedAtCreation: the copy is in
/// place before any later dispatch runs). Throws as allocate.
std::shared_ptr<Buffer> upload(const char* op, const void* data, std::size_t bytes);

/// A compiled compute pipeline (see the file comment for its bindings).
struct Kernel {
  int id = 0;
  int nread = 0;       ///< read-only storage buffers (bindings 0 .. nread-1)
  int nrw = 0;         ///< read-write storage buffers (bindings nread .. nread+nrw-1)
  bool params = false; ///< a uniform block at binding nread + nrw
};

/// The pipeline of `wgsl`, compiled on first use and cached by its source text. A WGSL
/// error surfaces as the sticky DeviceError (reported by the next read), never here.
const Kernel& kernel(const std::string& wgsl, int nread, int nrw, bool params);

/// Workgroup counts for `invocations` threads in workgroups of `workgroup_size`: up to
/// 65,535 groups in x, the rest spilling into y. Kernels recover the flat index with
/// flat_index() of kPrelude.
std::array<std::uint32_t, 3> groups_for(std::int64_t invocations, std::uint32_t workgroup_size = 256);

/// Records one dispatch of `k` over `buffers` (nread + nrw of them, in binding order) with
/// `param_bytes` (<= 256) bytes of parameters. A buffer must not appear twice.
void dispatch(const Kernel& k, std::initializer_list<const Buffer*> buffers, const void* params,
              std::size_t param_bytes, std::array<std::uint32_t, 3> groups);

/// As dispatch, with a parameter struct (standard layout, laid out as the WGSL uniform).
template <class Params>
void dispatch(const Kernel& k, std::initializer_list<const Buffer*> buffers, const Params& params,
              std::array<std::uint32_t, 3> groups) {
  static_assert(sizeof(Params) <= 256, "a kernel's parameters fit one 256-byte slot");
  dispatch(k, buffers, &params, sizeof(Params), groups);
}

/// Submits the recorded batch (reads do this themselves).
void flush();

/// Device-side value checks, reported as errors (as CUDA's device asserts): a value that only
/// exists on the device (an index computed by an earlier op) cannot be checked when the op is
/// recorded, so a check kernel records a bad one in this 16-byte flag buffer, and the next
/// read (kgpu.js KG.read, which copies it with the data and clears it) rejects with KilnError
/// `Index` naming the op and the value. Word 0: the ops that found a bad value (the
/// DeviceCheck bits), word 1: one such value (its bits), word 2: the size it had to fit,
/// word 3: the DeviceCheckMode. Made on first use and kept for the module's life.
const Buffer& check_flags();
/// The same buffer, shared (a tensor view of it: Wgpu::device_checks_failed).
const std::shared_ptr<Buffer>& check_flags_buffer();
/// Whether check_flags was made (a device check has been recorded in this module).
bool check_flags_made() noexcept;

/// The ops whose values a device check guards (bits of check_flags' word 0; kgpu.js
/// KG.checkNames names them in this order).
enum DeviceCheck : std::uint32_t { kCheckSelect = 1, kCheckSelectAssign = 2, kCheckGather = 4,
                                   kCheckScatter = 8, kCheckOneHot = 16 };
/// What a value must be: an i32 in [0, size), an i32 in [-size, size), or an f32 whole number
/// in [0, size).
enum DeviceCheckMode : std::uint32_t { kIndexFromZero = 0, kIndexFromEnd = 1, kWholeFloat = 2 };

/// WGSL helpers every kernel may prepend:
///   flat_index(gid, nwg, wg)  the flat invocation index of groups_for()'s 2-D grid
///   is_nan_f32(x), is_inf_f32(x), is_finite_f32(x)   bit tests (WGSL lets implementations
///                              assume finite math: `x != x` is false for NaN on SwiftShader)
///   nan_f32(), inf_f32()       the values, built from bits at run time (a constant
///                              expression that evaluates to nan or inf is a WGSL error)
extern const std::string_view kPrelude;

}  // namespace kiln::wgpu
