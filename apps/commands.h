// Subcommands of the nmpsim command line. Each takes the arguments after its name.
#pragma once

#include <string>
#include <vector>

namespace nmpsim::apps {

int cmd_noc(const std::vector<std::string>& args);
int cmd_hw(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_place(const std::vector<std::string>& args);
int cmd_model(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_serve(const std::vector<std::string>& args);

}  // namespace nmpsim::apps
