#include "store/migrations.hpp"
#include "store/postgres/audit_migrations.hpp"
#include "store/postgres/document_body_migrations.hpp"
#include "store/postgres/key_facts_migrations.hpp"
#include "store/postgres/principal_migrations.hpp"
#include "store/postgres/sql_text.hpp"

namespace onceorder::store::postgres {
namespace {

// Document numbers (seed 003): one counter row per scope, taken and used in the
// transaction that inserts the document; (scope, value) unique as the backstop.
constexpr std::string_view kDocumentsUp = R"sql(
CREATE FUNCTION oo_format_number(v bigint, radix int, width int) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  digits constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  out text := '';
  n bigint := v;
BEGIN
  IF radix = 10 THEN RETURN lpad(v::text, greatest(width, length(v::text)), '0'); END IF;
  LOOP
    out := substr(digits, (n % radix)::int + 1, 1) || out;
    n := n / radix;
    EXIT WHEN n = 0;
  END LOOP;
  RETURN lpad(out, greatest(width, length(out)), '0');
END $$;

CREATE TABLE doc_scopes (
  scope      text PRIMARY KEY CHECK (scope ~ '^[A-Za-z0-9._-]{1,64}$'),
  width      integer NOT NULL DEFAULT 4 CHECK (width BETWEEN 1 AND 18),
  radix      integer NOT NULL DEFAULT 10 CHECK (radix BETWEEN 2 AND 36),
  max_value  bigint NOT NULL DEFAULT 9999 CHECK (max_value >= 1),
  last_value bigint NOT NULL DEFAULT 0 CHECK (last_value >= 0 AND last_value <= max_value),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE documents (
  scope      text NOT NULL REFERENCES doc_scopes (scope),
  value      bigint NOT NULL CHECK (value >= 1),
  number     text NOT NULL,
  origin     text NOT NULL CHECK (origin IN ('issued', 'legacy')),
  scheme     text NOT NULL,
  title      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, value)
);

CREATE TABLE document_receipts (
  scope           text NOT NULL,
  idempotency_key text NOT NULL,
  title           text NOT NULL,
  value           bigint NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, idempotency_key),
  FOREIGN KEY (scope, value) REFERENCES documents (scope, value)
);
)sql";

constexpr std::string_view kDocumentsDown = R"sql(
DROP TABLE document_receipts;
DROP TABLE documents;
DROP TABLE doc_scopes;
DROP FUNCTION oo_format_number(bigint, int, int);
)sql";

constexpr std::string_view kSchedulingUp = R"sql(
-- Production scheduling (seed 000). Business data (source_orders) and processing state
-- (schedule_items) are different facts in different tables.
CREATE TABLE source_orders (
  site_code  text NOT NULL,
  order_no   text NOT NULL,
  lot_no     text NOT NULL,
  quantity   bigint NOT NULL CHECK (quantity > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_code, order_no, lot_no)
);

CREATE TABLE schedule_runs (
  run_id       bigserial PRIMARY KEY,
  kind         text NOT NULL CHECK (kind IN ('batch', 'manual', 'legacy')),
  status       text NOT NULL CHECK (status IN ('creating', 'running', 'done', 'error')),
  owner        text NOT NULL,
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  error        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX schedule_runs_live ON schedule_runs (status) WHERE status IN ('creating', 'running');

CREATE TABLE schedule_items (
  item_id     bigserial PRIMARY KEY,
  run_id      bigint NOT NULL REFERENCES schedule_runs (run_id),
  site_code   text NOT NULL,
  order_no    text NOT NULL,
  lot_no      text NOT NULL,
  status      text NOT NULL CHECK (status IN ('wait', 'processing', 'success', 'failed', 'aborted')),
  attempt     integer NOT NULL DEFAULT 0,
  owner       text,
  lease_until timestamptz,
  error       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (site_code, order_no, lot_no) REFERENCES source_orders (site_code, order_no, lot_no)
);
CREATE INDEX schedule_items_by_key ON schedule_items (site_code, order_no, lot_no, status);
CREATE INDEX schedule_items_by_run ON schedule_items (run_id, status);
CREATE INDEX schedule_items_processing ON schedule_items (lease_until) WHERE status = 'processing';

CREATE TABLE production_orders (
  site_code       text NOT NULL,
  order_no        text NOT NULL,
  lot_no          text NOT NULL,
  item_id         bigint NOT NULL UNIQUE REFERENCES schedule_items (item_id),
  quantity        bigint NOT NULL,
  document_scope  text NOT NULL,
  document_value  bigint NOT NULL,
  document_number text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_code, order_no, lot_no),
  FOREIGN KEY (document_scope, document_value) REFERENCES documents (scope, value)
);

-- Legacy items wait here until `onceorder legacy dedup --apply` moves them.
CREATE TABLE legacy_items (
  legacy_id  bigserial PRIMARY KEY,
  line_no    integer NOT NULL,
  site_code  text NOT NULL,
  order_no   text NOT NULL,
  lot_no     text NOT NULL,
  status     text NOT NULL CHECK (status IN ('wait', 'processing', 'success', 'failed', 'aborted')),
  created_at timestamptz NOT NULL,
  run_id     text,
  moved_at   timestamptz,
  item_id    bigint
);
)sql";

