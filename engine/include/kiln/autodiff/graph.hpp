#pragma once
/// The autodiff graph (DESIGN.md §3): one `Node` per tracked tensor, pointing at the nodes
/// of its inputs, holding the backward step of the op that made it and the values that step
/// needs. `backward()` walks the nodes reachable from the root once, in reverse topological
/// order, and releases each step (and so every saved intermediate) as soon as it has run.
///
/// Nodes exist only for tensors that require gradients: leaves made by `require_grad()` and
/// the results of ops with at least one tracked input. Untracked tensors carry no node.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::autodiff {

/// Number of graph nodes alive in this process (for leak tests: a training loop that drops
/// its tensors keeps it flat). Thread-safe.
std::int64_t live_nodes() noexcept;

namespace detail {
std::uint64_t next_node_id() noexcept;
void count_node(int delta) noexcept;
}  // namespace detail

template <Backend B>
class GradSink;

/// A node of the graph. `B` is the inner backend: gradients are its float primitives.
template <Backend B>
class Node {
 public:
  using Prim = typename B::FloatTensor;
  /// Receives the gradient of this node's output and passes its inputs' gradients to the
  /// sink (`sink.add(i, g)` for input i, only when `sink.needs(i)`).
  using Step = std::function<void(Prim grad, GradSink<B>& sink)>;

  /// A leaf (a tensor the user marked with require_grad()) of the given shape.
  explicit Node(const Shape& shape) : id_(detail::next_node_id()), shape_(shape) {
    detail::count_node(1);
  }
  /// The output (of shape `shape`) of an op: `parents[i]` is input i's node (null when
  /// input i is untracked).
  Node(const Shape& shape, std::vector<std::shared_ptr<Node>> parents, Step step)
      : id_(detail::next_node_id()), shape_(shape), parents_(std::move(parents)),
        step_(std::move(step)), op_(true) {
    for (const auto& p : parents_) {
      if (p) order_ = std::max(order_, p->order_ + 1);
    }
    detail::count_node(1);
  }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// Releases the chain of ancestors iteratively, so that dropping a graph of a million
  /// ops cannot overflow the stack through nested shared_ptr destructors.
  ~Node() {
    std::vector<std::shared_ptr<Node>> stack = std::move(parents_);
    while (!stack.empty()) {
      std::shared_ptr<Node> p = std::move(stack.back());
      stack.pop_back();
      if (p && p.use_count() == 1) {
        for (auto& q : p->parents_) stack.push_back(std::move(q));
        p->parents_.clear();
      }
    }
    detail::count_node(-1);
  }

  std::uint64_t id() const noexcept { return id_; }
  /// The shape of the tensor this node belongs to (every gradient for it has this shape).
  const Shape& shape() const noexcept { return shape_; }
  bool is_leaf() const noexcept { return leaf(); }
  /// Whether backward() keeps this node's gradient in the Gradients it returns (leaves
  /// always; an op output after `set_require_grad(true)`, like PyTorch's retain_grad()).
  bool retains_grad() const noexcept { return leaf() || retain_; }
  void retain_grad() noexcept { retain_ = true; }

 private:
  bool leaf() const noexcept { return !op_; }

  template <Backend>
  friend class GradSink;
  template <Backend BB>
  friend class Engine;

  std::uint64_t id_;
  Shape shape_;
  std::uint64_t order_ = 0;
  std::vector<std::shared_ptr<Node>> parents_;
  Step step_;
  bool op_ = false;  // made by an op (a leaf otherwise)
  bool retain_ = false;
  bool released_ = false;  // its step ran in an earlier backward()
};

/// Gradients of the tensors that required them, keyed by node id (Burn's `Gradients`).
/// Values live on the inner backend. Returned by `Tensor::backward()`; read with
/// `x.grad(grads)`, taken out with `x.grad_remove(grads)`.
template <Backend B>
class Gradients {
 public:
  using Prim = typename B::FloatTensor;

