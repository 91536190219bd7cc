// The outbox's checks (checker.hpp): what the receivers and the feed consumer recorded, against
// the events the database holds at the end.
#include <algorithm>
#include <map>
#include <set>

#include "check_report.hpp"
#include "onceorder/core/signature.hpp"

namespace onceorder::torture {
namespace {

using OutJson = nlohmann::json;

struct StoredEvent {
  std::int64_t tx = 0, id = 0;
  std::string type, key, data;
  size_t position = 0;  // in feed order (tx, event_id)
};
using Events = std::map<std::int64_t, StoredEvent>;

Events stored_events(const Database& db) {
  Events out;
  size_t position = 0;
  for (const auto& row :
       db.rows("SELECT event_id, tx, type, key, data FROM event_feed ORDER BY tx, event_id")) {
    if (row.size() < 5) continue;
    const std::int64_t id = std::stoll(row[0]);
    out[id] = {std::stoll(row[1]), id, row[2], row[3], row[4], position++};
  }
  return out;
}

bool promises_at_least_once(const OutboxSpec::Receiver& r) {
  return r.mode == "at_least_once" || r.mode == "poller";
}
bool promises_at_most_once(const OutboxSpec::Receiver& r) {
  return r.mode == "at_most_once" || r.mode == "poller";
}

// A receiver's copies of each event, in the order they arrived.
std::map<std::int64_t, std::vector<const Received*>> copies_of(const History& h,
                                                               const std::string& endpoint) {
  std::map<std::int64_t, std::vector<const Received*>> out;
  for (const Received& r : h.received)
    if (r.endpoint == endpoint) out[r.event_id].push_back(&r);
  return out;
}

// The bodies as the receivers logged them: each distinct body once, by receiver and hash.
class Bodies {
 public:
  explicit Bodies(const History& h) {
    for (const Received& r : h.received)
      if (!r.body.empty()) by_hash_.emplace(r.endpoint + "|" + r.sha, &r.body);
  }
  std::string of(const Received& copy) const {
    auto it = by_hash_.find(copy.endpoint + "|" + copy.sha);
    return it == by_hash_.end() ? std::string() : *it->second;
  }