constexpr std::string_view kSchedulingDown = R"sql(
DROP TABLE legacy_items;
DROP TABLE production_orders;
DROP TABLE schedule_items;
DROP TABLE schedule_runs;
DROP TABLE source_orders;
)sql";

// Its own version so that a database holding duplicate live items (legacy data loaded
// before it) stops here with a clear message, and can be fixed with `legacy dedup`.
// CONCURRENTLY: schedule_items can be big by the time this runs, and a plain CREATE INDEX
// holds off every writer for the whole build. One statement: it runs outside a transaction.
// At most one live item per business key. A deny-list: a status added later blocks
// duplicates until it is deliberately listed here (fail-closed).
constexpr std::string_view kLiveIndexUp =
    "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS schedule_items_live ON schedule_items "
    "(site_code, order_no, lot_no) WHERE status NOT IN ('failed', 'aborted')";

// The seed's ENABLE NOVALIDATE: rows above the watermark are held to the rule, older rows
// (and their duplicates) are left as they are. The watermark lives in the predicate, so the
// index itself says which mode it is in (invariants I1 and I10 read it from the catalog).
constexpr std::string_view kLiveIndexNewRowsOnlyUp =
    "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS schedule_items_live ON schedule_items "
    "(site_code, order_no, lot_no) WHERE status NOT IN ('failed', 'aborted') AND item_id > "
    "{watermark}";

constexpr std::string_view kLiveIndexDown = R"sql(
DROP INDEX schedule_items_live;
)sql";

constexpr std::string_view kIntakeUp = R"sql(
-- Order intake (seeds 004, 002). Stock rows per (warehouse, SKU) never go negative; every
-- change of `available` is a ledger entry.
CREATE TABLE stock (
  warehouse_id bigint NOT NULL CHECK (warehouse_id > 0),
  sku_id       bigint NOT NULL CHECK (sku_id > 0),
  available    bigint NOT NULL CHECK (available >= 0),
  price_cents  bigint NOT NULL CHECK (price_cents >= 0),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (warehouse_id, sku_id)
);

CREATE TABLE stock_ledger (
  entry_id     bigserial PRIMARY KEY,
  warehouse_id bigint NOT NULL,
  sku_id       bigint NOT NULL,
  delta        bigint NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('initial', 'adjustment', 'reservation', 'release')),
  reason       text,
  order_id     bigint,
  line_no      integer,
  created_at   timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (warehouse_id, sku_id) REFERENCES stock (warehouse_id, sku_id)
);
CREATE INDEX stock_ledger_by_sku ON stock_ledger (warehouse_id, sku_id);

CREATE TABLE orders (
  order_id     bigint PRIMARY KEY,
  order_no     text NOT NULL UNIQUE,
  customer_id  bigint NOT NULL CHECK (customer_id > 0),
  warehouse_id bigint NOT NULL CHECK (warehouse_id > 0),
  status       text NOT NULL CHECK (status IN ('placed', 'cancelled')),
  total_cents  bigint NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  cancelled_at timestamptz
);

CREATE TABLE order_lines (
  order_id         bigint NOT NULL REFERENCES orders (order_id),
  line_no          integer NOT NULL CHECK (line_no >= 1),
  sku_id           bigint NOT NULL,
  quantity         bigint NOT NULL CHECK (quantity > 0),
  unit_price_cents bigint NOT NULL,
  PRIMARY KEY (order_id, line_no),
  UNIQUE (order_id, sku_id)
);

-- A reservation belongs to one order line; cancel releases exactly those.
CREATE TABLE reservations (
  order_id     bigint NOT NULL,
  line_no      integer NOT NULL,
  warehouse_id bigint NOT NULL,
  sku_id       bigint NOT NULL,
  quantity     bigint NOT NULL CHECK (quantity > 0),
  status       text NOT NULL CHECK (status IN ('active', 'released')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  released_at  timestamptz,
  PRIMARY KEY (order_id, line_no),
  FOREIGN KEY (order_id, line_no) REFERENCES order_lines (order_id, line_no),
  FOREIGN KEY (warehouse_id, sku_id) REFERENCES stock (warehouse_id, sku_id)
);
CREATE INDEX reservations_active ON reservations (warehouse_id, sku_id) WHERE status = 'active';

-- One decision per (customer, key): `placed` with its order, or `out_of_stock` with the
-- shortages, replayed as it was first answered.
CREATE TABLE order_receipts (
  customer_id     bigint NOT NULL,
  idempotency_key text NOT NULL,
  warehouse_id    bigint NOT NULL,
  normalized      text NOT NULL,
  normalization   integer NOT NULL,
  outcome         text CHECK (outcome IN ('placed', 'out_of_stock')),
  order_id        bigint REFERENCES orders (order_id),
  shortages       text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, idempotency_key),
  CHECK ((outcome = 'placed') = (order_id IS NOT NULL))
);

-- Order-id node leases: a process holds one node id while its lease lasts.
CREATE TABLE id_nodes (
  node_id        integer PRIMARY KEY CHECK (node_id BETWEEN 0 AND 255),
  holder         text,
  lease_until_ms bigint NOT NULL DEFAULT 0
);
INSERT INTO id_nodes (node_id) SELECT g FROM generate_series(0, 255) g;

