// Production scheduling (API.md "Scheduling"): source orders, manual runs, and the
// operator's views of runs, items and production orders, plus one reaper pass.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <thread>

#include "http/json_input.hpp"
#include "http/problem.hpp"
#include "http/request_input.hpp"
#include "http/routes.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

constexpr std::chrono::milliseconds kRunPollMax{100};  // a replay's look at its run

json key_members(const OrderKey& k) {
  return {{"site_code", k.site_code}, {"order_no", k.order_no}, {"lot_no", k.lot_no}};
}

json run_json(const Run& r) {
  json out = {{"run_id", r.run_id},
              {"kind", r.kind},
              {"status", to_string(r.status)},
              {"counts",
               {{"wait", r.counts.wait},
                {"processing", r.counts.processing},
                {"success", r.counts.success},
                {"failed", r.counts.failed},
                {"aborted", r.counts.aborted}}},
              {"created_at", r.created_at}};
  if (!r.finished_at.empty()) out["finished_at"] = r.finished_at;
  if (!r.error.empty()) out["error"] = r.error;
  return out;
}

json item_json(const ScheduleItem& i) {
  json out = key_members(i.key);
  out["item_id"] = i.item_id;
  out["run_id"] = i.run_id;
  out["status"] = to_string(i.status);
  out["attempt"] = i.attempt;
  out["error"] = i.error.empty() ? json(nullptr) : json(i.error);
  out["created_at"] = i.created_at;
  out["updated_at"] = i.updated_at;
  return out;
}

json production_json(const ProductionOrder& p) {
  json out = key_members(p.key);
  out["item_id"] = p.item_id;
  out["document_number"] = p.document_number;
  out["quantity"] = p.quantity;
  out["created_at"] = p.created_at;
  return out;
}

// A page's cursor: the last id when the page is full, else null (the last page).
json next_after(size_t count, int limit, std::int64_t last_id) {
  return count == static_cast<size_t>(limit) && count > 0 ? json(last_id) : json(nullptr);
}

// One order key of a body; field problems go to `fields` (named "orders[i].…").
OrderKey read_key(FieldReader& fields) {
  OrderKey k;
  k.site_code = fields.string("site_code", /*required=*/true).value_or("");
  k.order_no = fields.string("order_no", /*required=*/true).value_or("");
  k.lot_no = fields.string("lot_no", /*required=*/true).value_or("");
  return k;
}

// The service's checks of a key read from `fields` (which names it), except where the
// types already failed.
void check_key(FieldReader& fields, const OrderKey& k, size_t index) {
  Status st = validate_order_key(k, fmt::format("orders[{}].", index));
  fields.add_new_errors(st.fields());
}

// A replayed run, once it has ended (done or error), read again every few milliseconds; the
// run is another request's to process. request_in_progress when the deadline comes first,
// as a replayed order whose first request has not answered yet.
Result<Run> await_run_end(Services& s, std::int64_t run_id, Deadline deadline) {
  for (auto pause = std::chrono::milliseconds(5);; pause = std::min(pause * 2, kRunPollMax)) {
    OO_ASSIGN_OR_RETURN(Run run, s.scheduler.get_run(run_id, deadline));
    if (run.status == RunStatus::done || run.status == RunStatus::error) return run;
    if (store::Clock::now() + pause >= deadline) {
      return Status(Code::request_in_progress,
                    fmt::format("run {} of this Idempotency-Key is still running; retry the "
                                "request, or read GET /v1/schedule/runs/{}",
                                run_id, run_id));
    }
    std::this_thread::sleep_for(pause);
  }
}

// The orders a run request names; nullopt (every candidate) for no body, `{}` or no `orders`.
// `key_errors`: the Idempotency-Key's, answered with the body's.
Result<std::optional<std::vector<OrderKey>>> run_orders(const Request& req,
                                                        std::vector<FieldError> key_errors) {
  using Orders = std::optional<std::vector<OrderKey>>;
  if (req.body().empty()) {
    if (key_errors.empty()) return Orders();
    return Status(Code::invalid_request, "invalid request", std::move(key_errors));
  }
  auto body = parse_object(req.body());
  if (!body.ok()) return body.status();
  FieldReader fields(*body);
  for (auto& e : key_errors) fields.add_error(std::move(e.field), std::move(e.message));
  std::vector<OrderKey> keys;
  const bool given = fields.objects("orders", /*required=*/false, [&](FieldReader& f, size_t i) {
    keys.push_back(read_key(f));
    check_key(f, keys.back(), i);
  });
  if (Status st = fields.finish(); !st.ok()) return st;
  return given ? Orders(std::move(keys)) : Orders();
}

