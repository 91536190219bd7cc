// Who a recorded write was for: a placed order and an issued document name their principal
// (docs/SECURITY.md, "Who did what"). A request through the API records its token's name;
// the product's own writers record a name of their own, which no tokens file can give (a
// token's name is [A-Za-z0-9._@-] or role#line, so never starts with "system:").
#pragma once

#include <string_view>

namespace onceorder {

// A caller inside the process (the demo's seeding, tests, benchmarks): the service API's
// default, which every HTTP route replaces with the request's principal.
inline constexpr std::string_view kInProcessPrincipal = "system:in-process";
// The production order numbers a schedule run issues; the run's creator is in the audit
// trail (`run.create`).
inline constexpr std::string_view kProductionPrincipal = "system:production";
// Documents loaded by `onceorder import-legacy`.
inline constexpr std::string_view kLegacyImportPrincipal = "system:legacy-import";

}  // namespace onceorder