-- A cancelled order's lines are no longer scheduling candidates.
ALTER TABLE source_orders ADD COLUMN cancelled_at timestamptz;
)sql";

constexpr std::string_view kIntakeDown = R"sql(
ALTER TABLE source_orders DROP COLUMN cancelled_at;
DROP TABLE id_nodes;
DROP TABLE order_receipts;
DROP TABLE reservations;
DROP TABLE order_lines;
DROP TABLE orders;
DROP TABLE stock_ledger;
DROP TABLE stock;
)sql";

// A cancelled source order never has a production order, enforced by the database and not
// only by the order of statements (a worker completing an item while the order is being
// cancelled). `live` mirrors `cancelled_at`; a production order must reference a live
// source order, and a source order with a production order cannot stop being live.
// PostgreSQL's foreign-key checks lock and re-check the referenced row, so the race is
// closed whichever transaction comes first.
constexpr std::string_view kCancelGuardUp = R"sql(
ALTER TABLE source_orders ADD COLUMN live boolean GENERATED ALWAYS AS (cancelled_at IS NULL) STORED;
ALTER TABLE source_orders ADD CONSTRAINT source_orders_live_key UNIQUE (site_code, order_no, lot_no, live);
ALTER TABLE production_orders ADD COLUMN source_live boolean NOT NULL DEFAULT true
  CONSTRAINT production_orders_source_live_check CHECK (source_live);
ALTER TABLE production_orders ADD CONSTRAINT production_orders_live_source
  FOREIGN KEY (site_code, order_no, lot_no, source_live)
  REFERENCES source_orders (site_code, order_no, lot_no, live);

-- Raises inside the statement (so a pipelined COMMIT becomes a rollback) when a guard
-- that must hold does not: a check made after COMMIT was sent would check nothing.
CREATE FUNCTION oo_assert(ok boolean, message text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'OO001', MESSAGE = message;
  END IF;
  RETURN true;
END $$;
)sql";

constexpr std::string_view kCancelGuardDown = R"sql(
DROP FUNCTION oo_assert(boolean, text);
ALTER TABLE production_orders DROP CONSTRAINT production_orders_live_source;
ALTER TABLE production_orders DROP COLUMN source_live;
ALTER TABLE source_orders DROP CONSTRAINT source_orders_live_key;
ALTER TABLE source_orders DROP COLUMN live;
)sql";

// The operator's word on a legacy row the old system had in flight at the cutover (made or
// not made): `legacy dedup --apply` refuses to move a `processing` row without it, so that
// OnceOrder never makes again what the old system may have made. The index keeps the
// "no candidate while its legacy history is staged" test cheap (empty after the cutover).
constexpr std::string_view kLegacyResolutionUp = R"sql(
ALTER TABLE legacy_items
  ADD COLUMN resolution text CHECK (resolution IN ('made', 'not_made')),
  ADD COLUMN resolved_at timestamptz;
CREATE INDEX legacy_items_pending ON legacy_items (site_code, order_no, lot_no) WHERE moved_at IS NULL;
)sql";

constexpr std::string_view kLegacyResolutionDown = R"sql(
DROP INDEX legacy_items_pending;
ALTER TABLE legacy_items DROP COLUMN resolved_at, DROP COLUMN resolution;
)sql";

// Receipts expire after the published retention (API.md "How long a key lives"); the
// maintenance pass finds the old ones by age, a batch at a time. Built concurrently: by the
// time a database gets here its receipt tables can be big, and intake must go on.
constexpr std::string_view kOrderReceiptsByAgeUp =
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS order_receipts_by_age ON order_receipts (created_at)";
constexpr std::string_view kOrderReceiptsByAgeDown = "DROP INDEX order_receipts_by_age";
constexpr std::string_view kDocumentReceiptsByAgeUp =
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS document_receipts_by_age ON document_receipts "
    "(created_at)";
constexpr std::string_view kDocumentReceiptsByAgeDown = "DROP INDEX document_receipts_by_age";

// Per source order, the facts that decide whether it may get a new schedule item: the
// candidate statements and the reasons for a skipped order all read them here
// (store/<engine>/scheduling_sql.cpp). Row-level columns, no aggregate over the view's own
// rows: a statement can lock the source order rows through it (FOR SHARE OF the view), and
// the planner inlines it.
constexpr std::string_view kScheduleKeyFactsUp = R"sql(
CREATE VIEW schedule_key_facts AS
SELECT so.site_code, so.order_no, so.lot_no,
  so.cancelled_at IS NOT NULL AS cancelled,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'success') AS has_success,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no
          AND i.status IN ('wait', 'processing')) AS has_live,
  (SELECT count(*) FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'failed') AS failed,
  EXISTS (SELECT 1 FROM legacy_items l WHERE l.site_code = so.site_code
          AND l.order_no = so.order_no AND l.lot_no = so.lot_no AND l.moved_at IS NULL) AS legacy_pending
FROM source_orders so;
)sql";
constexpr std::string_view kScheduleKeyFactsDown = "DROP VIEW schedule_key_facts";

