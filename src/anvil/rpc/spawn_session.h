// In-process and child-process RPC sessions, with Apache TVM's names for them:
//
//   connect_local()   TVM's rpc.LocalSession: a session served by a thread of this process, with
//                     its own temporary work directory. Everything goes through the protocol
//                     (over a socketpair), so code written for a remote server runs unchanged,
//                     without one. The tvm.rpc.server.* functions of the session are bound to its
//                     directory (they shadow the registry for that session only).
//
// (spawn_session.cc; the file name says what both have in common: this process starts the
// server, as a thread or as a child.)
//   connect_popen()   TVM's rpc.PopenSession: starts a server binary as a child process that
//                     serves one session over two pipes.
//
// Both return an ordinary RPCSession (client.h). Closing it (or dropping the last reference to
// the session and its remote objects) shuts the server down: connect_local joins the serving
// thread and removes the directory; connect_popen waits for the child to exit (SIGKILL to its
// process group after PopenOptions::exit_timeout_ms) and reaps it, so no zombie is left. When
// the child dies mid-session, the next call fails at once with an error that says how it died
// ("the server process 123 was killed by signal 9 (Killed)").
#pragma once

#include <string>
#include <vector>

#include "anvil/rpc/client.h"

namespace anvil::rpc {

struct LocalConnectOptions {
  Limits limits;          // for both ends of the in-process connection
  std::string work_root;  // parent of the session's work directory ("" = $TMPDIR, else /tmp)
  bool verbose = false;   // log the session's INFO lines (uploads, module loads) to stderr
};

// IOError when the work directory cannot be created.
RPCSession connect_local(const LocalConnectOptions& options = {});

// How the child learns the descriptors of its two pipes (the ones it reads requests from and
// writes replies to).
enum class PipeArgs {
  kAnvil,  // "--pipe-fds READ,WRITE" appended: `anvil-rpc server --pipe-fds R,W`
  kTvm,    // "READ" "WRITE" appended as the last two arguments: TVM's rpc.CreatePipeClient
};

struct PopenOptions {
  PipeArgs pipe_args = PipeArgs::kAnvil;
  ConnectOptions connect;       // limits for the session
  int exit_timeout_ms = 5'000;  // after Shutdown, how long the child may take to exit
};

// Starts `command` (argv; argv[0] is looked up on PATH when it has no '/') with the pipe
// arguments appended, in its own process group, and connects to it (InitServer, no
// handshake). *child_pid, when given, receives the child's process id. IOError naming the
// command when it cannot be started; the child's exit status when it dies before answering.
// SIGPIPE is set to ignored if it was at its default (a write to a dead child must be an error,
// not the end of this process).
RPCSession connect_popen(const std::vector<std::string>& command, const PopenOptions& options = {},
                         int* child_pid = nullptr);

}  // namespace anvil::rpc
