// Counters of the autodiff graph (node ids, live nodes).
#include <atomic>

#include "kiln/autodiff/graph.hpp"

namespace kiln::autodiff {
namespace {
std::atomic<std::uint64_t> g_next_id{1};
std::atomic<std::int64_t> g_live_nodes{0};
}  // namespace

std::int64_t live_nodes() noexcept { return g_live_nodes.load(std::memory_order_relaxed); }

namespace detail {
std::uint64_t next_node_id() noexcept { return g_next_id.fetch_add(1, std::memory_order_relaxed); }
void count_node(int delta) noexcept { g_live_nodes.fetch_add(delta, std::memory_order_relaxed); }
}  // namespace detail
}  // namespace kiln::autodiff