// Receipts of the other creating requests (API.md "Idempotency-Key on the other creating
// POSTs"): one table for the three routes, scoped per route and `scope` ('' for source orders
// and runs, '<warehouse>/<sku>' for adjustments). The row is inserted first (a concurrent
// request with the key waits on it) and its `answer` written by the transaction that makes
// the effect; a run's receipt points at its run. A new table: no writer to spare from a
// plain index build.
constexpr std::string_view kRequestReceiptsUp = R"sql(
CREATE TABLE request_receipts (
  route           text NOT NULL CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment')),
  scope           text NOT NULL,
  idempotency_key text NOT NULL,
  request         text NOT NULL,
  answer          text,
  run_id          bigint REFERENCES schedule_runs (run_id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (route, scope, idempotency_key),
  CHECK (run_id IS NULL OR route = 'schedule_run')
);
CREATE INDEX request_receipts_by_age ON request_receipts (created_at);
)sql";
constexpr std::string_view kRequestReceiptsDown = "DROP TABLE request_receipts";

// A customer's orders, newest first (GET /v1/orders for a customer token), without a scan of
// everyone's. Built concurrently: orders is big by now and intake must go on.
constexpr std::string_view kOrdersByCustomerUp =
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_by_customer ON orders (customer_id, order_id)";
constexpr std::string_view kOrdersByCustomerDown = "DROP INDEX orders_by_customer";

// The maintenance leader's lease (service/maintenance.cpp): a row with an expiry, taken and
// renewed in short transactions, instead of a session advisory lock, which a
// transaction-mode pooler would leave on whichever server connection ran it. One row per
// job name; `term` grows with each new holder.
constexpr std::string_view kLeaderLeasesUp = R"sql(
CREATE TABLE leader_leases (
  name           text PRIMARY KEY,
  holder         text NOT NULL,
  lease_until_ms bigint NOT NULL,
  term           bigint NOT NULL CHECK (term > 0)
);
)sql";
constexpr std::string_view kLeaderLeasesDown = "DROP TABLE leader_leases";

// The audit trail (API.md "The audit trail"): one row per audited request, written by the
// HTTP layer right after the handler's own transaction (http/api.cpp). Paged newest first by
// action_id; `at` is indexed for pruning by age. A new table: a plain index build blocks no
// writer.
constexpr std::string_view kOperatorActionsUp = R"sql(
CREATE TABLE operator_actions (
  action_id bigserial PRIMARY KEY,
  at        timestamptz NOT NULL DEFAULT now(),
  principal text NOT NULL CHECK (length(principal) BETWEEN 1 AND 100),
  role      text NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'customer')),
  action    text NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
  target    text,
  status    integer NOT NULL CHECK (status BETWEEN 100 AND 599),
  summary   text NOT NULL DEFAULT '{}'
);
CREATE INDEX operator_actions_by_age ON operator_actions (at);
)sql";
constexpr std::string_view kOperatorActionsDown = "DROP TABLE operator_actions";

// The console's per-minute charts (GET /v1/stats/activity) count the rows of the last minutes
// by created_at: a range over these indexes, never a scan of the table. Built concurrently:
// orders, production orders and documents are the big tables, and their writers must go on.
constexpr std::string_view kOrdersByTimeUp =
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_by_time ON orders (created_at)";
constexpr std::string_view kOrdersByTimeDown = "DROP INDEX orders_by_time";
constexpr std::string_view kProductionOrdersByTimeUp =
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS production_orders_by_time ON production_orders "
    "(created_at)";
constexpr std::string_view kProductionOrdersByTimeDown = "DROP INDEX production_orders_by_time";
// Issued numbers only: legacy documents carry their import time and are not activity.
constexpr std::string_view kIssuedDocumentsByTimeUp =
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS documents_issued_by_time ON documents (created_at) "
    "WHERE origin = 'issued'";
constexpr std::string_view kIssuedDocumentsByTimeDown = "DROP INDEX documents_issued_by_time";
// The operator's actions on scheduling (API.md "Console actions"). A re-queue gives an order
// that reached the attempt limit a fresh budget without deleting its failed items:
// `requeued_failures` is how many of its failed items no longer count, and the view's
// `failed` subtracts it, so that every candidate statement keeps reading one column. A stop
// request is a mark on the run that the process running it reads at its next batch
// boundary (whichever process that is). A re-queue's Idempotency-Key receipt is a route of
// request_receipts of its own.
constexpr std::string_view kScheduleActionsUp = R"sql(
ALTER TABLE source_orders
  ADD COLUMN requeued_failures bigint NOT NULL DEFAULT 0 CHECK (requeued_failures >= 0),
  ADD COLUMN requeued_at timestamptz;
ALTER TABLE schedule_runs ADD COLUMN stop_requested_at timestamptz;
ALTER TABLE request_receipts DROP CONSTRAINT request_receipts_route_check,
  ADD CONSTRAINT request_receipts_route_check
  CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment', 'schedule_requeue'));
DROP VIEW schedule_key_facts;
CREATE VIEW schedule_key_facts AS
SELECT so.site_code, so.order_no, so.lot_no,
  so.cancelled_at IS NOT NULL AS cancelled,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'success') AS has_success,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no
          AND i.status IN ('wait', 'processing')) AS has_live,
  (SELECT count(*) FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'failed') - so.requeued_failures AS failed,
  EXISTS (SELECT 1 FROM legacy_items l WHERE l.site_code = so.site_code
          AND l.order_no = so.order_no AND l.lot_no = so.lot_no AND l.moved_at IS NULL) AS legacy_pending