  std::optional<Prim> get(std::uint64_t id) const {
    auto it = grads_.find(id);
    if (it == grads_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<Prim> remove(std::uint64_t id) {
    auto it = grads_.find(id);
    if (it == grads_.end()) return std::nullopt;
    Prim out = std::move(it->second);
    grads_.erase(it);
    return out;
  }
  /// Sets (replaces) the gradient of node `id`.
  void insert(std::uint64_t id, Prim grad) { grads_.insert_or_assign(id, std::move(grad)); }
  std::size_t size() const noexcept { return grads_.size(); }
  bool empty() const noexcept { return grads_.empty(); }

 private:
  std::unordered_map<std::uint64_t, Prim> grads_;
};

/// What a backward step writes to: the pending gradients of its inputs.
template <Backend B>
class GradSink {
 public:
  using Prim = typename B::FloatTensor;
  using NodeT = Node<B>;

  GradSink(const std::vector<std::shared_ptr<NodeT>>& parents,
           std::unordered_map<const NodeT*, Prim>& pending)
      : parents_(parents), pending_(pending) {}

  /// Whether input i needs a gradient (it is tracked).
  bool needs(std::size_t i) const noexcept { return i < parents_.size() && parents_[i]; }
  /// Adds `grad` (already in input i's shape) to input i's pending gradient.
  void add(std::size_t i, Prim grad) {
    if (!needs(i)) return;
    const NodeT* p = parents_[i].get();
    // A step that produced a gradient of the wrong shape is an engine bug: fail loudly
    // rather than accumulate a wrong (broadcast) gradient.
    if (!(B::FloatOps::shape(grad) == p->shape())) {
      throw_error<StateError>("backward: internal error: the gradient for input ", i, " has shape ",
                              B::FloatOps::shape(grad), ", expected ", p->shape(),
                              " (please report this)");
    }
    auto it = pending_.find(p);
    if (it == pending_.end()) {
      pending_.emplace(p, std::move(grad));
    } else {
      it->second = B::FloatOps::binary(BinaryOp::Add, std::move(it->second), std::move(grad));
    }
  }

 private:
  const std::vector<std::shared_ptr<NodeT>>& parents_;
  std::unordered_map<const NodeT*, Prim>& pending_;
};

/// The reverse pass.
template <Backend B>
class Engine {
 public:
  using Prim = typename B::FloatTensor;
  using NodeT = Node<B>;

  /// Back-propagates `seed` (the gradient of root's tensor, usually ones) through the graph
  /// above `root` and releases every op node it passes (their steps and saved values).
  /// Backward passes are serialised by a process-wide lock, so two threads back-propagating
  /// through a shared part of a graph get one result and one StateError, never a race.
  /// Throws: StateError if part of the graph was already released by an earlier backward();
  ///         whatever a step throws (OutOfMemoryError): the nodes already run stay released,
  ///         so the forward pass must be recomputed.
  /// With `retain_graph` (PyTorch's retain_graph=True) the nodes are not released, so the
  /// same graph can be back-propagated again.
  static Gradients<B> backward(const std::shared_ptr<NodeT>& root, Prim seed,
                               bool retain_graph = false) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    // Collect the reachable nodes (iterative DFS), refusing released ones. The list owns
    // them: releasing a node's links below may drop the last other reference to a parent.
    std::vector<std::shared_ptr<NodeT>> nodes;
    std::unordered_set<const NodeT*> seen;
    std::vector<std::shared_ptr<NodeT>> stack{root};
    seen.insert(root.get());
    while (!stack.empty()) {
      std::shared_ptr<NodeT> n = std::move(stack.back());
      stack.pop_back();
      if (n->released_) {
        throw_error<StateError>(
            "backward: the graph of this tensor was already released (in whole or in part) "
            "by an earlier backward() (each graph is back-propagated once; recompute the "
            "forward pass to back-propagate again)");
      }
      for (const auto& p : n->parents_) {
        if (p && seen.insert(p.get()).second) stack.push_back(p);
      }
      nodes.push_back(std::move(n));
    }
    // Consumers before producers: a node's order exceeds every parent's.
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const auto& a, const auto& b) { return a->order_ > b->order_; });

    Gradients<B> out;
    std::unordered_map<const NodeT*, Prim> pending;
    pending.emplace(root.get(), std::move(seed));
    for (const auto& n : nodes) {
      std::optional<Prim> grad;
      if (auto it = pending.find(n.get()); it != pending.end()) {
        grad = std::move(it->second);
        pending.erase(it);
      }
      if (grad && n->retains_grad()) out.insert(n->id_, *grad);
      if (n->op_) {
        if (grad && n->step_) {
          GradSink<B> sink(n->parents_, pending);
          n->step_(std::move(*grad), sink);
        }
        if (retain_graph) continue;
        // Release the step (and the intermediates it saved) and the links to the inputs.
        n->step_ = nullptr;
        n->parents_.clear();
        n->released_ = true;
      }
    }
    return out;
  }
};

}  // namespace kiln::autodiff
