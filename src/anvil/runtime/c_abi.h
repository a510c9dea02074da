/* The C calling convention between the Anvil runtime and compiled kernels.
 *
 * Every generated host function is an exported C symbol `__anvil_fn_<name>` of type
 * AnvilKernelFn. Values cross the boundary as 16-byte AnvilValue cells; tensors travel as
 * DLTensor pointers. Kernels never throw: they return 0 on success and nonzero on failure after
 * calling `error_set` through the runtime API table. The library reaches the runtime only through
 * that table, whose address the loader writes into the library's `__anvil_runtime_api` global
 * right after dlopen, so a kernel library needs no link-time dependency on libanvil_runtime.
 * docs/abi.md is the long form of this header. Plain C so that generated code and C kernels can
 * include it. */
#ifndef ANVIL_RUNTIME_C_ABI_H_
#define ANVIL_RUNTIME_C_ABI_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the table or the value layout changes incompatibly. A library that records a
 * newer version in `__anvil_abi_version` is refused at load time. */
#define ANVIL_ABI_VERSION 1

/* AnvilValue.kind codes; the same numbers as anvil::ValueKind (value_kinds.def). */
enum AnvilValueKind {
  kAnvilNull = 0,
  kAnvilInt = 1,      /* v_int64 */
  kAnvilFloat = 2,    /* v_float64 */
  kAnvilBool = 3,     /* v_int64: 0 or 1 */
  kAnvilHandle = 4,   /* v_handle: opaque pointer */
  kAnvilDevice = 5,   /* v_device */
  kAnvilDataType = 6, /* v_dtype */
  kAnvilString = 7,   /* v_str: NUL-terminated, borrowed for the call */
  kAnvilBytes = 8,    /* v_handle: const AnvilByteArray*, borrowed */
  kAnvilShape = 9,    /* v_handle: const AnvilShape*, borrowed */
  kAnvilTensor = 10,  /* v_tensor: borrowed DLTensor* */
  kAnvilFunction = 11 /* v_handle: opaque function handle for function_call */
};

typedef struct AnvilByteArray {
  const char* data;
  uint64_t size;
} AnvilByteArray;

typedef struct AnvilShape {
  const int64_t* data;
  uint64_t ndim;
} AnvilShape;

typedef struct AnvilValue {
  int32_t kind;
  int32_t reserved; /* must be 0 */
  union {
    int64_t v_int64;
    double v_float64;
    void* v_handle;
    const char* v_str;
    DLTensor* v_tensor;
    DLDevice v_device;
    DLDataType v_dtype;
  };
} AnvilValue;

/* A compiled function. `ret` arrives as kAnvilNull; a kernel may set it to a POD value
 * (null, int, float, bool, device, data type). Returns 0 on success. */
typedef int32_t (*AnvilKernelFn)(const AnvilValue* args, int32_t num_args, AnvilValue* ret);

/* Error kinds for error_set; the same numbers as anvil::ErrorKind (base/error_kinds.def). */
enum AnvilErrorKind {
  kAnvilErrorValue = 1,
  kAnvilErrorType = 2,
  kAnvilErrorIndex = 3,
  kAnvilErrorNotImplemented = 4,
  kAnvilErrorRuntime = 5,
  kAnvilErrorIO = 6,
  kAnvilErrorInternal = 7
};

/* Handed to every task of a parallel launch. */
typedef struct AnvilParallelEnv {
  void* sync_handle; /* owned by the runtime; pass back to parallel_barrier */
  int32_t num_task;
} AnvilParallelEnv;

/* One task of a parallel region: task_id in [0, env->num_task). Nonzero return = failure. */
typedef int32_t (*AnvilParallelLambda)(int32_t task_id, AnvilParallelEnv* env, void* closure);

/* The runtime entry points a kernel may call. Fields are only ever appended. */
typedef struct AnvilRuntimeApi {
  uint32_t abi_version;
  uint32_t struct_size;
  /* Record an error message for the current thread; the kernel then returns nonzero. */
  void (*error_set)(int32_t kind, const char* message);
  /* Run `lambda` on num_task tasks (0 = one per pool thread); the caller runs task 0.
   * Returns 0 when every task returned 0. */
  int32_t (*parallel_launch)(AnvilParallelLambda lambda, void* closure, int32_t num_task);
  /* Blocks until every task of the current launch reached the barrier. */
  int32_t (*parallel_barrier)(int32_t task_id, AnvilParallelEnv* env);
  /* Scratch memory for a kernel, freed in reverse order on the same thread. */
  void* (*workspace_alloc)(int32_t device_type, int32_t device_id, uint64_t nbytes);
  int32_t (*workspace_free)(int32_t device_type, int32_t device_id, void* ptr);
  /* Call a function handle received as a kAnvilFunction argument. */
  int32_t (*function_call)(void* handle, const AnvilValue* args, int32_t num_args,
                           AnvilValue* ret);
} AnvilRuntimeApi;

/* The table itself, for code that links the runtime directly. */
const AnvilRuntimeApi* AnvilGetRuntimeApi(void);

/* Convenience C entry points for code that links libanvil_runtime (C kernels, tests). */
void AnvilErrorSet(int32_t kind, const char* message);
int32_t AnvilParallelLaunch(AnvilParallelLambda lambda, void* closure, int32_t num_task);
int32_t AnvilParallelBarrier(int32_t task_id, AnvilParallelEnv* env);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ANVIL_RUNTIME_C_ABI_H_ */