FROM source_orders so;
)sql";
constexpr std::string_view kScheduleActionsDown = R"sql(
DROP VIEW schedule_key_facts;
CREATE VIEW schedule_key_facts AS
SELECT so.site_code, so.order_no, so.lot_no,
  so.cancelled_at IS NOT NULL AS cancelled,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'success') AS has_success,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no
          AND i.status IN ('wait', 'processing')) AS has_live,
  (SELECT count(*) FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'failed') AS failed,
  EXISTS (SELECT 1 FROM legacy_items l WHERE l.site_code = so.site_code
          AND l.order_no = so.order_no AND l.lot_no = so.lot_no AND l.moved_at IS NULL) AS legacy_pending
FROM source_orders so;
DELETE FROM request_receipts WHERE route = 'schedule_requeue';
ALTER TABLE request_receipts DROP CONSTRAINT request_receipts_route_check,
  ADD CONSTRAINT request_receipts_route_check
  CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment'));
ALTER TABLE schedule_runs DROP COLUMN stop_requested_at;
ALTER TABLE source_orders DROP COLUMN requeued_at, DROP COLUMN requeued_failures;
)sql";

// The orders that reached the attempt limit (GET /v1/schedule/exhausted) are read over the
// failed items only, by key, and a key's last failure is the index's last entry for it.
constexpr std::string_view kFailedItemsUp =
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS schedule_items_failed ON schedule_items "
    "(site_code, order_no, lot_no, item_id) WHERE status = 'failed'";
constexpr std::string_view kFailedItemsDown = "DROP INDEX schedule_items_failed";

// Per-item history (issue 11, "timeline"): one row per change of an item's status or attempt,
// written by triggers, so that every statement that changes an item (claims, fences, fails,
// the reaper, cancel, a run's end, legacy moves) writes its events in the same statement
// without knowing about it, and none can forget. Statement-level triggers over transition
// tables: one INSERT … SELECT per statement, whatever its row count, so a batch of claims or
// fences stays one statement and one round trip (a row-level trigger would call PL/pgSQL per
// row). Items are never deleted (DESIGN.md rule 9), so there is no foreign key: it would add
// a check per event. Kinds, `status` and `attempt` as on SQLite (store/sqlite/migrations.cpp).
// Existing items get one `imported` event, at their last update.
constexpr std::string_view kItemEventsUp = R"sql(
-- Writers wait from here to the commit: none may change an item between the backfill below and
-- the triggers (CREATE TRIGGER would take this lock anyway, later).
LOCK TABLE schedule_items IN SHARE ROW EXCLUSIVE MODE;
CREATE TABLE schedule_item_events (
  event_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  item_id     bigint NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('created', 'imported', 'claimed', 'produced', 'failed',
                                            'released', 'aborted', 'resolved')),
  status      text NOT NULL,
  attempt     integer NOT NULL,
  owner       text,
  lease_until timestamptz,
  detail      text,
  at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedule_item_events_by_item ON schedule_item_events (item_id, event_id);
INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail, at)
  SELECT item_id, 'imported', status, attempt, owner, lease_until, error, updated_at
  FROM schedule_items ORDER BY item_id;

CREATE FUNCTION oo_item_events_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail)
  SELECT n.item_id, CASE WHEN n.status = 'wait' THEN 'created' ELSE 'imported' END, n.status,
         n.attempt, n.owner, n.lease_until, n.error
  FROM oo_new_items n ORDER BY n.item_id;
  RETURN NULL;
END $$;
CREATE TRIGGER schedule_items_event_insert AFTER INSERT ON schedule_items
  REFERENCING NEW TABLE AS oo_new_items FOR EACH STATEMENT EXECUTE FUNCTION oo_item_events_inserted();

CREATE FUNCTION oo_item_events_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail)
  SELECT n.item_id, CASE
           WHEN n.status = 'processing' THEN 'claimed'
           WHEN n.status = 'aborted' THEN 'aborted'
           WHEN EXISTS (SELECT 1 FROM schedule_runs r WHERE r.run_id = n.run_id
                        AND r.kind = 'legacy') THEN 'resolved'
           WHEN n.status = 'success' THEN 'produced'
           WHEN n.error = 'lease expired' THEN 'released'
           ELSE 'failed' END,
         n.status, n.attempt, n.owner, n.lease_until, n.error
  FROM oo_new_items n JOIN oo_old_items o ON o.item_id = n.item_id
  WHERE o.status IS DISTINCT FROM n.status OR o.attempt IS DISTINCT FROM n.attempt
  ORDER BY n.item_id;
  RETURN NULL;
END $$;
CREATE TRIGGER schedule_items_event_update AFTER UPDATE ON schedule_items
  REFERENCING OLD TABLE AS oo_old_items NEW TABLE AS oo_new_items
  FOR EACH STATEMENT EXECUTE FUNCTION oo_item_events_updated();
)sql";
constexpr std::string_view kItemEventsDown = R"sql(
DROP TRIGGER schedule_items_event_update ON schedule_items;
DROP TRIGGER schedule_items_event_insert ON schedule_items;
DROP FUNCTION oo_item_events_updated();
DROP FUNCTION oo_item_events_inserted();
DROP TABLE schedule_item_events;
)sql";

