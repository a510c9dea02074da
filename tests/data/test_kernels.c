/* Hand-written kernels that follow the Anvil kernel ABI (src/anvil/runtime/c_abi.h), built as a
 * plain shared library with no link to the runtime. Runtime tests load it to check argument
 * passing, error reporting, the runtime API table and the thread pool from kernel code. */
#include <stdio.h>
#include <string.h>

#include "anvil/runtime/c_abi.h"

const AnvilRuntimeApi* __anvil_runtime_api = 0;
/* Built a second time with TEST_ABI_VERSION=ANVIL_ABI_VERSION+1 to test the version check. */
#ifndef TEST_ABI_VERSION
#define TEST_ABI_VERSION ANVIL_ABI_VERSION
#endif
const uint32_t __anvil_abi_version = TEST_ABI_VERSION;
const char __anvil_function_names[] = "add_one\0vector_add\0scale_parallel\0sum_ints\0fail_always\0describe\0";

static int fail(int32_t kind, const char* message) {
  if (__anvil_runtime_api) __anvil_runtime_api->error_set(kind, message);
  return -1;
}

static int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static int check_float_tensor(const AnvilValue* v, const char* what) {
  char message[160];
  if (v->kind != kAnvilTensor) {
    snprintf(message, sizeof message, "%s: expected a tensor argument, got kind %d", what, v->kind);
    return fail(kAnvilErrorType, message);
  }
  if (v->v_tensor->dtype.code != kDLFloat || v->v_tensor->dtype.bits != 32) {
    snprintf(message, sizeof message, "%s: expected a float32 tensor", what);
    return fail(kAnvilErrorType, message);
  }
  if (v->v_tensor->strides != NULL) {
    snprintf(message, sizeof message, "%s: expected a compact tensor", what);
    return fail(kAnvilErrorValue, message);
  }
  return 0;
}

static float* fdata(const DLTensor* t) { return (float*)((char*)t->data + t->byte_offset); }

/* add_one(x, y): y = x + 1 */
int32_t __anvil_fn_add_one(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)ret;
  if (n != 2) return fail(kAnvilErrorType, "add_one expects 2 arguments (x, y)");
  if (check_float_tensor(&args[0], "add_one x") || check_float_tensor(&args[1], "add_one y")) return -1;
  int64_t count = numel(args[0].v_tensor);
  if (count != numel(args[1].v_tensor)) return fail(kAnvilErrorValue, "add_one: x and y differ in size");
  const float* x = fdata(args[0].v_tensor);
  float* y = fdata(args[1].v_tensor);
  for (int64_t i = 0; i < count; ++i) y[i] = x[i] + 1.0f;
  return 0;
}

/* vector_add(a, b, c): c = a + b */
int32_t __anvil_fn_vector_add(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)ret;
  if (n != 3) return fail(kAnvilErrorType, "vector_add expects 3 arguments (a, b, c)");
  for (int i = 0; i < 3; ++i)
    if (check_float_tensor(&args[i], "vector_add")) return -1;
  int64_t count = numel(args[2].v_tensor);
  if (numel(args[0].v_tensor) != count || numel(args[1].v_tensor) != count)
    return fail(kAnvilErrorValue, "vector_add: a, b and c must have the same size");
  const float* a = fdata(args[0].v_tensor);
  const float* b = fdata(args[1].v_tensor);
  float* c = fdata(args[2].v_tensor);
  for (int64_t i = 0; i < count; ++i) c[i] = a[i] + b[i];
  return 0;
}

struct ScaleClosure {
  const float* x;
  float* y;
  float alpha;
  int64_t count;
};

static int32_t scale_task(int32_t task_id, AnvilParallelEnv* env, void* closure) {
  struct ScaleClosure* c = (struct ScaleClosure*)closure;
  int64_t chunk = (c->count + env->num_task - 1) / env->num_task;
  int64_t begin = task_id * chunk;
  int64_t end = begin + chunk < c->count ? begin + chunk : c->count;
  for (int64_t i = begin; i < end; ++i) c->y[i] = c->x[i] * c->alpha;
  return 0;
}

/* scale_parallel(x, y, alpha): y = alpha * x, split over the runtime's thread pool */
int32_t __anvil_fn_scale_parallel(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)ret;
  if (n != 3) return fail(kAnvilErrorType, "scale_parallel expects 3 arguments (x, y, alpha)");
  if (check_float_tensor(&args[0], "scale_parallel x") || check_float_tensor(&args[1], "scale_parallel y")) return -1;
  if (args[2].kind != kAnvilFloat && args[2].kind != kAnvilInt)
    return fail(kAnvilErrorType, "scale_parallel: alpha must be a number");
  if (__anvil_runtime_api == 0) return fail(kAnvilErrorRuntime, "scale_parallel: runtime API not linked");
  struct ScaleClosure c;
  c.x = fdata(args[0].v_tensor);
  c.y = fdata(args[1].v_tensor);
  c.alpha = args[2].kind == kAnvilFloat ? (float)args[2].v_float64 : (float)args[2].v_int64;
  c.count = numel(args[0].v_tensor);
  if (c.count != numel(args[1].v_tensor)) return fail(kAnvilErrorValue, "scale_parallel: x and y differ in size");
  return __anvil_runtime_api->parallel_launch(scale_task, &c, 0);
}

/* sum_ints(a, b) -> a + b */
int32_t __anvil_fn_sum_ints(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  if (n != 2 || args[0].kind != kAnvilInt || args[1].kind != kAnvilInt)
    return fail(kAnvilErrorType, "sum_ints expects 2 int arguments");
  ret->kind = kAnvilInt;
  ret->v_int64 = args[0].v_int64 + args[1].v_int64;
  return 0;
}

/* fail_always(): reports a ValueError */
int32_t __anvil_fn_fail_always(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)args;
  (void)n;
  (void)ret;
  return fail(kAnvilErrorValue, "fail_always: deliberate failure for tests");
}

/* describe(x) -> float: the sum of a float32 tensor's elements (checks strides/offset handling) */
int32_t __anvil_fn_describe(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  if (n != 1 || check_float_tensor(&args[0], "describe")) return n != 1 ? fail(kAnvilErrorType, "describe expects 1 argument") : -1;
  const float* x = fdata(args[0].v_tensor);
  double sum = 0;
  for (int64_t i = 0; i < numel(args[0].v_tensor); ++i) sum += x[i];
  ret->kind = kAnvilFloat;
  ret->v_float64 = sum;
  return 0;
}