// The answer to a new run (or its replay): the run as it is now, with what it skipped.
Response created_run_response(const RunCreated& created, const Run& run) {
  json out = run_json(run);
  json skipped = json::array();
  for (const Skipped& sk : created.skipped) {
    json entry = key_members(sk.key);
    entry["reason"] = sk.reason;
    skipped.push_back(std::move(entry));
  }
  out["skipped"] = std::move(skipped);
  out["orphans_aborted"] = created.orphans_aborted;
  Response res = json_response(bhttp::status::created, out);
  if (created.replayed) res.set("Idempotent-Replayed", "true");
  return res;
}

}  // namespace

Response post_source_orders(Services& s, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());
  FieldReader fields(*body);
  std::vector<FieldError> key_errors;
  auto key = idempotency_key(req, key_errors);
  for (auto& e : key_errors) fields.add_error(std::move(e.field), std::move(e.message));
  std::vector<SourceOrder> orders;
  fields.objects("orders", /*required=*/true, [&](FieldReader& f, size_t i) {
    SourceOrder o;
    o.key = read_key(f);
    o.quantity = f.integer("quantity", 1, kMaxSourceQuantity, /*required=*/true).value_or(0);
    check_key(f, o.key, i);
    orders.push_back(std::move(o));
  });
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto imported = s.scheduler.import_source_orders(orders, deadline, key);
  if (!imported.ok()) return problem_response(imported.status());
  Response res = json_response(bhttp::status::ok,
                               {{"created", imported->created}, {"existing", imported->existing}});
  if (imported->replayed) res.set("Idempotent-Replayed", "true");
  return res;
}

Response post_run(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  const bool wait = query->boolean("wait", true);
  if (Status st = query->finish(); !st.ok()) return problem_response(st);
  std::vector<FieldError> key_errors;
  auto key = idempotency_key(req, key_errors);
  auto orders = run_orders(req, std::move(key_errors));
  if (!orders.ok()) return problem_response(orders.status());

  // A background run needs its place before the run exists: refusing later would leave
  // a run nobody processes.
  std::optional<RunExecutor::Slot> slot;
  if (!wait) {
    auto reserved = s.runs.reserve();
    if (!reserved.ok()) return problem_response(reserved.status());
    slot.emplace(std::move(*reserved));
  }
  auto created = s.scheduler.create_run(RunKind::manual, *orders, deadline, key);
  if (!created.ok()) return problem_response(created.status());
  const std::int64_t run_id = created->run.run_id;

  Run run = created->run;
  if (created->replayed) {
    // The first request processes the run (or did); a replay that waits only watches it.
    if (wait) {
      auto ended = await_run_end(s, run_id, deadline);
      if (!ended.ok()) return problem_response(ended.status());
      run = std::move(*ended);
    }
  } else if (slot) {
    s.runs.launch(std::move(*slot), run_id);
  } else {
    // Processing has its own timing (per transaction): the request deadline would end
    // the run half done. Only stopping the server ends it early.
    auto processed = s.runs.process(run_id);
    if (processed.ok()) {
      run = std::move(*processed);
    } else {
      // The run exists and ended in `error`: answer what it is now.
      auto now = s.scheduler.get_run(run_id, store::Clock::now() + std::chrono::seconds(5));
      if (!now.ok()) return problem_response(processed.status());
      run = std::move(*now);
    }
  }
  return created_run_response(*created, run);
}

Response get_run(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  const auto checked = path_ids(m.ids, {"run_id"});
  if (!checked.ok()) return problem_response(checked.status());
  const std::vector<std::int64_t>& ids = *checked;
  auto run = s.scheduler.get_run(ids[0], deadline);
  if (!run.ok()) return problem_response(run.status());
  return json_response(bhttp::status::ok, run_json(*run));
}

Response list_runs(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  std::optional<RunStatus> status;
  if (auto text = query->string("status", 16)) {
    status = parse_run_status(*text);
    if (!status) query->add_error("status", "must be creating, running, done or error");
  }
  const int limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto runs = s.scheduler.list_runs(status, limit, deadline);
  if (!runs.ok()) return problem_response(runs.status());
  json out = json::array();
  for (const Run& r : *runs) out.push_back(run_json(r));
  return json_response(bhttp::status::ok, {{"runs", std::move(out)}});
}

Response list_items(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  ItemFilter filter;
  if (auto text = query->string("status", 16)) {
    filter.status = parse_item_status(*text);
    if (!filter.status) {
      query->add_error("status", "must be wait, processing, success, failed or aborted");
    }
  }
  filter.site_code = query->string("site_code", kMaxOrderKeyPart);
  filter.order_no = query->string("order_no", kMaxOrderKeyPart);
  filter.lot_no = query->string("lot_no", kMaxOrderKeyPart);
  filter.run_id = query->integer("run_id", 1, kMaxId);
  filter.after = query->integer("after", 0, kMaxId).value_or(0);
  filter.limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto items = s.scheduler.list_items(filter, deadline);
  if (!items.ok()) return problem_response(items.status());
  json out = json::array();
  for (const ScheduleItem& i : *items) out.push_back(item_json(i));
  const std::int64_t last = items->empty() ? 0 : items->back().item_id;
  return json_response(
      bhttp::status::ok,
      {{"items", std::move(out)}, {"next_after", next_after(items->size(), filter.limit, last)}});
}

