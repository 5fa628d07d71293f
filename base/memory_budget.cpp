#include "nmpsim/base/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "nmpsim/base/errors.h"

namespace nmpsim::base {

namespace {

uint64_t physical_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : uint64_t{8} << 30;
}

uint64_t limit_bytes(int resource) {
  rlimit l{};
  if (getrlimit(resource, &l) != 0 || l.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return static_cast<uint64_t>(l.rlim_cur);
}

/// $NMPSIM_MEMORY_BUDGET_MIB, or 0 when unset. Throws InputError when set to anything but a count.
uint64_t env_budget() {
  const char* v = std::getenv("NMPSIM_MEMORY_BUDGET_MIB");
  if (!v || !*v) return 0;
  const std::string s = v;
  if (s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos || std::stoull(s) == 0)
    throw InputError("NMPSIM_MEMORY_BUDGET_MIB: expected a positive number of MiB, got '" + shown(s) + "'");
  return std::stoull(s) << 20;
}

}  // namespace

uint64_t memory_budget_bytes() {
  if (const uint64_t e = env_budget()) return e;
  const uint64_t m = std::min({physical_bytes(), limit_bytes(RLIMIT_AS), limit_bytes(RLIMIT_DATA)});
  return m / 4 * 3;
}

std::string bytes_text(double bytes) {
  char buf[32];
  if (bytes >= double(uint64_t{1} << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(uint64_t{1} << 30));
  else
    std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / double(uint64_t{1} << 20));
  return buf;
}

std::string memory_budget_source() {
  if (env_budget()) return "$NMPSIM_MEMORY_BUDGET_MIB";
  const uint64_t phys = physical_bytes(), lim = std::min(limit_bytes(RLIMIT_AS), limit_bytes(RLIMIT_DATA));
  return lim < phys ? "3/4 of this process's memory limit (" + bytes_text(double(lim)) + ")"
                    : "3/4 of this machine's " + bytes_text(double(phys));
}

}  // namespace nmpsim::base