// Migration 19's event triggers run their INSERT … SELECT from PL/pgSQL, which plans it once
// per connection and keeps the plan, its JIT decision included. When the first change on a
// connection was large (the reaper aborting a dead run of thousands of items), the kept plan's
// cost (estimated from that statement's transition tables) passed jit_above_cost, and from
// then on every claim and completion on that connection compiled the insert with LLVM, about
// 200 ms each: a restarted run of 4,000 items took over a minute (docs/BENCHMARKS.md, "JIT in
// the item-event triggers"). The insert writes one row per changed item and never gains from
// compiling.
constexpr std::string_view kItemEventsWithoutJitUp = R"sql(
ALTER FUNCTION oo_item_events_inserted() SET jit = off;
ALTER FUNCTION oo_item_events_updated() SET jit = off;
)sql";
constexpr std::string_view kItemEventsWithoutJitDown = R"sql(
ALTER FUNCTION oo_item_events_updated() RESET jit;
ALTER FUNCTION oo_item_events_inserted() RESET jit;
)sql";

// A reservation is an order line of a placed order: the table that repeated each line with a
// status (`active` while the order is placed, `released` once cancelled) is folded into what
// already says so. Each placed line's quantity is counted on its stock row (`reserved`,
// changed by the same UPDATE that changes `available`), and the ledger's `reservation` and
// `release` entries, one per line, keep the history. An order then writes one row, two index
// entries and two foreign-key checks less per line (docs/BENCHMARKS.md, "Reservations on the
// stock row"); invariants I4 and I5 check the fold from both sides.
constexpr std::string_view kReservedOnStockUp = R"sql(
ALTER TABLE stock ADD COLUMN reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0);
UPDATE stock s SET reserved = r.q FROM (SELECT warehouse_id, sku_id, sum(quantity) AS q
  FROM reservations WHERE status = 'active' GROUP BY warehouse_id, sku_id) r
  WHERE r.warehouse_id = s.warehouse_id AND r.sku_id = s.sku_id;
DROP TABLE reservations;
)sql";
constexpr std::string_view kReservedOnStockDown = R"sql(
CREATE TABLE reservations (
  order_id     bigint NOT NULL,
  line_no      integer NOT NULL,
  warehouse_id bigint NOT NULL,
  sku_id       bigint NOT NULL,
  quantity     bigint NOT NULL CHECK (quantity > 0),
  status       text NOT NULL CHECK (status IN ('active', 'released')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  released_at  timestamptz,
  PRIMARY KEY (order_id, line_no),
  FOREIGN KEY (order_id, line_no) REFERENCES order_lines (order_id, line_no),
  FOREIGN KEY (warehouse_id, sku_id) REFERENCES stock (warehouse_id, sku_id)
);
CREATE INDEX reservations_active ON reservations (warehouse_id, sku_id) WHERE status = 'active';
INSERT INTO reservations (order_id, line_no, warehouse_id, sku_id, quantity, status, created_at,
  released_at)
SELECT l.order_id, l.line_no, o.warehouse_id, l.sku_id, l.quantity,
  CASE o.status WHEN 'placed' THEN 'active' ELSE 'released' END, o.created_at, o.cancelled_at
FROM order_lines l JOIN orders o ON o.order_id = l.order_id;
ALTER TABLE stock DROP COLUMN reserved;
)sql";

// The outbox (docs/EVENTS.md): one row per fact a receiver outside OnceOrder acts on, written
// by triggers in the statement that writes the fact, so that no path can forget it and no
// event exists without its committed fact. Statement-level triggers over transition tables,
// as the item events (migration 19): one INSERT … SELECT per statement, so a batch of orders
// or documents stays one statement.
//
// An event row is thin: its position, type, key, time and `ref` (the fact's row: an order id,
// a production order's item id, a run id, or a document's value with its scope). Its `data`,
// what a receiver acts on, is built from the fact when it is read (OO_PG_EVENT_DATA, the view
// event_feed): the facts are never changed afterwards in what data holds, so every read gives the
// same bytes, and building the JSON, most of an event's cost, stays off the statement that
// writes the fact.
//
// The feed's order is (tx, event_id): `tx` is the writing transaction's id, and a reader only
// returns events whose transaction is below the oldest transaction still running
// (oo_event_horizon), so an event that commits late is never passed over by a reader that
// already went beyond a higher event_id (the outbox bug a plain `event_id > cursor` has).
// Transactions are cluster-wide: one that pg_stat_activity shows in another database cannot
// write these events and is left out; one it cannot place (another role's, without
// pg_read_all_stats; a prepared transaction) holds the horizon, to be safe.
// `oo_event_shift()` keeps `tx` growing across a dump and restore into a new cluster, whose
// transaction ids start again low: `onceorder migrate` replaces it with a larger constant when it
// must (store/migrate.cpp). A constant function, folded into every plan: a per-event lookup of a
// settings row cost a fifth of a placement's statement.
// UNIQUE (type, key): a fact has one event; a second would make its statement fail.
constexpr std::string_view kEventsUp = R"sql(
LOCK TABLE orders, production_orders, documents, schedule_runs IN SHARE ROW EXCLUSIVE MODE;
CREATE FUNCTION oo_event_shift() RETURNS bigint LANGUAGE sql IMMUTABLE AS $$ SELECT 0::bigint $$;
CREATE FUNCTION oo_event_tx() RETURNS bigint LANGUAGE sql VOLATILE AS
$$ SELECT pg_current_xact_id()::text::bigint + oo_event_shift() $$;
CREATE FUNCTION oo_event_horizon() RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT min(x)::text::bigint FROM pg_snapshot_xip(s) x
     WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                       WHERE a.backend_xid = xid(x) AND a.datname IS DISTINCT FROM current_database())),
    pg_snapshot_xmax(s)::text::bigint) + oo_event_shift()
  FROM pg_current_snapshot() s