Response list_production_orders(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  const auto site_code = query->string("site_code", kMaxOrderKeyPart);
  const std::int64_t after = query->integer("after", 0, kMaxId).value_or(0);
  const int limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto orders = s.scheduler.list_production_orders(site_code, after, limit, deadline);
  if (!orders.ok()) return problem_response(orders.status());
  json out = json::array();
  for (const ProductionOrder& p : *orders) out.push_back(production_json(p));
  const std::int64_t last = orders->empty() ? 0 : orders->back().item_id;
  return json_response(bhttp::status::ok,
                       {{"production_orders", std::move(out)},
                        {"next_after", next_after(orders->size(), limit, last)}});
}

Response post_reap(Services& s, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  if (Status st = empty_body(req); !st.ok()) return problem_response(st);
  auto report = s.scheduler.reap(deadline);
  if (!report.ok()) return problem_response(report.status());
  return json_response(bhttp::status::ok, {{"aborted_waiting", report->aborted_waiting},
                                           {"released_processing", report->released_processing},
                                           {"dead_runs", report->dead_runs}});
}

Response post_run_stop(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  if (Status st = empty_body(req); !st.ok()) return problem_response(st);
  const auto checked = path_ids(m.ids, {"run_id"});
  if (!checked.ok()) return problem_response(checked.status());
  const std::vector<std::int64_t>& ids = *checked;
  auto run = s.scheduler.request_stop(ids[0], deadline);
  if (!run.ok()) return problem_response(run.status());
  // Accepted: the run ends at its next batch boundary, in whichever process runs it.
  return json_response(bhttp::status::accepted, run_json(*run));
}

Response list_exhausted(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  ExhaustedFilter filter;
  filter.site_code = query->string("site_code", kMaxOrderKeyPart);
  // The cursor is a key, its parts joined by spaces (no part of a key holds one).
  if (auto text = query->string("after", 3 * kMaxOrderKeyPart + 2)) {
    const size_t a = text->find(' ');
    const size_t b = a == std::string::npos ? a : text->find(' ', a + 1);
    OrderKey k;
    if (b != std::string::npos) {
      k = {text->substr(0, a), text->substr(a + 1, b - a - 1), text->substr(b + 1)};
    }
    if (b == std::string::npos || !validate_order_key(k, "").ok()) {
      query->add_error("after", "must be a next_after of this list: \"site_code order_no lot_no\"");
    } else {
      filter.after = std::move(k);
    }
  }
  filter.limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto keys = s.scheduler.list_exhausted(filter, deadline);
  if (!keys.ok()) return problem_response(keys.status());
  json out = json::array();
  for (const ExhaustedKey& e : *keys) {
    json entry = key_members(e.key);
    entry["attempts"] = e.attempts;
    entry["failed_total"] = e.failed_total;
    entry["last_error"] = e.last_error.empty() ? json(nullptr) : json(e.last_error);
    entry["last_failed_at"] = e.last_failed_at;
    entry["requeued_at"] = e.requeued_at.empty() ? json(nullptr) : json(e.requeued_at);
    out.push_back(std::move(entry));
  }
  json cursor = nullptr;
  if (!keys->empty() && keys->size() == static_cast<size_t>(filter.limit)) {
    const OrderKey& k = keys->back().key;
    cursor = fmt::format("{} {} {}", k.site_code, k.order_no, k.lot_no);
  }
  return json_response(bhttp::status::ok, {{"max_attempts", s.scheduler.options().max_attempts},
                                           {"orders", std::move(out)},
                                           {"next_after", std::move(cursor)}});
}

Response post_requeue(Services& s, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());
  FieldReader fields(*body);
  std::vector<FieldError> key_errors;
  auto key = idempotency_key(req, key_errors);
  for (auto& e : key_errors) fields.add_error(std::move(e.field), std::move(e.message));
  std::vector<OrderKey> keys;
  fields.objects("orders", /*required=*/true, [&](FieldReader& f, size_t i) {
    keys.push_back(read_key(f));
    check_key(f, keys.back(), i);
  });
  const bool dry_run = fields.boolean("dry_run", false);
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto done = s.scheduler.requeue(keys, dry_run, deadline, key);
  if (!done.ok()) return problem_response(done.status());
  json requeued = json::array();
  for (const OrderKey& k : done->requeued) requeued.push_back(key_members(k));
  json skipped = json::array();
  for (const Skipped& sk : done->skipped) {
    json entry = key_members(sk.key);
    entry["reason"] = sk.reason;
    skipped.push_back(std::move(entry));
  }
  Response res = json_response(bhttp::status::ok, {{"dry_run", done->dry_run},
                                                   {"requeued", std::move(requeued)},
                                                   {"skipped", std::move(skipped)}});
  if (done->replayed) res.set("Idempotent-Replayed", "true");
  return res;
}

}  // namespace onceorder::http
