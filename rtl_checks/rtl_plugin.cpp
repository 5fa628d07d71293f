// Routers built out of tree into plugins (nmpsim_add_router_rtl after find_package(nmpsim); docs/RTL.md
// "Out of tree"): loaded with dlopen, their entry points found by name, each router registered like
// one built into nmpsim. A plugin carries its own Verilated model and Verilator runtime and shares
// only rtl_pin_io.h's interface with nmpsim, checked by its version number.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <functional>
#include <regex>
#include <set>
#include <vector>

#include "nmpsim/noc/noc_config.h"
#include "nmpsim/rtl_checks/described_router.h"

namespace nmpsim::rtl {

namespace {
/// The plugin's routers, checked before any is registered: names, entries, clashes.
std::vector<PluginRouter> plugin_routers(void* h, const std::function<void(const std::string&)>& bad) {
  auto abi = reinterpret_cast<NmpsimRtlPluginAbiFn>(::dlsym(h, "nmpsim_rtl_plugin_abi"));
  auto routers = reinterpret_cast<NmpsimRtlPluginRoutersFn>(::dlsym(h, "nmpsim_rtl_plugin_routers"));
  if (abi == nullptr || routers == nullptr)
    bad("not an nmpsim router plugin (no nmpsim_rtl_plugin_abi / nmpsim_rtl_plugin_routers; build it with "
        "nmpsim_add_router_rtl)");
  if (abi() != kRtlPluginAbi)
    bad("built for router plugin interface " + std::to_string(abi()) + ", this nmpsim has " +
        std::to_string(kRtlPluginAbi) + " (rebuild it against this nmpsim)");
  int count = 0;
  const PluginRouter* list = routers(&count);
  if (list == nullptr || count < 1) bad("it lists no routers");
  if (count > 64) bad("it lists " + std::to_string(count) + " routers, more than 64");
  described_routers();  // the built-in ones first, so that a clash names the plugin
  static const std::regex name_re("^[A-Za-z][A-Za-z0-9_]{0,63}$");
  std::vector<PluginRouter> out(list, list + count);
  for (const PluginRouter& r : out) {
    if (r.name == nullptr || r.description_json == nullptr || r.make == nullptr) bad("a router entry is empty");
    if (!std::regex_match(r.name, name_re)) bad("a router name is not letters, digits and _");
    if (std::string(r.name) == "nmp" || find_described_router(r.name) != nullptr)
      bad(std::string("router '") + r.name + "' is already registered");
    RouterDescription::parse(r.name, r.description_json);  // its errors name the router's description
  }
  return out;
}
}  // namespace

std::string load_rtl_plugin(const std::string& path) {
  static std::set<std::string> loaded;  // by canonical path
  auto bad = [&](const std::string& why) { throw noc::ConfigError("--rtl-plugin " + path + ": " + why); };
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) bad("no such file");
  if (!S_ISREG(st.st_mode)) bad("not a regular file");
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) bad("cannot resolve the path");
  const std::string canonical(real);
  std::free(real);
  if (loaded.count(canonical)) return canonical;
  // RTLD_LOCAL: the plugin's symbols (its Verilator runtime) stay its own; RTLD_NOW: a missing
  // symbol is an error here, not in the middle of a run.
  void* h = ::dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    bad(std::string("cannot load it: ") + (e ? e : "unknown error"));
  }
  std::vector<PluginRouter> routers;
  try {
    routers = plugin_routers(h, bad);
  } catch (const noc::ConfigError& e) {
    ::dlclose(h);
    if (std::string(e.what()).rfind("--rtl-plugin ", 0) == 0) throw;
    bad(e.what());
  }
  for (const PluginRouter& r : routers) {
    auto make = r.make;
    const std::string name = r.name;
    register_described_router(r.name, r.description_json, [make, name](const StrapValues& s) {
      RtlPinIo* io = make(s);
      if (io == nullptr) throw noc::ConfigError("RTL router '" + name + "' (a plugin): its model could not be made");
      return std::unique_ptr<RtlPinIo>(io);
    });
  }
  loaded.insert(canonical);
  // The handle stays open for the life of the process: the routers' code lives in it.
  return canonical;
}

}  // namespace nmpsim::rtl
