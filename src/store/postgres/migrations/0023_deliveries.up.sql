-- Readers of the outbox (docs/EVENTS.md): named feed consumers keep their position here;
-- endpoints are receivers OnceOrder pushes to, each with its own position in the feed up to
-- which its deliveries were made; a delivery is one event for one endpoint, claimed with a
-- lease and an attempt number (the fencing token, as for schedule items) and settled under
-- that fence. (ev_tx, event_id) is the event's feed position: a key's deliveries go in that
-- order, and the partial index finds a key's undelivered predecessors.
CREATE TABLE event_consumers (
  name       text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
  after_tx   bigint NOT NULL CHECK (after_tx >= 0),
  after_id   bigint NOT NULL CHECK (after_id >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE endpoints (
  name            text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
  url             text NOT NULL,
  types           text NOT NULL,
  secret          text NOT NULL,
  delivery        text NOT NULL CHECK (delivery IN ('at_least_once', 'at_most_once')),
  max_attempts    integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 100),
  backoff_seconds integer NOT NULL CHECK (backoff_seconds BETWEEN 1 AND 86400),
  after_tx        bigint NOT NULL CHECK (after_tx >= 0),
  after_id        bigint NOT NULL CHECK (after_id >= 0),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE deliveries (
  endpoint     text NOT NULL REFERENCES endpoints (name) ON DELETE CASCADE,
  event_id     bigint NOT NULL REFERENCES events (event_id),
  ev_tx        bigint NOT NULL,
  key          text NOT NULL,
  status       text NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'dead',
                                               'in_doubt')),
  mode         text CHECK (mode IN ('at_least_once', 'at_most_once')),
  attempt      integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
  budget_from  integer NOT NULL DEFAULT 0 CHECK (budget_from >= 0 AND budget_from <= attempt),
  owner        text,
  lease_until  timestamptz,
  next_at      timestamptz NOT NULL DEFAULT now(),
  last_error   text,
  last_status  integer,
  resolution   text CHECK (resolution IN ('delivered', 'resend', 'redeliver')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  sent_at      timestamptz,
  delivered_at timestamptz,
  PRIMARY KEY (endpoint, event_id),
  CHECK ((status = 'sending') = (lease_until IS NOT NULL))
);
-- In the claim's order, so that a claim reads its window of due deliveries from the front of
-- this index and stops: its plan cannot depend on the statistics of `deliveries`. A delivery
-- that waits for an earlier one of its key is parked at next_at 'infinity' (outside every window)
-- until that one is delivered (docs/EVENTS.md, "Order per key").
CREATE INDEX deliveries_due ON deliveries (next_at, ev_tx, event_id) WHERE status = 'pending';
CREATE INDEX deliveries_sending ON deliveries (lease_until) WHERE status = 'sending';
CREATE INDEX deliveries_open_by_key ON deliveries (endpoint, key, ev_tx, event_id)
  WHERE status <> 'delivered';
CREATE INDEX deliveries_by_status ON deliveries (endpoint, status, event_id);
