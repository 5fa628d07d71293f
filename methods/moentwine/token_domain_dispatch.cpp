#include "nmpsim/methods/moentwine/token_domain_dispatch.h"

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::moentwine {

using mapping::InputError;

TokenDomainDispatch::TokenDomainDispatch(const mapping::Groups& tp, std::vector<std::vector<int>> token_rings,
                                         std::vector<int> domain_of, const std::string& where)
    : token_ring_(token_rings.empty() ? tp.ring : std::move(token_rings)), domain_of_(std::move(domain_of)) {
  const int n = static_cast<int>(tp.group_of.size());
  if (static_cast<int>(domain_of_.size()) != n)
    throw InputError(where + ": token_domain: expected a domain for each of the " + std::to_string(n) + " nodes");
  mapping::index_rings(token_ring_, n, where, "token_rings", token_ring_of_, nullptr);
  const int domains = static_cast<int>(token_ring_[0].size());
  domain_member_.assign(token_ring_.size(), std::vector<int>(static_cast<size_t>(domains), -1));
  for (int v = 0; v < n; ++v) {
    const int d = domain_of_[static_cast<size_t>(v)];
    const std::string why = where + ": token_domain: every domain must hold exactly one member of every token ring " +
                            "(node " + std::to_string(v) + ", domain " + std::to_string(d) + ")";
    if (d < 0 || d >= domains) throw InputError(why);
    int& member = domain_member_[static_cast<size_t>(token_ring_of_[static_cast<size_t>(v)])][static_cast<size_t>(d)];
    if (member >= 0) throw InputError(why);
    member = v;
  }
}

nlohmann::json token_domain_dispatch_json(const std::vector<int>& domain_of,
                                          const std::vector<std::vector<int>>& token_rings) {
  nlohmann::json options = {{"token_domain", domain_of}};
  if (!token_rings.empty()) options["token_rings"] = token_rings;
  return {{"name", "token-domains"}, {"options", options}};
}

namespace {

/// A list of `what` integers in [0, hi], or a one-line error naming the field.
std::vector<int> int_list(const base::JsonFields& f, const char* key, int hi) {
  const nlohmann::json& v = f.raw(key);
  if (!v.is_array()) f.fail(key, "expected a list of integers, got " + base::describe_json(v));
  std::vector<int> out;
  for (const auto& x : v) {
    if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() > hi)
      f.fail(key, "entries must be integers in [0, " + std::to_string(hi) + "], got " + base::describe_json(x));
    out.push_back(x.get<int>());
  }
  return out;
}

std::unique_ptr<mapping::DispatchPlanner> create(const nlohmann::json& options, const mapping::Topology&,
                                                 const mapping::Groups& groups, const std::string& where) {
  const base::JsonFields f(options, where, "");
  const int n = static_cast<int>(groups.group_of.size());
  std::vector<int> domain_of = int_list(f, "token_domain", n - 1);
  std::vector<std::vector<int>> rings;
  if (f.has("token_rings")) {
    const nlohmann::json& r = f.raw("token_rings");
    if (!r.is_array() || r.empty()) f.fail("token_rings", "expected a non-empty list of rings of node ids");
    for (const auto& ring : r) {
      if (!ring.is_array()) f.fail("token_rings", "expected a list of node ids, got " + base::describe_json(ring));
      rings.emplace_back();
      for (const auto& x : ring) {
        if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() >= n)
          f.fail("token_rings", "node ids must be integers in [0, " + std::to_string(n - 1) + "]");
        rings.back().push_back(x.get<int>());
      }
    }
  }
  f.no_unknown_keys();
  return std::make_unique<TokenDomainDispatch>(groups, std::move(rings), std::move(domain_of), where);
}

}  // namespace

mapping::PlannerFactory token_domain_planner() {
  mapping::PlannerFactory f;
  f.name = "token-domains";
  f.description =
      "full token domains: tokens gathered over token rings, sent to an expert from the ring's member in its domain";
  f.options = {{"token_domain", "(required)", "each node's domain: one member of every token ring per domain"},
               {"token_rings", "the TP rings", "rings of the token all-gather and of the partials' reduce-scatter"}};
  f.create = create;
  return f;
}

const std::vector<int>& domains_of(const mapping::DispatchPlanner* planner) {
  static const std::vector<int> none;
  const auto* d = dynamic_cast<const TokenDomainDispatch*>(planner);
  return d ? d->domain_of() : none;
}

}  // namespace nmpsim::methods::moentwine
