// Option helpers the subcommands' definitions share.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <string>

#include "onceorder/service/scheduling.hpp"

namespace onceorder::cli {

// A "4h"-style option, checked by CLI11 so that a bad value (or one below `least`, written as
// `least_text`) is a usage error naming the option.
CLI::Option* add_duration(CLI::App* app, const std::string& name, std::chrono::milliseconds& out,
                          const std::string& help, std::chrono::milliseconds least = {},
                          const std::string& least_text = {});

// The scheduling settings, each given only to the commands that use it, so that a command's
// --help lists exactly what changes what it does.
enum SchedOption : unsigned {
  kSchedRunTimeout = 1U << 0,   // the reaper: heartbeat silence that ends a run
  kSchedLease = 1U << 1,        // a run's claims
  kSchedMaxAttempts = 1U << 2,  // which orders a run picks, and which are exhausted
  kSchedWorkers = 1U << 3,      // threads of a run
};
void add_sched_options(CLI::App* cmd, SchedulerOptions& sched, unsigned which);

inline constexpr const char* kDbHelp =
    "database URL: sqlite:PATH or postgresql://… (env ONCEORDER_DB)";

// --db and -v,--verbose on every command below `app` that opens the database (all but those in
// `without`), besides onceorder's own: `onceorder migrate --db URL` as well as
// `onceorder --db URL migrate`, and each command's --help names them.
void add_database_options(CLI::App& app, std::string& db_url, bool& verbose,
                          const std::vector<const CLI::App*>& without);

}  // namespace onceorder::cli