$$;

CREATE TABLE events (
  event_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tx          bigint NOT NULL DEFAULT oo_event_tx(),
  type        text NOT NULL CHECK (type IN ('order.placed', 'order.cancelled',
                'production_order.created', 'document.issued', 'run.finished')),
  key         text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  ref         bigint NOT NULL,
  ref_scope   text NOT NULL DEFAULT '',
  UNIQUE (type, key)
);
CREATE INDEX events_feed ON events (tx, event_id);

CREATE FUNCTION oo_js(v text) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(to_json(v)::text, 'null') $$;
CREATE FUNCTION oo_utc(t timestamptz) RETURNS text LANGUAGE sql STABLE AS
$$ SELECT coalesce('"' || to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') $$;

-- Each event type's data, compact JSON text, from its fact (NULL when the fact is gone: I18–I22).
-- The events as a reader outside OnceOrder sees them (the feed's rows with their data).
CREATE VIEW event_feed AS
SELECT e.event_id, e.tx, e.type, e.key, e.occurred_at,
       coalesce()sql" OO_PG_EVENT_DATA("e") R"sql(, 'null') AS data
FROM events e;

-- Facts made before this migration get their events now, in the order they happened.
INSERT INTO events (type, key, occurred_at, ref, ref_scope)
SELECT type, key, at, ref, ref_scope FROM (
  SELECT 'order.placed' AS type, o.order_id::text AS key, o.created_at AS at, o.order_id AS ref,
         '' AS ref_scope FROM orders o
  UNION ALL SELECT 'order.cancelled', o.order_id::text, coalesce(o.cancelled_at, o.created_at),
         o.order_id, '' FROM orders o WHERE o.status = 'cancelled'
  UNION ALL SELECT 'production_order.created', p.site_code || '/' || p.order_no || '/' || p.lot_no,
         p.created_at, p.item_id, '' FROM production_orders p
  UNION ALL SELECT 'document.issued', d.scope || '/' || d.number, d.created_at, d.value, d.scope
    FROM documents d WHERE d.origin = 'issued'
  UNION ALL SELECT 'run.finished', r.run_id::text, coalesce(r.finished_at, r.created_at),
         r.run_id, '' FROM schedule_runs r WHERE r.status IN ('done', 'error') AND r.kind <> 'legacy') f
ORDER BY at, type, key;

CREATE FUNCTION oo_events_order_placed() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'order.placed',
         n.order_id::text, n.created_at, n.order_id
  FROM oo_new_orders n ORDER BY n.order_id;
  RETURN NULL;
END $$;
CREATE TRIGGER events_order_placed AFTER INSERT ON orders
  REFERENCING NEW TABLE AS oo_new_orders FOR EACH STATEMENT EXECUTE FUNCTION oo_events_order_placed();

CREATE FUNCTION oo_events_order_cancelled() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'order.cancelled',
         n.order_id::text, coalesce(n.cancelled_at, now()), n.order_id
  FROM oo_new_orders n JOIN oo_old_orders o ON o.order_id = n.order_id
  WHERE n.status = 'cancelled' AND o.status <> 'cancelled' ORDER BY n.order_id;
  RETURN NULL;
END $$;
CREATE TRIGGER events_order_cancelled AFTER UPDATE ON orders
  REFERENCING OLD TABLE AS oo_old_orders NEW TABLE AS oo_new_orders
  FOR EACH STATEMENT EXECUTE FUNCTION oo_events_order_cancelled();

CREATE FUNCTION oo_events_production_order() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'production_order.created',
         p.site_code || '/' || p.order_no || '/' || p.lot_no, p.created_at, p.item_id
  FROM oo_new_production p ORDER BY p.item_id;
  RETURN NULL;
END $$;
CREATE TRIGGER events_production_order AFTER INSERT ON production_orders
  REFERENCING NEW TABLE AS oo_new_production
  FOR EACH STATEMENT EXECUTE FUNCTION oo_events_production_order();

-- Legacy documents are imported history, not numbers OnceOrder issued, and a legacy run is
-- the record of an old system's items (inserted finished): neither has an event.
CREATE FUNCTION oo_events_document_issued() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref, ref_scope)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'document.issued',
         d.scope || '/' || d.number, d.created_at, d.value, d.scope
  FROM oo_new_documents d WHERE d.origin = 'issued' ORDER BY d.scope, d.value;
  RETURN NULL;
END $$;
CREATE TRIGGER events_document_issued AFTER INSERT ON documents
  REFERENCING NEW TABLE AS oo_new_documents
  FOR EACH STATEMENT EXECUTE FUNCTION oo_events_document_issued();

CREATE FUNCTION oo_events_run_finished() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'run.finished',
         n.run_id::text, coalesce(n.finished_at, now()), n.run_id
  FROM oo_new_runs n JOIN oo_old_runs o ON o.run_id = n.run_id
  WHERE n.status IN ('done', 'error') AND o.status NOT IN ('done', 'error')
    AND n.kind <> 'legacy' ORDER BY n.run_id;
  RETURN NULL;
END $$;
CREATE TRIGGER events_run_finished AFTER UPDATE ON schedule_runs
  REFERENCING OLD TABLE AS oo_old_runs NEW TABLE AS oo_new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION oo_events_run_finished();
)sql";
constexpr std::string_view kEventsDown = R"sql(
DROP TRIGGER events_run_finished ON schedule_runs;
DROP TRIGGER events_document_issued ON documents;
DROP TRIGGER events_production_order ON production_orders;
DROP TRIGGER events_order_cancelled ON orders;
DROP TRIGGER events_order_placed ON orders;
DROP FUNCTION oo_events_run_finished();
DROP FUNCTION oo_events_document_issued();
DROP FUNCTION oo_events_production_order();
DROP FUNCTION oo_events_order_cancelled();
DROP FUNCTION oo_events_order_placed();
DROP VIEW event_feed;
DROP TABLE events;
DROP FUNCTION oo_utc(timestamptz);
DROP FUNCTION oo_js(text);
DROP FUNCTION oo_event_horizon();
DROP FUNCTION oo_event_tx();
DROP FUNCTION oo_event_shift();
)sql";

