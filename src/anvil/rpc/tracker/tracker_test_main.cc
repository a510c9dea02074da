// A stand-in for the `anvil-rpc` binary while testing the tracker alone:
//   anvil_rpc_tracker_test_bin tracker [flags] | query [flags]
#include <cstdio>
#include <cstring>

#include "anvil/rpc/cli.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "tracker") == 0) return anvil::rpc::tracker_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "query") == 0) return anvil::rpc::query_main(argc - 1, argv + 1);
  std::fprintf(stderr, "usage: %s tracker|query [--help]\n", argv[0]);
  return 2;
}
