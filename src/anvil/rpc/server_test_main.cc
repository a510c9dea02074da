// main() of anvil_rpc_server_test_bin: the RPC server alone, for tests that need a real process.
#include "anvil/rpc/cli.h"

int main(int argc, char** argv) { return anvil::rpc::server_main(argc, argv); }
