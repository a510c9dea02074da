// ObjectRef: the Python face (anvil.runtime.Object) of runtime objects that have no class of
// their own — VM closures, storages and the like.
#pragma once

#include "anvil/runtime/object.h"

namespace anvil::python {

struct ObjectRef {
  Ref<Object> ref;
};

}  // namespace anvil::python
