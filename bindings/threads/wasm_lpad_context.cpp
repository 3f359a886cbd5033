// The threaded build only (CMakeLists.txt adds it when KILN_WASM_THREADS): makes typed C++
// catch clauses work under -pthread -fwasm-exceptions with this toolchain.
//
// The defect: with wasm exception handling, a landing pad stores its index and LSDA into
// the global `__wasm_lpad_context`, calls `_Unwind_CallPersonality`, and reads back the
// selector the personality wrote there. clang 14 (which Emscripten 3.1.6 runs here) emits
// those stores and loads as accesses to a plain global; Emscripten 3.1.6's libunwind
// (system/lib/libunwind/src/Unwind-wasm.c) defines the variable `thread_local`, and in a
// -pthread link the two are different memory (LLVM made the compiler side thread-local
// only in LLVM 15). The personality therefore never sees the landing pad's LSDA: every
// `catch (const T&)` fails to match and only `catch (...)` catches. In the threaded build
// every engine error became `Internal` (after the error boundary) or escaped as a raw
// WebAssembly.Exception (before it), and the engine's own typed catches (rewording a
// ConfigError, ...) were dead. A 6-line program shows it: throw std::runtime_error, catch
// std::exception: "typed catch" single-threaded, "catch(...) only" with -pthread.
//
// The fix: this translation unit defines every symbol of Unwind-wasm.o, so the linker does
// not take libunwind's, with `__wasm_lpad_context` as the plain global the compiler uses.
// The functions are Unwind-wasm.c's (Emscripten 3.1.6), unchanged otherwise. The context
// is shared by all threads, as clang 14 assumes: two threads entering landing pads at the
// same instant could race on it. In Kiln, C++ errors are thrown on the thread that called
// into the engine; the pool's kernel threads do not throw.
#include <cstdint>

extern "C" {

/// The head of libunwind's _Unwind_Exception (the fields these functions read).
struct KilnUnwindException {
  std::uint64_t exception_class;
  void (*exception_cleanup)(int reason, KilnUnwindException* exception);
};

int __gxx_personality_wasm0(int version, int actions, std::uint64_t exception_class,
                            void* exception, void* context);

/// Compiler-generated landing pads <-> the personality function.
struct _Unwind_LandingPadContext {
  std::uintptr_t lpad_index;  ///< in: the landing pad's index
  std::uintptr_t lsda;        ///< in: its LSDA address
  std::uintptr_t selector;    ///< out: the catch clause that matched
};

/// Not thread_local: the landing pads clang 14 emits access it as a plain global.
_Unwind_LandingPadContext __wasm_lpad_context;

/// Called from landing pads: runs the personality on this frame (cleanup phase only:
/// wasm has no two-phase unwinding).
int _Unwind_CallPersonality(void* exception_ptr) {
  auto* exception = static_cast<KilnUnwindException*>(exception_ptr);
  __wasm_lpad_context.selector = 0;
  return __gxx_personality_wasm0(1, /*_UA_CLEANUP_PHASE*/ 2, exception->exception_class,
                                 exception, &__wasm_lpad_context);
}

/// Called by __cxa_throw.
int _Unwind_RaiseException(void* exception) { __builtin_wasm_throw(0, exception); }

/// Called by __cxa_end_catch.
void _Unwind_DeleteException(void* exception_ptr) {
  auto* exception = static_cast<KilnUnwindException*>(exception_ptr);
  if (exception->exception_cleanup != nullptr) {
    exception->exception_cleanup(/*_URC_FOREIGN_EXCEPTION_CAUGHT*/ 1, exception);
  }
}

/// The personality sets the selector (register index 1) through this.
void _Unwind_SetGR(void* context, int index, std::uintptr_t value) {
  if (index == 1) static_cast<_Unwind_LandingPadContext*>(context)->selector = value;
}

/// The landing pad index + 2 (used as a 1-based index after a decrement).
std::uintptr_t _Unwind_GetIP(void* context) {
  return static_cast<_Unwind_LandingPadContext*>(context)->lpad_index + 2;
}

void _Unwind_SetIP(void*, std::uintptr_t) {}

std::uintptr_t _Unwind_GetLanguageSpecificData(void* context) {
  return static_cast<_Unwind_LandingPadContext*>(context)->lsda;
}

std::uintptr_t _Unwind_GetRegionStart(void*) { return 0; }

}  // extern "C"
