// Test helpers for the graph pass tests (not part of the library): golden text in, text out.
// expect_pass parses `before`, checks it is well formed, runs the pass, checks the result is
// well formed and equal to `after` — both as printed text (after re-printing `after` through the
// parser, so the golden text's indentation and comments do not matter) and structurally.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "anvil/graph/parser.h"
#include "anvil/graph/printer.h"
#include "anvil/graph/structural_equal.h"
#include "anvil/graph/verify.h"

namespace anvil::graph::passes::testing {

inline const PrintOptions kPrintAll{-1, false};

inline std::string printed(const IRModule& m) { return to_string(m, kPrintAll); }

// Fails the test (non-fatally) unless m is well formed; returns m.
inline const IRModule& verified(const IRModule& m) {
  std::string lines;
  for (const std::string& e : well_formed_errors(m)) lines += "  " + e + "\n";
  EXPECT_TRUE(lines.empty()) << "not well formed:\n" << lines << printed(m);
  return m;
}

template <typename Pass>
IRModule expect_pass(Pass&& pass, const std::string& before, const std::string& after) {
  IRModule in = verified(parse_module(before));
  IRModule out = verified(pass(in));
  IRModule want = parse_module(after);
  EXPECT_EQ(printed(out), printed(want));
  EXPECT_TRUE(structural_equal(out, want));
  return out;
}

}  // namespace anvil::graph::passes::testing
