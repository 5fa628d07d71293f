// The mapping layer (plain C++): models, traces, placements, strategies, layer plans, flow model.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <numeric>
#include <set>

#include "mapping_test_util.h"
#include "nmpsim/flow/flow_model.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/data_files.h"
#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/placement.h"
#include "nmpsim/mapping/run_result.h"

namespace nmpsim::mapping {
namespace {

using namespace nmpsim::flow;  // the flow back end the tests run schedules on

Topology mesh(int w, int h) {
  Topology t;
  t.width = t.die().width = t.wafer().width = w;
  t.height = t.die().height = t.wafer().height = h;
  return t;
}

using testing::trace_for;

TEST(Models, PublishedShapes) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.top_k, 2);
  EXPECT_EQ(m.moe_layers, 32);
  // One SwiGLU expert: 3 x 4096 x 14336 weights = 176.2M; at FP16 352.3 MB.
  EXPECT_DOUBLE_EQ(m.expert_params(), 3.0 * 4096 * 14336);
  EXPECT_DOUBLE_EQ(m.expert_bytes(), 2 * 3.0 * 4096 * 14336);
  // GQA attention: q, o 4096x4096 each; k, v 4096x1024 each.
  EXPECT_DOUBLE_EQ(m.attention_params(), 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024);
  const ModelSpec d = model_preset("deepseek-v2-lite");
  EXPECT_EQ(d.experts, 64);
  EXPECT_EQ(d.top_k, 6);
  EXPECT_EQ(d.moe_layers, 26);
  EXPECT_EQ(d.dense_layers, 1);
  EXPECT_EQ(d.shared_experts, 2);
  EXPECT_DOUBLE_EQ(d.kv_bytes_per_token(), (512 + 64) * 2.0);  // MLA caches the compressed kv
  const ModelSpec q = model_preset("qwen2-57b-a14b");
  EXPECT_EQ(q.experts, 64);
  EXPECT_EQ(q.top_k, 8);
  EXPECT_EQ(q.moe_layers, 28);
  EXPECT_EQ(q.hidden, 3584);
  EXPECT_EQ(q.intermediate, 2560);
  for (const auto& n : {"deepseek-v3", "qwen3-235b-a22b", "dbrx", "mixtral-8x22b"})
    EXPECT_NO_THROW(model_preset(n).validate(n));
  EXPECT_THROW(model_preset("gpt-5"), InputError);
}

TEST(Models, ExpertSizesAtInt8AreMoEntwinesTableI) {
  // MoEntwine Table I, one routed expert at INT8 (3 x hidden x intermediate bytes), in MiB.
  const std::vector<std::pair<const char*, double>> table{
      {"deepseek-v3", 42}, {"qwen3-235b-a22b", 18}, {"deepseek-v2", 22.5}, {"dbrx", 189}, {"mixtral-8x22b", 288}};
  for (const auto& [name, mib] : table) {
    ModelSpec m = model_preset(name);
    m.weight_bytes = 1;
    EXPECT_DOUBLE_EQ(m.expert_bytes() / (1 << 20), mib) << name;
  }
  // DeepSeek-V2 (236B): 160 routed experts, top-6, 59 MoE layers of 60, 2 shared experts.
  const ModelSpec d = model_preset("deepseek-v2");
  EXPECT_EQ(d.experts, 160);
  EXPECT_EQ(d.top_k, 6);
  EXPECT_EQ(d.moe_layers, 59);
  EXPECT_EQ(d.dense_layers, 1);
  EXPECT_EQ(d.shared_experts, 2);
  EXPECT_EQ(d.hidden, 5120);
  EXPECT_EQ(d.intermediate, 1536);
}

