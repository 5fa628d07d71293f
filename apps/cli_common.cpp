#include "apps/cli_common.h"

#include <cstdio>
#include <fstream>

namespace po = boost::program_options;

namespace nmpsim::apps {

uint64_t checked_count(long long value, const char* option, long long min, long long max) {
  if (value < min || value > max)
    throw UsageError(std::string("--") + option + ": must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got " + std::to_string(value));
  return static_cast<uint64_t>(value);
}

void parse_mesh(const std::string& text, int& width, int& height) {
  const size_t x = text.find_first_of("xX");
  auto number = [&](size_t from, size_t to, int& out) {
    if (to <= from || to - from > 6) return false;
    out = 0;
    for (size_t i = from; i < to; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  if (x == std::string::npos || !number(0, x, width) || !number(x + 1, text.size(), height))
    throw UsageError("--mesh: expected WxH such as 8x8, got '" + text + "'");
  if (width < 1 || height < 1) throw UsageError("--mesh: both dimensions must be at least 1, got '" + text + "'");
}

po::variables_map parse_options(const std::vector<std::string>& args, const po::options_description& desc) {
  std::vector<std::string> fixed;
  fixed.reserve(args.size());
  for (const auto& a : args) fixed.push_back(a == "-h" ? "--help" : a);
  po::variables_map vm;
  try {
    const auto style = po::command_line_style::unix_style ^ po::command_line_style::allow_short;
    po::store(po::command_line_parser(fixed).options(desc).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("cannot write '" + path + "'");
    out << text;
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      throw UsageError("cannot write '" + path + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw UsageError("cannot write '" + path + "'");
  }
}

}  // namespace nmpsim::apps
