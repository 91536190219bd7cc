// Option helpers the subcommands' definitions share.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <string>

namespace onceorder::cli {

// A "4h"-style option, checked by CLI11 so that a bad value (or one below `least`, written as
// `least_text`) is a usage error naming the option.
CLI::Option* add_duration(CLI::App* app, const std::string& name, std::chrono::milliseconds& out,
                          const std::string& help, std::chrono::milliseconds least = {},
                          const std::string& least_text = {});

}  // namespace onceorder::cli
