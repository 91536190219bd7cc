#include "cli/edge.hpp"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <string>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "http/rate_limit.hpp"

namespace onceorder::cli {

void add_edge_options(CLI::App* serve, ServerOptions& options) {
  serve
      ->add_option_function<std::string>(
          "--rate-limit",
          [&options](const std::string& text) {
            const auto rate = http::parse_rate(text);
            if (!rate) {
              throw CLI::ValidationError("--rate-limit",
                                         "expected requests a second, e.g. 20 or 20/s");
            }
            options.rate_limit = *rate;
          },
          "requests a second each principal may make; over it: 429 with Retry-After (off)")
      ->type_name("RATE[/s]");
  serve
      ->add_option("--rate-burst", options.rate_burst,
                   "requests a principal may make at once before --rate-limit applies (one "
                   "second's worth)")
      ->check(CLI::Range(1.0, 1e6));
  serve
      ->add_option_function<std::string>(
          "--metrics-listen",
          [&options](const std::string& text) {
            options.metrics_listen =
                text.find(':') == std::string::npos ? "127.0.0.1:" + text : text;
          },
          "serve /metrics alone, over plain HTTP, on this address (PORT alone: "
          "127.0.0.1:PORT); /metrics on --listen is then 404")
      ->type_name("[ADDR:]PORT");
}

void harden_process() {
#ifdef __linux__
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    spdlog::warn("cannot make the process non-dumpable: {}", std::strerror(errno));
  }
#endif
}

}  // namespace onceorder::cli
