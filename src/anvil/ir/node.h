// Base of every IR node and NodeRef<T>, the typed, immutable handle that owns one.
// Nodes reuse the runtime's intrusive reference count (anvil::Object): a raw node pointer handed
// to a visitor can be turned back into an owning handle without a control block, which is what
// lets mutators return the very same node when nothing changed.
#pragma once

#include <cstddef>
#include <functional>

#include "anvil/runtime/object.h"

namespace anvil::ir {

// Nodes are created only through their factories and never change afterwards.
class Node : public Object {};

// A shared, read-only handle to a node of type T (or a subclass). May be undefined (null).
// Handles compare by identity only through same_as(); value equality is structural_equal().
template <typename T>
class NodeRef {
 public:
  using NodeType = T;

  NodeRef() = default;
  explicit NodeRef(const T* node) : node_(const_cast<T*>(node)) {}
  explicit NodeRef(Ref<T> node) : node_(std::move(node)) {}

  const T* get() const { return node_.get(); }
  const T* operator->() const { return node_.get(); }
  const T& operator*() const { return *node_.get(); }
  bool defined() const { return node_.get() != nullptr; }
  template <typename U>
  bool same_as(const NodeRef<U>& other) const {
    return static_cast<const void*>(get()) == static_cast<const void*>(other.get());
  }

 protected:
  Ref<T> node_;
};

// Hash and equality by node identity, for unordered maps keyed by handles (Var, Buffer, ...).
struct NodeIdentityHash {
  template <typename R>
  size_t operator()(const R& ref) const {
    return std::hash<const void*>()(ref.get());
  }
};
struct NodeIdentityEqual {
  template <typename R>
  bool operator()(const R& a, const R& b) const {
    return a.get() == b.get();
  }
};

}  // namespace anvil::ir
