#include "store/invariants_sql.hpp"

#include "store/sql_catalog.hpp"

namespace onceorder::store {
namespace {

// What each invariant promises; its query is inv_i<n> in store/<engine>/invariants.sql.
constexpr std::string_view kI1 = "at most one live (non-failed, non-aborted) item per business key";
constexpr std::string_view kI2 = "every wait/processing item belongs to a run in creating/running";
// A legacy `success` was produced by the old system: it has no production order here.
constexpr std::string_view kI3 =
    "success items (except imported legacy ones) and production orders match one to one";
constexpr std::string_view kI4 =
    "stock conservation per SKU: available = the sum of its ledger; reserved = its placed "
    "orders' lines; available + reserved = its initial and adjustment entries; neither negative";
constexpr std::string_view kI5 =
    "a placed order has exactly one reservation entry per line and no release; a cancelled one "
    "has one release per line; no reservation or release entry without its line";
constexpr std::string_view kI6 =
    "a placed receipt points at an order with the same normalized lines; an out_of_stock "
    "receipt has no order";
constexpr std::string_view kI7 =
    "per document scope, values issued by OnceOrder are contiguous (no gaps, no duplicates)";
constexpr std::string_view kI8 =
    "no processing item without a lease or whose lease expired (after the reaper ran)";
constexpr std::string_view kI9 =
    "a cancelled source order has no production order and no success/wait/processing item; an "
    "order and its source orders are cancelled together";
constexpr std::string_view kI10 =
    "every constraint, index, trigger and function the design relies on exists and is valid";
constexpr std::string_view kI11 =
    "every order line has exactly one source order (site W<warehouse>, the order's number, lot = "
    "line number) with the line's quantity";
constexpr std::string_view kI12 = "an order's number is derived from its id (unique as the id is)";
constexpr std::string_view kI13 = "a production order is for its source order's quantity";
constexpr std::string_view kI14 =
    "each production order has its own document in its site's scope PO-<site>, with that "
    "document's number";
constexpr std::string_view kI15 =
    "a document receipt points at a document with the receipt's title (a replay returns the "
    "original)";
constexpr std::string_view kI16 =
    "a source-order, run or adjustment receipt holds its answer; a run receipt points at a "
    "manual run";
constexpr std::string_view kI17 =
    "an item's last event records its current status and attempt (every change has its event)";

constexpr std::string_view kI18 =
    "every order has exactly one order.placed event, and each such event its order";
constexpr std::string_view kI19 =
    "every cancelled order has exactly one order.cancelled event, and each such event a cancelled "
    "order";
constexpr std::string_view kI20 =
    "every production order has exactly one production_order.created event, and each such event "
    "its production order";
constexpr std::string_view kI21 =
    "every document OnceOrder issued has exactly one document.issued event, and each such event "
    "its document";
constexpr std::string_view kI22 =
    "every finished (done or error) run but a legacy one has exactly one run.finished event, and "
    "each such event such a run";
constexpr std::string_view kI23 =
    "per endpoint, a key's events are delivered in feed order: none is delivered while an "
    "earlier one of its key is not";

struct Invariant {
  std::string_view id;
  std::string_view name;
  std::string_view statement;
  std::string_view accepted = {};
};

constexpr Invariant kInvariants[] = {
    {"I1", kI1, "inv_i1", "inv_i1_accepted"},
    {"I2", kI2, "inv_i2"},
    {"I3", kI3, "inv_i3"},
    {"I4", kI4, "inv_i4"},
    {"I5", kI5, "inv_i5"},
    {"I6", kI6, "inv_i6"},
    {"I7", kI7, "inv_i7"},
    {"I8", kI8, "inv_i8"},
    {"I9", kI9, "inv_i9"},
    {"I10", kI10, "inv_i10"},
    {"I11", kI11, "inv_i11"},
    {"I12", kI12, "inv_i12"},
    {"I13", kI13, "inv_i13"},
    {"I14", kI14, "inv_i14"},
    {"I15", kI15, "inv_i15"},
    {"I16", kI16, "inv_i16"},
    {"I17", kI17, "inv_i17"},
    {"I18", kI18, "inv_i18"},
    {"I19", kI19, "inv_i19"},
    {"I20", kI20, "inv_i20"},
    {"I21", kI21, "inv_i21"},
    {"I22", kI22, "inv_i22"},
    {"I23", kI23, "inv_i23"},
};

}  // namespace

std::vector<InvariantSql> invariant_sql(const SqlCatalog& sql) {
  std::vector<InvariantSql> out;
  for (const Invariant& i : kInvariants) {
    InvariantSql& v = out.emplace_back(InvariantSql{i.id, i.name, sql.get(i.statement)});
    if (!i.accepted.empty()) v.accepted = sql.get(i.accepted);
  }
  return out;
}

}  // namespace onceorder::store