// Readers of the outbox (docs/EVENTS.md): named feed consumers keep their position here;
// endpoints are receivers OnceOrder pushes to, each with its own position in the feed up to
// which its deliveries were made; a delivery is one event for one endpoint, claimed with a
// lease and an attempt number (the fencing token, as for schedule items) and settled under
// that fence. (ev_tx, event_id) is the event's feed position: a key's deliveries go in that
// order, and the partial index finds a key's undelivered predecessors.
constexpr std::string_view kDeliveriesUp = R"sql(
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
)sql";
constexpr std::string_view kDeliveriesDown = R"sql(
DROP TABLE deliveries;
DROP TABLE endpoints;
DROP TABLE event_consumers;
)sql";

constexpr Migration kMigrations[] = {
    {1, "document_numbers", kDocumentsUp, kDocumentsDown},
    {2, "production_scheduling", kSchedulingUp, kSchedulingDown},
    {3, "live_item_index", kLiveIndexUp, kLiveIndexDown, true, "schedule_items_live",
     kLiveIndexNewRowsOnlyUp},
    {4, "order_intake", kIntakeUp, kIntakeDown},
    {5, "cancel_guard", kCancelGuardUp, kCancelGuardDown},
    {6, "legacy_resolution", kLegacyResolutionUp, kLegacyResolutionDown},
    {7, "order_receipts_by_age", kOrderReceiptsByAgeUp, kOrderReceiptsByAgeDown, true,
     "order_receipts_by_age"},
    {8, "document_receipts_by_age", kDocumentReceiptsByAgeUp, kDocumentReceiptsByAgeDown, true,
     "document_receipts_by_age"},
    {9, "schedule_key_facts", kScheduleKeyFactsUp, kScheduleKeyFactsDown},
    {10, "request_receipts", kRequestReceiptsUp, kRequestReceiptsDown},
    {11, "orders_by_customer", kOrdersByCustomerUp, kOrdersByCustomerDown, true,
     "orders_by_customer"},
    {12, "leader_leases", kLeaderLeasesUp, kLeaderLeasesDown},
    {13, "operator_actions", kOperatorActionsUp, kOperatorActionsDown},
    {14, "orders_by_time", kOrdersByTimeUp, kOrdersByTimeDown, true, "orders_by_time"},
    {15, "production_orders_by_time", kProductionOrdersByTimeUp, kProductionOrdersByTimeDown, true,
     "production_orders_by_time"},
    {16, "documents_issued_by_time", kIssuedDocumentsByTimeUp, kIssuedDocumentsByTimeDown, true,
     "documents_issued_by_time"},
    {17, "schedule_actions", kScheduleActionsUp, kScheduleActionsDown},
    {18, "schedule_items_failed", kFailedItemsUp, kFailedItemsDown, true, "schedule_items_failed"},
    {19, "schedule_item_events", kItemEventsUp, kItemEventsDown},
    {20, "item_events_without_jit", kItemEventsWithoutJitUp, kItemEventsWithoutJitDown},
    {21, "reserved_on_stock", kReservedOnStockUp, kReservedOnStockDown},
    {22, "events", kEventsUp, kEventsDown},
    {23, "deliveries", kDeliveriesUp, kDeliveriesDown},
    {24, "audit_outcome", kAuditOutcomeUp, kAuditOutcomeDown},
    {25, "principals", kPrincipalsUp, kPrincipalsDown},
    {26, "document_bodies", kDocumentBodiesUp, kDocumentBodiesDown},
    {27, "key_facts_deny_list", kKeyFactsDenyListUp, kKeyFactsDenyListDown},
};

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

}  // namespace onceorder::store::postgres