 private:
  std::map<std::string, const std::string*> by_hash_;
};

// The body's event is the stored one: id, type, key and data (as JSON values).
bool same_event(const std::string& body, const StoredEvent& e) {
  const auto j = OutJson::parse(body, nullptr, false);
  if (!j.is_object()) return false;
  const auto data = OutJson::parse(e.data, nullptr, false);
  return j.value("id", std::int64_t{-1}) == e.id && j.value("type", "") == e.type &&
         j.value("key", "") == e.key && j.contains("data") && j["data"] == data;
}

void check_at_least_once(const History& h, const Events& events, const Bodies& bodies,
                         const OutboxSpec::Receiver& spec, Report& r) {
  const std::string check = "delivered_at_least_once";
  const auto copies = copies_of(h, spec.name);
  long requests = 0, twice = 0;
  std::map<std::string, long> did;
  for (const auto& [id, list] : copies) {
    auto e = events.find(id);
    if (e == events.end()) {
      r.violation(check, "{}: received event {}, which is not in the database", spec.name, id);
      continue;
    }
    long acted = 0;
    for (const Received* c : list) {
      ++requests;
      ++did[c->did];
      acted += c->acted ? 1 : 0;
      if (c->idempotency_key != std::to_string(id))
        r.violation(check, "{}: event {} came with Idempotency-Key '{}'", spec.name, id,
                    c->idempotency_key);
      if (c->sha != list.front()->sha)
        r.violation(check, "{}: event {} came with two bodies ({} attempt {})", spec.name, id,
                    c->did, c->attempt);
    }
    twice += acted > 1 ? 1 : 0;
    if (!same_event(bodies.of(*list.front()), e->second))
      r.violation(check, "{}: event {} came otherwise than the database holds it", spec.name, id);
  }
  long never = 0;
  for (const auto& [id, e] : events) {
    auto c = copies.find(id);
    bool acted = false;
    if (c != copies.end())
      for (const Received* copy : c->second) acted = acted || copy->acted;
    if (acted) continue;
    ++never;
    r.violation(check, "{}: event {} ({} {}) was never acted on ({} requests)", spec.name, id,
                e.type, e.key, c == copies.end() ? 0 : c->second.size());
  }
  r.note(check,
         "{}: {} events, {} acted on (more than once: {}), {} never; {} requests: ok {}, fail "
         "{}, stall {}, drop {}, refused {}",
         spec.name, events.size(), events.size() - static_cast<size_t>(never), twice, never,
         requests, did["ok"], did["fail"], did["stall"], did["drop"], did["refused"]);
}

void check_at_most_once(const History& h, const OutboxSpec::Receiver& spec, Report& r) {
  const std::string check = "at_most_once_without_word";
  // Every "not delivered" that may have been taken (a 4xx surely was not) allows one more send.
  std::map<std::int64_t, long> words;
  long resolves = 0, falses = 0, redelivered = 0;
  for (const OperatorWord& w : h.words) {
    if (w.endpoint != spec.name) continue;
    if (w.action == "redeliver") redelivered += static_cast<long>(w.event_ids.size());
    if (w.action != "resolve") continue;
    ++resolves;
    if (w.delivered || w.status / 100 == 4) continue;
    ++falses;
    for (std::int64_t id : w.event_ids) ++words[id];
  }
  long once = 0, again = 0;
  for (const auto& [id, list] : copies_of(h, spec.name)) {
    long acted = 0;
    for (const Received* c : list) acted += c->acted ? 1 : 0;
    const long allowed = 1 + (words.contains(id) ? words[id] : 0);
    if (acted > allowed)
      r.violation(check, "{}: event {} was acted on {} times, after {} words 'not delivered'",
                  spec.name, id, acted, allowed - 1);
    once += acted == 1 ? 1 : 0;
    again += acted > 1 ? 1 : 0;
  }
  r.note(check,
         "{}: {} events acted on once, {} more than once; the operator resolved {} in doubt ({} "
         "'not delivered') and redelivered {} dead",
         spec.name, once, again, resolves, falses, redelivered);
}

void check_feed(const History& h, const Events& events, Report& r) {
  const std::string check = "feed_exactly_once";
  std::map<std::int64_t, int> seen;
  const StoredEvent* previous = nullptr;
  long total = 0;
  for (const FeedPage& page : h.feed) {
    for (const FeedPage::Event& ev : page.events) {
      ++total;
      if (++seen[ev.id] > 1) {
        r.violation(check, "event {} seen again (page after {})", ev.id, page.after);
        continue;
      }
      auto e = events.find(ev.id);
      if (e == events.end()) {
        r.violation(check, "event {} seen, but it is not in the database", ev.id);
        continue;
      }
      if (e->second.type != ev.type || e->second.key != ev.key)
        r.violation(check, "event {} seen as {} {}, stored as {} {}", ev.id, ev.type, ev.key,
                    e->second.type, e->second.key);
      if (previous && previous->position > e->second.position)
        r.violation(check, "event {} ({}:{}) seen after event {} ({}:{})", ev.id, e->second.tx,
                    ev.id, previous->id, previous->tx, previous->id);
      previous = &e->second;
    }
  }
  for (const auto& [id, e] : events)
    if (!seen.contains(id)) r.violation(check, "event {} ({} {}) never seen", id, e.type, e.key);
  // The position as saved last (answered 2xx) is the one read back.
  std::string saved, read_back = "(never read back)";
  for (const auto& line : h.consumer) {
    if (line.value("action", "") == "put" && line.value("status", 0) / 100 == 2)
      saved = line.value("after", "");
    if (line.value("action", "") == "get" && line.value("status", 0) == 200)
      read_back = line.value("after", "");
  }
  if (saved != read_back)
    r.violation(check, "the consumer saved its position as '{}', it reads back as '{}'", saved,
                read_back);
  r.note(check, "{} events in {} pages, each once: {}; the saved position read back: {}", total,
         h.feed.size(), static_cast<long>(seen.size()) == total && seen.size() == events.size(),
         saved == read_back);
}

void check_key_order(const History& h, const Events& events, const OutboxSpec::Receiver& spec,
                     Report& r) {
  const std::string check = "key_order";
  std::set<std::int64_t> arrived;
  std::map<std::string, const StoredEvent*> last_of_key;
  std::map<std::string, int> per_key;
  for (const Received& c : h.received) {
    if (c.endpoint != spec.name || !arrived.insert(c.event_id).second) continue;
    auto e = events.find(c.event_id);
    if (e == events.end()) continue;  // delivered_at_least_once names it
    const StoredEvent*& last = last_of_key[e->second.key];
    ++per_key[e->second.key];
    if (last && last->position > e->second.position)
      r.violation(check, "{}: key {}: event {} ({}) arrived first after event {} ({})", spec.name,
                  e->second.key, c.event_id, e->second.type, last->id, last->type);
    if (!last || last->position < e->second.position) last = &e->second;
  }
  long keys = 0;
  for (const auto& [key, n] : per_key) keys += n > 1 ? 1 : 0;
  r.note(check, "{}: {} keys with more than one event", spec.name, keys);
}

void check_signatures(const History& h, const Bodies& bodies, const OutboxSpec::Receiver& spec,
                      Report& r) {
  const std::string check = "signatures";
  long verified = 0;
  for (const Received& c : h.received) {
    if (c.endpoint != spec.name) continue;
    // Again here, at the signature's own time: the receiver's verdict is not taken on trust.
    std::int64_t t = 0;
    if (c.signature.rfind("t=", 0) == 0) t = std::atoll(c.signature.c_str() + 2);
    const auto again = verify_signature(c.signature, spec.secret, bodies.of(c), t);
    if (c.verified != "ok" || again != SignatureCheck::ok) {
      r.violation(check, "{}: event {} (attempt {}): the receiver found '{}', the checker {}",
                  spec.name, c.event_id, c.attempt, c.verified,
                  again == SignatureCheck::ok ? "ok" : "no match");
      continue;
    }
    ++verified;
  }
  r.note(check, "{}: {} requests verified", spec.name, verified);
}

}  // namespace

OutJson OutboxSpec::to_json() const {
  OutJson list = OutJson::array();
  for (const auto& r : receivers)
    list.push_back({{"name", r.name}, {"mode", r.mode}, {"secret", r.secret}});
  return {{"receivers", list}, {"feed", feed}};
}

OutboxSpec OutboxSpec::from_json(const OutJson& j) {
  OutboxSpec spec;
  if (!j.is_object()) return spec;
  for (const auto& r : j.value("receivers", OutJson::array()))
    spec.receivers.push_back({r.value("name", ""), r.value("mode", ""), r.value("secret", "")});
  spec.feed = j.value("feed", false);
  return spec;
}

void check_outbox(const History& h, const Database& db, const CheckOptions& o, Report& r) {
  if (o.outbox.receivers.empty() && !o.outbox.feed) return;
  const Events events = stored_events(db);
  const Bodies bodies(h);
  // Listed only where they apply: a run without a feed consumer has no feed_exactly_once.
  const auto& all = o.outbox.receivers;
  const auto any = [&](bool (*applies)(const OutboxSpec::Receiver&)) {
    return std::any_of(all.begin(), all.end(), applies);
  };
  if (any(promises_at_least_once)) r["delivered_at_least_once"];
  if (any(promises_at_most_once)) r["at_most_once_without_word"];
  if (o.outbox.feed) r["feed_exactly_once"];
  if (!all.empty()) r["key_order"];
  if (any([](const OutboxSpec::Receiver& x) { return !x.secret.empty(); })) r["signatures"];
  for (const auto& spec : o.outbox.receivers) {
    if (promises_at_least_once(spec)) check_at_least_once(h, events, bodies, spec, r);
    if (promises_at_most_once(spec)) check_at_most_once(h, spec, r);
    check_key_order(h, events, spec, r);
    if (!spec.secret.empty()) check_signatures(h, bodies, spec, r);
  }
  if (o.outbox.feed) check_feed(h, events, r);
}

}  // namespace onceorder::torture
