/* Kernels that misbehave on purpose, for the RPC server's isolation tests: a crash or a hang in
 * user code must end that session only. Built as a plain shared library against the kernel ABI. */
#include <stddef.h>
#include <unistd.h>

#include "anvil/runtime/c_abi.h"

const uint32_t __anvil_abi_version = ANVIL_ABI_VERSION;
const char __anvil_function_names[] = "segfault\0hang\0answer\0";

/* segfault(): writes through a null pointer. */
int32_t __anvil_fn_segfault(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)args;
  (void)n;
  (void)ret;
  volatile int* p = NULL;
  *p = 42;
  return 0;
}

/* hang(): sleeps for a minute (a session timeout must cut it short). */
int32_t __anvil_fn_hang(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)args;
  (void)n;
  (void)ret;
  sleep(60);
  return 0;
}

/* answer() -> 42: a function taking no arguments. */
int32_t __anvil_fn_answer(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)args;
  (void)n;
  ret->kind = kAnvilInt;
  ret->v_int64 = 42;
  return 0;
}
