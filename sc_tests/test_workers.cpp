// Worker processes keep the kind of a job's failure (apps/workers.h): bad input stays bad input
// (exit code 2 on the command line), a failed simulation check stays a model failure (exit code 1),
// anything else is an error with its message.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "nmpsim/apps/workers.h"
#include "nmpsim/base/model_failure.h"
#include "nmpsim/mapping/base_names.h"

namespace nmpsim::apps {
namespace {

template <class E>
std::string thrown_by_a_worker() {
  try {
    run_in_workers(2, 1, {"ok", "bad"}, [](int i) -> std::string {
      if (i == 1) throw E("noc: stall at cycle 7");
      return "fine";
    });
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST(Workers, AJobsFailureComesBackAsTheSameKind) {
  EXPECT_EQ(thrown_by_a_worker<base::ModelFailure>(), "noc: stall at cycle 7");
  EXPECT_EQ(thrown_by_a_worker<mapping::InputError>(), "noc: stall at cycle 7");
  EXPECT_EQ(thrown_by_a_worker<std::runtime_error>(), "noc: stall at cycle 7");
  EXPECT_EQ(run_in_workers(1, 1, {"ok"}, [](int) { return std::string("fine"); }).at(0), "fine");
}

}  // namespace
}  // namespace nmpsim::apps
