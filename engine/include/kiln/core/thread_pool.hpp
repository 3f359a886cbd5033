#pragma once
/// The number of threads Kiln's CPU kernels use (convolutions split the batch across them,
/// the GEMM blocks of the output, batched matmul its batch elements).
///
///   kiln::set_num_threads(2);       // or KILN_NUM_THREADS=2 in the environment
///   auto n = kiln::num_threads();   // 2
///
/// Default: the environment variable KILN_NUM_THREADS when it holds an integer >= 1, else
/// std::thread::hardware_concurrency() (1 if unknown). In a WebAssembly build without
/// pthreads (__EMSCRIPTEN_PTHREADS__ undefined) kernels always run on the calling thread
/// and num_threads() is 1. In the pthreads WebAssembly build the default is 1 and the
/// embedding raises it (the npm package's init({numThreads}) does), to at most the number
/// of Web Workers Emscripten pre-started plus one: a thread beyond those would wait for
/// the browser's event loop. There, lowering the count keeps the workers (idle).
/// Kernels give bit-identical results for every thread count (work is split so that no
/// sum's order depends on it). The pool itself is private (engine/src/core/parallel.hpp).
namespace kiln {

/// Sets the number of threads kernels may use (the calling thread included); takes effect
/// for the next kernel. Thread-safe, but do not call it while another thread runs a kernel
/// (it waits for that kernel to finish).
/// Throws: ConfigError if n < 1.
void set_num_threads(int n);

/// The number of threads kernels use (>= 1; always 1 in a non-threaded WebAssembly build).
int num_threads() noexcept;

}  // namespace kiln
