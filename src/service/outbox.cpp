#include "onceorder/service/outbox.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "onceorder/core/http_url.hpp"
#include "onceorder/core/signature.hpp"
#include "onceorder/core/text.hpp"
#include "store/events_store.hpp"

namespace onceorder {
namespace {

using store::Connection;

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

Status not_found(std::string_view what, std::string_view name) {
  return Status(Code::not_found, fmt::format("no {} named \"{}\"", what, name));
}

}  // namespace

Status check_feed_name(std::string_view field, std::string_view name) {
  if (name.empty() || name.size() > EventLimits::kMaxName ||
      !std::all_of(name.begin(), name.end(), name_char)) {
    const std::string message =
        fmt::format("1 to {} characters of [A-Za-z0-9._-]", EventLimits::kMaxName);
    return Status(Code::invalid_request, fmt::format("{}: {}", field, message),
                  {{std::string(field), message}});
  }
  return Status::Ok();
}

Status check_endpoint_spec(const EndpointSpec& s) {
  std::vector<FieldError> errors;
  if (Status st = check_feed_name("name", s.name); !st.ok()) errors.push_back(st.fields().front());
  if (auto url = parse_http_url(s.url); !url.ok()) {
    errors.push_back({"url", url.status().message().substr(5)});  // without "url: "
  }
  if (s.secret.size() < EventLimits::kMinSecret || s.secret.size() > EventLimits::kMaxSecret) {
    errors.push_back({"secret", fmt::format("{} to {} bytes", EventLimits::kMinSecret,
                                            EventLimits::kMaxSecret)});
  } else if (auto problem = text_problem(s.secret)) {
    errors.push_back({"secret", *problem});
  }
  if (s.max_attempts < 1 || s.max_attempts > EventLimits::kMaxAttempts) {
    errors.push_back({"max_attempts", fmt::format("1 to {}", EventLimits::kMaxAttempts)});
  }
  if (s.backoff_seconds < 1 || s.backoff_seconds > EventLimits::kMaxBackoffSeconds) {
    errors.push_back({"backoff_seconds", fmt::format("1 to {}", EventLimits::kMaxBackoffSeconds)});
  }
  for (const std::string& t : s.types) {
    if (!is_event_type(t)) errors.push_back({"types", fmt::format("unknown event type \"{}\"", t)});
  }
  if (errors.empty()) return Status::Ok();
  std::string message =
      "the endpoint is not valid: " + errors.front().field + ": " + errors.front().message;
  return Status(Code::invalid_request, std::move(message), std::move(errors));
}

Outbox::Outbox(store::Database& db) : db_(db) {}

store::EventsStore Outbox::events() const { return store::EventsStore(db_.dialect()); }

Result<FeedPage> Outbox::read(FeedPosition after, const std::vector<std::string>& types, int limit,
                              OutboxDeadline deadline) {
  return store::transact<FeedPage>(db_, store::read_tx(deadline), [&](Connection& c) {
    return events().feed(c, after, types, limit);
  });
}

Result<FeedPosition> Outbox::head(OutboxDeadline deadline) {
  return store::transact<FeedPosition>(db_, store::read_tx(deadline),
                                       [&](Connection& c) { return events().head(c); });
}

namespace {

Result<Consumer> with_lag(store::EventsStore& ev, Connection& c, const store::ConsumerRow& row) {
  OO_ASSIGN_OR_RETURN(auto lag, ev.lag(c, row.after));
  return Consumer{row.name, row.after, row.updated_at, lag.first, lag.second};
}

}  // namespace

Result<Consumer> Outbox::consumer(const std::string& name, OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", name));
  return store::transact<Consumer>(db_, store::read_tx(deadline),
                                   [&](Connection& c) -> Result<Consumer> {
                                     auto ev = events();
                                     OO_ASSIGN_OR_RETURN(auto row, ev.consumer(c, name));
                                     if (!row) return not_found("consumer", name);
                                     return with_lag(ev, c, *row);
                                   });
}

Result<std::vector<Consumer>> Outbox::consumers(OutboxDeadline deadline) {
  using Out = std::vector<Consumer>;
  return store::transact<Out>(db_, store::read_tx(deadline), [&](Connection& c) -> Result<Out> {
    auto ev = events();
    OO_ASSIGN_OR_RETURN(auto rows, ev.consumers(c));
    Out out;
    for (const auto& row : rows) {
      OO_ASSIGN_OR_RETURN(auto consumer, with_lag(ev, c, row));
      out.push_back(std::move(consumer));
    }
    return out;
  });
}

Result<Outbox::PutConsumer> Outbox::put_consumer(const std::string& name, FeedPosition after,
                                                 OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", name));
  return store::transact<PutConsumer>(
      db_, store::write_tx(deadline), [&](Connection& c) -> Result<PutConsumer> {
        auto ev = events();
        OO_ASSIGN_OR_RETURN(auto head, ev.head(c));
        if (after > head) {
          return Status(Code::invalid_request,
                        fmt::format("after {} is past the feed's head {}: a reader there would "
                                    "skip the events still to come",
                                    cursor_text(after), cursor_text(head)),
                        {{"after", "past the feed's head " + cursor_text(head)}});
        }
        OO_ASSIGN_OR_RETURN(auto before, ev.consumer(c, name));
        if (!before) {
          OO_ASSIGN_OR_RETURN(auto all, ev.consumers(c));
          if (static_cast<int>(all.size()) >= EventLimits::kMaxConsumers) {
            return Status(Code::conflict, fmt::format("there are {} consumers already, the most "
                                                      "OnceOrder keeps: delete one first",
                                                      all.size()));
          }
        }
        OO_ASSIGN_OR_RETURN(auto row, ev.put_consumer(c, name, after));
        OO_ASSIGN_OR_RETURN(auto consumer, with_lag(ev, c, row));
        return PutConsumer{std::move(consumer), !before.has_value()};
      });
}

Status Outbox::delete_consumer(const std::string& name, OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", name));
  return store::transact<bool>(db_, store::write_tx(deadline),
                               [&](Connection& c) -> Result<bool> {
                                 OO_ASSIGN_OR_RETURN(bool gone, events().delete_consumer(c, name));
                                 if (!gone) return not_found("consumer", name);
                                 return true;
                               })
      .status();
}

namespace {

// Fills in the counts of each endpoint from one statement.
Status add_counts(store::EventsStore& ev, Connection& c, std::vector<Endpoint>& endpoints) {
  OO_ASSIGN_OR_RETURN(auto counts, ev.delivery_counts(c));
  for (Endpoint& e : endpoints) {
    for (auto& [name, n] : counts) {
      if (name == e.spec.name) e.counts = n;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Outbox::PutEndpoint> Outbox::put_endpoint(const EndpointSpec& given,
                                                 OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_endpoint_spec(given));
  EndpointSpec spec = given;  // types in one order, each once, as the feed's filter reads them
  std::sort(spec.types.begin(), spec.types.end());
  spec.types.erase(std::unique(spec.types.begin(), spec.types.end()), spec.types.end());
  return store::transact<PutEndpoint>(
      db_, store::write_tx(deadline), [&](Connection& c) -> Result<PutEndpoint> {
        auto ev = events();
        OO_ASSIGN_OR_RETURN(auto before, ev.endpoint(c, spec.name));
        OO_ASSIGN_OR_RETURN(auto head, ev.head(c));
        FeedPosition start = spec.after.value_or(head);
        if (!before) {
          OO_ASSIGN_OR_RETURN(auto count, ev.endpoint_count(c));
          if (count >= EventLimits::kMaxEndpoints) {
            return Status(Code::conflict, fmt::format("there are {} endpoints already, the most "
                                                      "OnceOrder keeps: delete one first",
                                                      count));
          }
          if (start > head) {
            return Status(Code::invalid_request,
                          fmt::format("after {} is past the feed's head {}", cursor_text(start),
                                      cursor_text(head)),
                          {{"after", "past the feed's head " + cursor_text(head)}});
          }
        }
        OO_ASSIGN_OR_RETURN(auto row, ev.put_endpoint(c, spec, start));
        std::vector<Endpoint> one{std::move(row)};
        OO_RETURN_IF_ERROR(add_counts(ev, c, one));
        return PutEndpoint{std::move(one.front()), !before.has_value()};
      });
}

Result<Endpoint> Outbox::endpoint(const std::string& name, OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", name));
  return store::transact<Endpoint>(db_, store::read_tx(deadline),
                                   [&](Connection& c) -> Result<Endpoint> {
                                     auto ev = events();
                                     OO_ASSIGN_OR_RETURN(auto row, ev.endpoint(c, name));
                                     if (!row) return not_found("endpoint", name);
                                     std::vector<Endpoint> one{std::move(*row)};
                                     OO_RETURN_IF_ERROR(add_counts(ev, c, one));
                                     return std::move(one.front());
                                   });
}

Result<Outbox::Target> Outbox::endpoint_target(const std::string& name, OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", name));
  return store::transact<Target>(
      db_, store::read_tx(deadline), [&](Connection& c) -> Result<Target> {
        OO_ASSIGN_OR_RETURN(auto target, events().endpoint_target(c, name));
        if (!target) return not_found("endpoint", name);
        return Target{std::move(target->first), std::move(target->second)};
      });
}

Result<std::vector<Endpoint>> Outbox::endpoints(OutboxDeadline deadline) {
  using Out = std::vector<Endpoint>;
  return store::transact<Out>(db_, store::read_tx(deadline), [&](Connection& c) -> Result<Out> {
    auto ev = events();
    OO_ASSIGN_OR_RETURN(auto rows, ev.endpoints(c));
    OO_RETURN_IF_ERROR(add_counts(ev, c, rows));
    return rows;
  });
}

Status Outbox::delete_endpoint(const std::string& name, OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", name));
  return store::transact<bool>(db_, store::write_tx(deadline),
                               [&](Connection& c) -> Result<bool> {
                                 OO_ASSIGN_OR_RETURN(bool gone, events().delete_endpoint(c, name));
                                 if (!gone) return not_found("endpoint", name);
                                 return true;
                               })
      .status();
}

Result<std::vector<Delivery>> Outbox::deliveries(const std::string& endpoint,
                                                 std::optional<DeliveryStatus> status,
                                                 std::int64_t after, int limit,
                                                 OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", endpoint));
  using Out = std::vector<Delivery>;
  return store::transact<Out>(db_, store::read_tx(deadline), [&](Connection& c) -> Result<Out> {
    auto ev = events();
    OO_ASSIGN_OR_RETURN(auto known, ev.endpoint(c, endpoint));
    if (!known) return not_found("endpoint", endpoint);
    return ev.deliveries(c, endpoint, status, after, limit);
  });
}

namespace {

Status not_a_delivery(std::string_view endpoint, std::int64_t event_id) {
  return Status(Code::not_found,
                fmt::format("endpoint \"{}\" has no delivery of event {}", endpoint, event_id));
}

}  // namespace

Result<Delivery> Outbox::resolve(const std::string& endpoint, std::int64_t event_id, bool delivered,
                                 OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", endpoint));
  return store::transact<Delivery>(
      db_, store::write_tx(deadline), [&](Connection& c) -> Result<Delivery> {
        auto ev = events();
        OO_ASSIGN_OR_RETURN(auto now, ev.resolve(c, endpoint, event_id, delivered));
        OO_ASSIGN_OR_RETURN(auto d, ev.delivery(c, endpoint, event_id));
        if (!d) return not_a_delivery(endpoint, event_id);
        if (!now) {
          return Status(Code::conflict,
                        fmt::format("the delivery of event {} to \"{}\" is {}, not in_doubt: only "
                                    "a delivery whose outcome is unknown takes an operator's word",
                                    event_id, endpoint, to_string(d->status)));
        }
        return std::move(*d);
      });
}

Result<std::vector<std::int64_t>> Outbox::redeliver(const std::string& endpoint,
                                                    std::span<const std::int64_t> given,
                                                    OutboxDeadline deadline) {
  OO_RETURN_IF_ERROR(check_feed_name("name", endpoint));
  std::vector<std::int64_t> event_ids(given.begin(), given.end());
  std::sort(event_ids.begin(), event_ids.end());
  event_ids.erase(std::unique(event_ids.begin(), event_ids.end()), event_ids.end());
  using Out = std::vector<std::int64_t>;
  return store::transact<Out>(db_, store::write_tx(deadline), [&](Connection& c) -> Result<Out> {
    auto ev = events();
    OO_ASSIGN_OR_RETURN(auto known, ev.endpoint(c, endpoint));
    if (!known) return not_found("endpoint", endpoint);
    for (std::int64_t id : event_ids) {
      OO_ASSIGN_OR_RETURN(auto d, ev.delivery(c, endpoint, id));
      if (!d) return not_a_delivery(endpoint, id);
      if (d->status != DeliveryStatus::dead) {
        return Status(Code::conflict,
                      fmt::format("the delivery of event {} to \"{}\" is {}, not dead: nothing "
                                  "was re-sent",
                                  id, endpoint, to_string(d->status)));
      }
    }
    OO_ASSIGN_OR_RETURN(auto done, ev.redeliver(c, endpoint, event_ids));
    // A delivery that stopped being dead meanwhile: run it all again (all or nothing).
    if (done.size() != event_ids.size()) {
      return Status(Code::retry_transaction, "a delivery changed while it was re-sent");
    }
    std::sort(done.begin(), done.end());
    return done;
  });
}

}  // namespace onceorder
