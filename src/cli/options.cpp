#include "cli/options.hpp"

#include "onceorder/duration.hpp"

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

}  // namespace onceorder::cli
