// Reading a routing trace's JSON text straight into expert ids (nlohmann's SAX interface): no JSON
// document is built, so a trace costs its text plus 2 bytes per expert id (docs/FORMATS.md "Limits").
#include <map>
#include <set>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::mapping {

namespace {

/// Describes a scalar the way describe_json does, from the SAX callback's value.
std::string scalar_text(const nlohmann::json& v) { return describe_json(v); }

class TraceSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  TraceSax(const std::string& where, int experts, int top_k) : where_(where), experts_(experts), top_k_(top_k) {}

  bool null() override { return scalar(nullptr); }
  bool boolean(bool v) override { return scalar(v); }
  bool number_integer(number_integer_t v) override {
    if (depth_ == 3) return expert(v < 0 || v >= experts_, std::to_string(v), static_cast<int>(v));
    return scalar(v);
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (depth_ == 3)
      return expert(v >= static_cast<number_unsigned_t>(experts_), std::to_string(v), static_cast<int>(v % 65536));
    return scalar(v);
  }
  bool number_float(number_float_t v, const string_t& text) override {
    check_underflow(v, text, where_);
    return scalar(v);
  }
  bool string(string_t& v) override { return scalar(v); }
  bool binary(binary_t&) override { return scalar(nullptr); }

  bool start_object(std::size_t) override {
    if (depth_ != 0) return scalar(nlohmann::json::object());
    ++depth_;
    return true;
  }
  bool key(string_t& k) override {
    const bool digits = !k.empty() && k.size() <= 6 && k.find_first_not_of("0123456789") == std::string::npos &&
                        (k == "0" || k[0] != '0');
    if (!digits)
      throw InputError(where_ + ": unexpected key \"" + one_line(k.substr(0, 40)) +
                       "\" (layers are keys \"0\", \"1\", ... up to the number of layers less one)");
    layer_ = std::stoi(k);
    if (!layers_.emplace(layer_, Layer{}).second)
      throw InputError(where_ + ": malformed JSON: key \"" + k + "\" appears twice in an object");
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0)
      throw InputError(where_ + ": expected an object mapping layer numbers to token lists, got an array");
    if (depth_ == 3) return scalar(nlohmann::json::array());
    ++depth_;
    if (depth_ == 3) {  // a token
      Layer& l = layers_[layer_];
      l.ids.resize(l.ids.size() + static_cast<size_t>(top_k_));
      count_ = 0;
      total_ids_ += static_cast<size_t>(top_k_);
      if (total_ids_ * sizeof(uint16_t) > kMaxTraceBytes)
        throw InputError(where_ + ": more than " + std::to_string(kMaxTraceBytes >> 20) +
                         " MiB of expert ids; traces are limited to " + std::to_string(kMaxTraceBytes >> 20) + " MiB");
    }
    return true;
  }
  bool end_array() override {
    if (depth_ == 3) {
      Layer& l = layers_[layer_];
      if (count_ != top_k_)
        throw InputError(at() + "expected " + std::to_string(top_k_) + " expert ids (top-k), got an array of " +
                         std::to_string(count_) + " elements");
      ++l.tokens;
    } else if (layers_[layer_].tokens == 0) {
      throw InputError(where_ + ": layer " + std::to_string(layer_) +
                       ": expected a non-empty list of tokens, got an "
                       "array of 0 elements");
    }
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string msg = e.what();
    const auto pos = msg.find("] ");  // drop nlohmann's "[json.exception.parse_error.101] " prefix
    throw InputError(where_ + ": malformed JSON: " + (pos == std::string::npos ? msg : msg.substr(pos + 2)));
  }

  RoutingTrace take() {
    if (layers_.empty())
      throw InputError(where_ + ": expected an object mapping layer numbers to token lists, got an object of 0 keys");
    const int count = static_cast<int>(layers_.size());
    for (const auto& [l, layer] : layers_)
      if (l >= count)
        throw InputError(where_ + ": unexpected key \"" + std::to_string(l) + "\" (layers are keys \"0\" to \"" +
                         std::to_string(count - 1) + "\")");
    const size_t tokens = layers_[0].tokens;
    for (const auto& [l, layer] : layers_)
      if (layer.tokens != tokens)
        throw InputError(where_ + ": layer " + std::to_string(l) + " has " + std::to_string(layer.tokens) +
                         " tokens, layer 0 has " + std::to_string(tokens));
    check_trace_size(count, tokens, top_k_, where_);
    RoutingTrace t(count, experts_, top_k_, tokens, where_);
    for (auto& [l, layer] : layers_) {
      if (tokens) std::copy(layer.ids.begin(), layer.ids.end(), t.mutable_experts_of(l, 0));
      std::vector<uint16_t>().swap(layer.ids);  // the copy's peak is one layer, not the whole trace
    }
    return t;
  }

 private:
  struct Layer {
    std::vector<uint16_t> ids;
    size_t tokens = 0;
  };

  std::string at() const {
    return where_ + ": layer " + std::to_string(layer_) + " token " + std::to_string(layers_.at(layer_).tokens) + ": ";
  }
  /// A value where a structure was expected.
  bool scalar(const nlohmann::json& v) {
    if (depth_ == 0)
      throw InputError(where_ + ": expected an object mapping layer numbers to token lists, got " + scalar_text(v));
    if (depth_ == 1)
      throw InputError(where_ + ": layer " + std::to_string(layer_) + ": expected a non-empty list of tokens, got " +
                       scalar_text(v));
    if (depth_ == 2)
      throw InputError(at() + "expected " + std::to_string(top_k_) + " expert ids (top-k), got " + scalar_text(v));
    throw InputError(at() + "expert id: expected an integer, got " + scalar_text(v));
  }
  bool expert(bool out_of_range, const std::string& text, int id) {
    if (out_of_range)
      throw InputError(at() + "expert id " + text + " out of range [0, " + std::to_string(experts_) + ")");
    if (count_ < top_k_) {
      Layer& l = layers_[layer_];
      uint16_t* token = &l.ids[l.ids.size() - static_cast<size_t>(top_k_)];
      for (int q = 0; q < count_; ++q)
        if (token[q] == id) throw InputError(at() + "expert id " + text + " appears twice");
      token[count_] = static_cast<uint16_t>(id);
    }
    ++count_;
    return true;
  }

  std::string where_;
  int experts_, top_k_;
  int depth_ = 0, layer_ = 0, count_ = 0;
  size_t total_ids_ = 0;
  std::map<int, Layer> layers_;
};

}  // namespace

RoutingTrace trace_from_text(const std::string& text, const std::string& where, int experts, int top_k) {
  check_no_nul(text, where);
  TraceSax sax(where, experts, top_k);
  nlohmann::json::sax_parse(text, &sax);
  return sax.take();
}

RoutingTrace trace_from_json(const nlohmann::json& j, const std::string& where, int experts, int top_k) {
  if (!j.is_object() || j.empty())
    throw InputError(where + ": expected an object mapping layer numbers to token lists, got " + describe_json(j));
  return trace_from_text(j.dump(), where, experts, top_k);
}

}  // namespace nmpsim::mapping