TEST(Traces, LoadsEveryVendoredMixtralTraceByName) {
  const std::vector<std::string> names = vendored_trace_names();
  ASSERT_EQ(names.size(), 8u);  // the eight MT-Bench categories
  for (const std::string& name : names) {
    const RoutingTrace t = load_trace(name, 8, 2);
    EXPECT_EQ(t.source(), name);
    EXPECT_EQ(t.layers(), 32);
    EXPECT_GT(t.tokens(), 1000u);
    for (int l = 0; l < t.layers(); ++l) {
      const auto f = t.frequencies(l);
      EXPECT_NEAR(std::accumulate(f.begin(), f.end(), 0.0), 2.0, 1e-9);  // top-2: frequencies sum to k
    }
  }
  // The name is a shorthand for the compressed file under data/.
  EXPECT_EQ(resolve_trace_path("mtbench-math"), data_dir() + "/traces/mixtral/experts_math_mixtral.json.gz");
  EXPECT_EQ(resolve_trace_path("my/trace.json"), "my/trace.json");
}

TEST(Traces, GzipCompressedAndPlainFilesLoadTheSame) {
  const std::string text = "{\"0\": [[1, 2], [3, 0], [7, 6]], \"1\": [[0, 1], [5, 4], [2, 3]]}";
  const std::string plain = ::testing::TempDir() + "/trace_plain.json", packed = plain + ".gz";
  std::ofstream(plain) << text;
  gzFile f = gzopen(packed.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
  const RoutingTrace a = load_trace(plain, 8, 2), b = load_trace(packed, 8, 2);
  ASSERT_EQ(b.tokens(), 3u);
  for (int l = 0; l < 2; ++l)
    for (size_t i = 0; i < 3; ++i)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(a.experts_of(l, i)[k], b.experts_of(l, i)[k]);
  EXPECT_EQ(b.experts_of(1, 1)[0], 5);
  // A truncated gzip stream is an error naming the file, not a crash or a silent short read.
  const std::string cut = ::testing::TempDir() + "/trace_cut.json.gz";
  {
    std::ifstream in(packed, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  EXPECT_THROW(load_trace(cut, 8, 2), InputError);
  std::remove(plain.c_str());
  std::remove(packed.c_str());
  std::remove(cut.c_str());
}

std::string trace_error(const std::string& text, int experts = 8, int top_k = 2) {
  const std::string path = ::testing::TempDir() + "/bad_trace.json";
  std::ofstream(path) << text;
  try {
    load_trace(path, experts, top_k);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Traces, MalformedTracesAreRejectedClearly) {
  EXPECT_NE(trace_error("{\"0\": [[1, 2], [3").find("malformed JSON"), std::string::npos);
  EXPECT_NE(trace_error("{\"0\": [[1, 8]]}").find("layer 0 token 0: expert id 8 out of range [0, 8)"),
            std::string::npos);
  EXPECT_NE(trace_error("{\"0\": [[1, 2, 3]]}").find("expected 2 expert ids (top-k)"), std::string::npos);
  EXPECT_NE(trace_error("{\"0\": [[1, 1]]}").find("appears twice"), std::string::npos);
  EXPECT_NE(
      trace_error("{\"0\": [[1, 2]], \"2\": [[1, 2]]}").find("unexpected key \"2\" (layers are keys \"0\" to \"1\")"),
      std::string::npos);
  EXPECT_NE(trace_error("{\"0\": [[1, 2]], \"1\": [[1, 2], [3, 4]]}").find("layer 1 has 2 tokens"), std::string::npos);
  EXPECT_NE(trace_error("[1, 2]").find("expected an object"), std::string::npos);
  EXPECT_NE(trace_error("{\"0\": [[-1, 2]]}").find("out of range"), std::string::npos);
  EXPECT_NE(trace_error("{\"0\": [[\"a\", 2]]}").find("expert id: expected an integer, got the string \"a\""),
            std::string::npos);
  for (const std::string& e : {trace_error("{\"0\": [[1, 8]]}"), trace_error("{")})
    EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(Traces, SyntheticSkewCoactivationCorrelationAndSeeds) {
  SyntheticTraceConfig c;
  c.layers = 4;
  c.experts = 16;
  c.top_k = 2;
  c.tokens = 20000;
  c.coactivation = 0;
  c.layer_correlation = 0;
  c.zipf_s = 0;
  const RoutingTrace flat = synthetic_trace(c);
  for (double f : flat.frequencies(0)) EXPECT_NEAR(f, 2.0 / 16, 0.01);
  c.zipf_s = 1.5;
  const RoutingTrace skewed = synthetic_trace(c);
  const auto fs = skewed.frequencies(1);
  EXPECT_GT(*std::max_element(fs.begin(), fs.end()), 0.5);  // the hottest expert takes > 25% of choices
  // Co-activation: with coactivation 1 every token's second choice is the partner of its first,
  // so the number of distinct (first, second) pairs is at most the number of experts.
  c.zipf_s = 0.5;
  c.coactivation = 1.0;
  const RoutingTrace co = synthetic_trace(c);
  std::set<std::pair<int, int>> pairs;
  for (size_t t = 0; t < co.tokens(); ++t) pairs.insert({co.experts_of(2, t)[0], co.experts_of(2, t)[1]});
  EXPECT_LE(pairs.size(), 16u);
  // Layer correlation 1: a token's first expert in layer l+1 is a fixed function of its first in layer l.
  c.coactivation = 0;
  c.layer_correlation = 1.0;
  const RoutingTrace lc = synthetic_trace(c);
  std::map<int, std::set<int>> succ;
  for (size_t t = 0; t < lc.tokens(); ++t) succ[lc.experts_of(0, t)[0]].insert(lc.experts_of(1, t)[0]);
  for (const auto& [e, next] : succ) EXPECT_EQ(next.size(), 1u) << e;
  // Seeds.
  c.seed = 9;
  const RoutingTrace a = synthetic_trace(c), b = synthetic_trace(c);
  c.seed = 10;
  const RoutingTrace d = synthetic_trace(c);
  EXPECT_TRUE(std::equal(a.experts_of(3, 0), a.experts_of(3, 0) + 2 * a.tokens(), b.experts_of(3, 0)));
  EXPECT_FALSE(std::equal(a.experts_of(3, 0), a.experts_of(3, 0) + 2 * a.tokens(), d.experts_of(3, 0)));
  // Every token has top_k distinct ids, even with extreme skew.
  c.zipf_s = 10;
  const RoutingTrace extreme = synthetic_trace(c);
  for (size_t t = 0; t < extreme.tokens(); ++t) EXPECT_NE(extreme.experts_of(0, t)[0], extreme.experts_of(0, t)[1]);
}

TEST(Placements, StrategiesSumToOneAndHaveTheirShape) {
  const Topology t = mesh(4, 8);
  for (const char* name : {"mixtral-8x7b", "deepseek-v2-lite", "qwen2-57b-a14b"}) {
    const ModelSpec m = model_preset(name);
    const RoutingTrace tr = trace_for(m, 0.8, 512);
    const Placement tp = make_tp(m, 32), ep = make_ep(m, 32), cb = make_cb(m, t, tr, default_cb_regions(m, t));
    for (const Placement* p : {&tp, &ep, &cb}) {
      EXPECT_NO_THROW(p->validate(p->strategy)) << name;
      EXPECT_NO_THROW(p->check_against(m, p->strategy));
      EXPECT_EQ(p->experts, m.experts);
    }
    for (int e = 0; e < m.experts; ++e) {
      int holders = 0;
      for (int n = 0; n < 32; ++n) holders += ep.at(0, e, n) > 0;
      EXPECT_EQ(holders, m.experts >= 32 ? 1 : 32 / m.experts) << name << " expert " << e;
    }
  }
}

TEST(Placements, HybridComputeBalancedUsesRegionsAndBalancesLoad) {
  const Topology t = mesh(4, 8);
  const ModelSpec m = model_preset("qwen2-57b-a14b");
  const RoutingTrace tr = trace_for(m, 1.0, 4000);
  const int R = default_cb_regions(m, t);
  EXPECT_EQ(R, 8);
  const Placement cb = make_cb(m, t, tr, R);
  const std::vector<int> region = mesh_regions(t, R);
  for (int n = 0; n < 32; ++n) EXPECT_EQ(region[n], (t.y(n) / 2) * 2 + t.x(n) / 2);  // 2x2 regions
  const auto f = tr.frequencies(0);
  std::vector<double> load(static_cast<size_t>(R), 0.0);
  std::vector<int> count(static_cast<size_t>(R), 0);
  for (int e = 0; e < m.experts; ++e) {
    std::set<int> regions;
    for (int n = 0; n < 32; ++n)
      if (cb.at(0, e, n) > 0) {
        regions.insert(region[n]);
        EXPECT_DOUBLE_EQ(cb.at(0, e, n), 0.25);  // TP inside a 2x2 region
      }
    ASSERT_EQ(regions.size(), 1u);  // each expert in exactly one region
    load[*regions.begin()] += f[e];
    ++count[*regions.begin()];
  }
  for (int r = 0; r < R; ++r) EXPECT_EQ(count[r], 8);
  const double mean = std::accumulate(load.begin(), load.end(), 0.0) / R;
  // Greedy LPT: no region exceeds the mean by more than the hottest expert's frequency.
  for (double l : load) EXPECT_LE(l, mean + *std::max_element(f.begin(), f.end()));
}

TEST(Placements, JsonRoundTripAndValidationErrors) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  Placement p = make_ep(m, 16);
  const int map[16] = {3, 1, 2, 0, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  for (int n = 0; n < 16; ++n) p.node_map[n] = PhysicalNode(map[n]);
  const Placement q = placement_from_json(placement_to_json(p), "x.json");
  EXPECT_EQ(q.share, p.share);
  EXPECT_EQ(q.node_map, p.node_map);
  EXPECT_EQ(q.physical_row(0, 0)[3], 0.5);  // expert 0 on logical nodes 0, 1 -> physical 3, 1
  auto err = [&](nlohmann::json j) {
    try {
      placement_from_json(j, "p.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  nlohmann::json j = placement_to_json(p);
  j["layers"][2][5][0][1] = 0.4;  // expert 5's shares now sum to 0.9
  EXPECT_NE(err(j).find("p.json: layer 2 expert 5: shares sum to 0.9"), std::string::npos) << err(j);
  j = placement_to_json(p);
  j["layers"][0][1][0][0] = 16;
  EXPECT_NE(err(j).find("node 16 out of range"), std::string::npos);
  j = placement_to_json(p);
  j["node_map"][0] = 1;
  EXPECT_NE(err(j).find("two logical nodes"), std::string::npos);
  j = placement_to_json(p);
  j["layers"][0][0][0][1] = 1.5;
  EXPECT_NE(err(j).find("outside [0, 1]"), std::string::npos);
  j = placement_to_json(p);
  j["layers"].erase(31);
  EXPECT_NE(placement_from_json(j, "p").layers(), m.moe_layers);
  EXPECT_THROW(placement_from_json(j, "p").check_against(m, "p"), InputError);
}

TEST(Placements, MemoryCapacityIsChecked) {
  const ModelSpec m = model_preset("qwen2-57b-a14b");
  const Topology t = mesh(4, 4);
  const Placement tp = make_tp(m, 16);
  const MemoryDemand d = memory_demand(tp, m, 16, 64, 1024);
  // TP: every node holds 1/16 of all weights (57B parameters at FP16 = ~114 GB) plus KV cache.
  double weights = m.moe_layers * (m.experts * m.expert_params() + m.shared_params() + m.attention_params()) * 2;
  EXPECT_NEAR(
      d.bytes_per_node[0],
      weights / 16 + m.moe_layers * m.gate_params() * 2 + m.moe_layers * 64.0 * 1024 * m.kv_bytes_per_token() / 16,
      1e6);
  EXPECT_NO_THROW(check_memory(tp, m, t, 8.0 * (1ULL << 30), 16, 64, 1024));
  try {
    check_memory(tp, m, t, 4.0 * (1ULL << 30), 16, 64, 1024);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("placement 'tp' of qwen2-57b-a14b needs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("which has 4.00 GiB"), std::string::npos) << e.what();
  }
}

TEST(LayerPlans, RingsAreHamiltonianCyclesOfMeshNeighbours) {
  for (auto [w, h] : {std::pair{4, 8}, {2, 2}, {4, 4}, {6, 5}, {5, 6}, {8, 8}}) {
    const Topology t = mesh(w, h);
    const Groups g = make_groups(t, 0);
    ASSERT_EQ(g.size(), 1);
    const auto& r = g.ring[0];
    EXPECT_EQ(std::set<int>(r.begin(), r.end()).size(), static_cast<size_t>(w * h));
    for (size_t i = 0; i < r.size(); ++i)
      EXPECT_EQ(t.hops(r[i], r[(i + 1) % r.size()]), 1) << w << "x" << h << " at " << i;
  }
  const Topology t = mesh(4, 8);
  const Groups g = make_groups(t, 4);  // eight 2x2 groups
  EXPECT_EQ(g.size(), 8);
  for (const auto& r : g.ring) {
    EXPECT_EQ(r.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(t.hops(r[i], r[(i + 1) % 4]), 1);
  }
  EXPECT_THROW(make_groups(t, 5), InputError);
}

TEST(LayerPlans, TokenWorkAddsUpAndDispatchEqualsCombine) {
  const Topology t = mesh(4, 8);
  for (const char* name : {"mixtral-8x7b", "deepseek-v2-lite", "qwen2-57b-a14b"}) {
    const ModelSpec m = model_preset(name);
    const RoutingTrace tr = trace_for(m, 0.8, 300);
    for (const Placement& p : {make_tp(m, 32), make_ep(m, 32), make_cb(m, t, tr, default_cb_regions(m, t))}) {
      const auto phys = physical_shares(p);
      for (int tp : {0, 8}) {
        const Groups g = make_groups(t, tp);
        const RunShape shape{48, 512};
        const LayerPlan plan = plan_layer(m, phys, m.dense_layers + 3, tr, 17, g, shape);
        const double work = std::accumulate(plan.routed_token_work.begin(), plan.routed_token_work.end(), 0.0);
        EXPECT_NEAR(work, 48.0 * m.top_k, 1e-9) << name << " " << p.strategy;  // B x top-k
        EXPECT_DOUBLE_EQ(plan.dispatch_total(), plan.combine_total()) << name << " " << p.strategy;
        double homes = std::accumulate(plan.home_bytes.begin(), plan.home_bytes.end(), 0.0);
        EXPECT_DOUBLE_EQ(homes, 48 * m.token_bytes());
      }
    }
  }
  // TP: every token travels from its home to every other node exactly once.
  const ModelSpec m = model_preset("mixtral-8x7b");
  SyntheticTraceConfig c;
  c.layers = 32;
  c.tokens = 64;
  const RoutingTrace tr = synthetic_trace(c);
  const LayerPlan tp = plan_layer(m, physical_shares(make_tp(m, 32)), 0, tr, 0, make_groups(t, 0), RunShape{64, 0});
  EXPECT_DOUBLE_EQ(tp.dispatch_total(), 64.0 * 31 * m.token_bytes());
}

TEST(FlowModel, SingleMessageAndLinkLoads) {
  AnalyticalHardware hw = testing::reference_hardware();
  hw.topology = mesh(4, 4);
  hw.topology.links[0].gbytes_per_s = 50;
  hw.topology.links[0].latency_ns = 1;
  hw.flit_bytes = 50;
  std::vector<double> m(256, 0.0);
  m[0 * 16 + 15] = 1e6;  // (0,0) -> (3,3): 6 hops
  // bytes / 50 GB/s + head latency (1 + R) + 6 x (R + 1) cycles at 1 GHz, R = 2.
  EXPECT_NEAR(traffic_seconds(hw, m), 1e6 / 50e9 + (3 + 6 * 3) * 1e-9, 1e-12);
  const auto loads = link_loads(hw.topology, m);
  EXPECT_EQ(loads[0 * 4 + 1], 1e6);  // (0,0) east
  EXPECT_EQ(loads[3 * 4 + 2], 1e6);  // (3,0) south
  EXPECT_EQ(loads[0 * 4 + 2], 0.0);  // XY: never south from (0,0)
  EXPECT_EQ(std::accumulate(loads.begin(), loads.end(), 0.0), 6e6);
  EXPECT_NEAR(compute_seconds(hw, 1e9, 0), hw.startup_s + 1e9 / hw.peak_flops, 1e-15);
  EXPECT_NEAR(compute_seconds(hw, 1, 1e6), hw.startup_s + hw.memory_first_access_s + 1e6 / hw.memory_bytes_per_s,
              1e-15);
}

}  // namespace
}  // namespace nmpsim::mapping
