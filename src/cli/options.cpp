#include "cli/options.hpp"

#include <algorithm>

#include "onceorder/core/duration.hpp"

namespace onceorder::cli {

CLI::Option* add_duration(CLI::App* app, const std::string& name, std::chrono::milliseconds& out,
                          const std::string& help, std::chrono::milliseconds least,
                          const std::string& least_text) {
  return app
      ->add_option_function<std::string>(
          name,
          [&out, name, least, least_text](const std::string& text) {
            auto d = parse_duration(text);
            if (!d.ok()) throw CLI::ValidationError(name, d.status().message());
            if (*d < least) throw CLI::ValidationError(name, "must be at least " + least_text);
            out = *d;
          },
          help)
      ->type_name("DURATION");
}

void add_sched_options(CLI::App* cmd, SchedulerOptions& sched, unsigned which) {
  if ((which & kSchedRunTimeout) != 0) {
    add_duration(cmd, "--run-timeout", sched.run_timeout, "heartbeat silence that ends a run (5m)");
  }
  if ((which & kSchedLease) != 0) {
    add_duration(cmd, "--lease", sched.lease, "how long a claimed item stays claimed (30s)");
  }
  if ((which & kSchedMaxAttempts) != 0) {
    cmd->add_option("--max-attempts", sched.max_attempts,
                    "failed attempts before an order stops (5)")
        ->check(CLI::Range(1, 1000));
  }
  if ((which & kSchedWorkers) != 0) {
    cmd->add_option("--workers", sched.workers, "threads processing a run (1)")
        ->check(CLI::Range(1, 64));
  }
}

void add_database_options(CLI::App& app, std::string& db_url, bool& verbose,
                          const std::vector<const CLI::App*>& without) {
  for (CLI::App* sub : app.get_subcommands({})) {
    if (std::find(without.begin(), without.end(), sub) != without.end()) continue;
    if (!sub->get_subcommands({}).empty()) {
      add_database_options(*sub, db_url, verbose, without);
      continue;
    }
    sub->add_option("--db", db_url, kDbHelp)->type_name("URL");
    sub->add_flag("-v,--verbose", verbose, "debug logging");
  }
}

}  // namespace onceorder::cli
