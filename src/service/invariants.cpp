#include "onceorder/invariants.hpp"

#include "store/dialect.hpp"

namespace onceorder {

Result<std::vector<InvariantResult>> check_invariants(store::Database& db,
                                                      store::Clock::time_point deadline) {
  return store::transact<std::vector<InvariantResult>>(
      db, store::TxOptions{deadline, 3, store::TxMode::read},
      [&](store::Connection& c) -> Result<std::vector<InvariantResult>> {
        std::vector<InvariantResult> out;
        for (const store::InvariantSql& inv : db.dialect().invariants) {
          OO_ASSIGN_OR_RETURN(auto rows, c.query(inv.violations, {}));
          InvariantResult r{std::string(inv.id),
                            std::string(inv.name),
                            static_cast<std::int64_t>(rows.size()),
                            {},
                            0,
                            {}};
          for (size_t i = 0; i < rows.size() && i < 5; ++i) r.sample.push_back(rows[i].text(0));
          if (!inv.accepted.sql.empty()) {
            OO_ASSIGN_OR_RETURN(auto known, c.query(inv.accepted, {}));
            r.accepted = static_cast<std::int64_t>(known.size());
            for (size_t i = 0; i < known.size() && i < 5; ++i)
              r.accepted_sample.push_back(known[i].text(0));
          }
          out.push_back(std::move(r));
        }
        return out;
      });
}

}  // namespace onceorder
