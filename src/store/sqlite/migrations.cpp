#include "store/migrations.hpp"
#include "store/sqlite/audit_migrations.hpp"
#include "store/sqlite/document_body_migrations.hpp"
#include "store/sqlite/key_facts_migrations.hpp"
#include "store/sqlite/principal_migrations.hpp"
#include "store/sqlite/sql_text.hpp"

namespace onceorder::store::sqlite {
namespace {

// A timestamp column's default: the time of the insert, in the form every timestamp column
// holds. Part of applied migrations: its text must not change.
#define OO_DEFAULT_NOW "DEFAULT (" OO_SQLITE_NOW ")"

// Document numbers (seed 003): one counter row per scope, taken and used in the
// transaction that inserts the document; (scope, value) unique as the backstop.
// Timestamps are ISO 8601 UTC text with milliseconds.
constexpr std::string_view kDocumentsUp = R"sql(
CREATE TABLE doc_scopes (
  scope      TEXT PRIMARY KEY CHECK (length(scope) BETWEEN 1 AND 64 AND scope NOT GLOB '*[^A-Za-z0-9._-]*'),
  width      INTEGER NOT NULL DEFAULT 4 CHECK (width BETWEEN 1 AND 18),
  radix      INTEGER NOT NULL DEFAULT 10 CHECK (radix BETWEEN 2 AND 36),
  max_value  INTEGER NOT NULL DEFAULT 9999 CHECK (max_value >= 1),
  last_value INTEGER NOT NULL DEFAULT 0 CHECK (last_value >= 0 AND last_value <= max_value),
  created_at TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(
) STRICT;

CREATE TABLE documents (
  scope      TEXT NOT NULL REFERENCES doc_scopes (scope),
  value      INTEGER NOT NULL CHECK (value >= 1),
  number     TEXT NOT NULL,
  origin     TEXT NOT NULL CHECK (origin IN ('issued', 'legacy')),
  scheme     TEXT NOT NULL,
  title      TEXT NOT NULL,
  created_at TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (scope, value)
) STRICT;

CREATE TABLE document_receipts (
  scope           TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  title           TEXT NOT NULL,
  value           INTEGER NOT NULL,
  created_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (scope, idempotency_key),
  FOREIGN KEY (scope, value) REFERENCES documents (scope, value)
) STRICT;
)sql";

constexpr std::string_view kDocumentsDown = R"sql(
DROP TABLE document_receipts;
DROP TABLE documents;
DROP TABLE doc_scopes;
)sql";

constexpr std::string_view kSchedulingUp = R"sql(
-- Production scheduling (seed 000). Business data (source_orders) and processing state
-- (schedule_items) are different facts in different tables.
CREATE TABLE source_orders (
  site_code  TEXT NOT NULL,
  order_no   TEXT NOT NULL,
  lot_no     TEXT NOT NULL,
  quantity   INTEGER NOT NULL CHECK (quantity > 0),
  created_at TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (site_code, order_no, lot_no)
) STRICT;

CREATE TABLE schedule_runs (
  run_id       INTEGER PRIMARY KEY AUTOINCREMENT,
  kind         TEXT NOT NULL CHECK (kind IN ('batch', 'manual', 'legacy')),
  status       TEXT NOT NULL CHECK (status IN ('creating', 'running', 'done', 'error')),
  owner        TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  error        TEXT,
  created_at   TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  finished_at  TEXT
) STRICT;
CREATE INDEX schedule_runs_live ON schedule_runs (status) WHERE status IN ('creating', 'running');

CREATE TABLE schedule_items (
  item_id     INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id      INTEGER NOT NULL REFERENCES schedule_runs (run_id),
  site_code   TEXT NOT NULL,
  order_no    TEXT NOT NULL,
  lot_no      TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('wait', 'processing', 'success', 'failed', 'aborted')),
  attempt     INTEGER NOT NULL DEFAULT 0,
  owner       TEXT,
  lease_until TEXT,
  error       TEXT,
  created_at  TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  updated_at  TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  FOREIGN KEY (site_code, order_no, lot_no) REFERENCES source_orders (site_code, order_no, lot_no)
) STRICT;
CREATE INDEX schedule_items_by_key ON schedule_items (site_code, order_no, lot_no, status);
CREATE INDEX schedule_items_by_run ON schedule_items (run_id, status);
CREATE INDEX schedule_items_processing ON schedule_items (lease_until) WHERE status = 'processing';

CREATE TABLE production_orders (
  site_code       TEXT NOT NULL,
  order_no        TEXT NOT NULL,
  lot_no          TEXT NOT NULL,
  item_id         INTEGER NOT NULL UNIQUE REFERENCES schedule_items (item_id),
  quantity        INTEGER NOT NULL,
  document_scope  TEXT NOT NULL,
  document_value  INTEGER NOT NULL,
  document_number TEXT NOT NULL,
  created_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (site_code, order_no, lot_no),
  FOREIGN KEY (document_scope, document_value) REFERENCES documents (scope, value)
) STRICT;

-- Legacy items wait here until `onceorder legacy dedup --apply` moves them.
CREATE TABLE legacy_items (
  legacy_id  INTEGER PRIMARY KEY AUTOINCREMENT,
  line_no    INTEGER NOT NULL,
  site_code  TEXT NOT NULL,
  order_no   TEXT NOT NULL,
  lot_no     TEXT NOT NULL,
  status     TEXT NOT NULL CHECK (status IN ('wait', 'processing', 'success', 'failed', 'aborted')),
  created_at TEXT NOT NULL,
  run_id     TEXT,
  moved_at   TEXT,
  item_id    INTEGER
) STRICT;
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
constexpr std::string_view kLiveIndexUp = R"sql(
-- At most one live item per business key. A deny-list: a status added later blocks
-- duplicates until it is deliberately listed here (fail-closed).
CREATE UNIQUE INDEX schedule_items_live ON schedule_items (site_code, order_no, lot_no)
  WHERE status NOT IN ('failed', 'aborted');
)sql";

// The seed's ENABLE NOVALIDATE (`migrate --live-index=new-rows-only`): rows above the
// watermark are held to the rule, older rows (and their duplicates) are left as they are.
// The watermark lives in the index's text, where invariants I1 and I10 read it.
constexpr std::string_view kLiveIndexNewRowsOnlyUp =
    "CREATE UNIQUE INDEX schedule_items_live ON schedule_items (site_code, order_no, lot_no) "
    "WHERE status NOT IN ('failed', 'aborted') AND item_id > {watermark}";

constexpr std::string_view kLiveIndexDown = R"sql(
DROP INDEX schedule_items_live;
)sql";

constexpr std::string_view kIntakeUp = R"sql(
-- Order intake (seeds 004, 002). Stock rows per (warehouse, SKU) never go negative; every
-- change of `available` is a ledger entry.
CREATE TABLE stock (
  warehouse_id INTEGER NOT NULL CHECK (warehouse_id > 0),
  sku_id       INTEGER NOT NULL CHECK (sku_id > 0),
  available    INTEGER NOT NULL CHECK (available >= 0),
  price_cents  INTEGER NOT NULL CHECK (price_cents >= 0),
  created_at   TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  updated_at   TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (warehouse_id, sku_id)
) STRICT;

CREATE TABLE stock_ledger (
  entry_id     INTEGER PRIMARY KEY AUTOINCREMENT,
  warehouse_id INTEGER NOT NULL,
  sku_id       INTEGER NOT NULL,
  delta        INTEGER NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('initial', 'adjustment', 'reservation', 'release')),
  reason       TEXT,
  order_id     INTEGER,
  line_no      INTEGER,
  created_at   TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  FOREIGN KEY (warehouse_id, sku_id) REFERENCES stock (warehouse_id, sku_id)
) STRICT;
CREATE INDEX stock_ledger_by_sku ON stock_ledger (warehouse_id, sku_id);

CREATE TABLE orders (
  order_id     INTEGER PRIMARY KEY,
  order_no     TEXT NOT NULL UNIQUE,
  customer_id  INTEGER NOT NULL CHECK (customer_id > 0),
  warehouse_id INTEGER NOT NULL CHECK (warehouse_id > 0),
  status       TEXT NOT NULL CHECK (status IN ('placed', 'cancelled')),
  total_cents  INTEGER NOT NULL,
  created_at   TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  cancelled_at TEXT
) STRICT;

CREATE TABLE order_lines (
  order_id         INTEGER NOT NULL REFERENCES orders (order_id),
  line_no          INTEGER NOT NULL CHECK (line_no >= 1),
  sku_id           INTEGER NOT NULL,
  quantity         INTEGER NOT NULL CHECK (quantity > 0),
  unit_price_cents INTEGER NOT NULL,
  PRIMARY KEY (order_id, line_no),
  UNIQUE (order_id, sku_id)
) STRICT;

-- A reservation belongs to one order line; cancel releases exactly those.
CREATE TABLE reservations (
  order_id     INTEGER NOT NULL,
  line_no      INTEGER NOT NULL,
  warehouse_id INTEGER NOT NULL,
  sku_id       INTEGER NOT NULL,
  quantity     INTEGER NOT NULL CHECK (quantity > 0),
  status       TEXT NOT NULL CHECK (status IN ('active', 'released')),
  created_at   TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  released_at  TEXT,
  PRIMARY KEY (order_id, line_no),
  FOREIGN KEY (order_id, line_no) REFERENCES order_lines (order_id, line_no),
  FOREIGN KEY (warehouse_id, sku_id) REFERENCES stock (warehouse_id, sku_id)
) STRICT;
CREATE INDEX reservations_active ON reservations (warehouse_id, sku_id) WHERE status = 'active';

-- One decision per (customer, key): `placed` with its order, or `out_of_stock` with the
-- shortages, replayed as it was first answered.
CREATE TABLE order_receipts (
  customer_id     INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL,
  warehouse_id    INTEGER NOT NULL,
  normalized      TEXT NOT NULL,
  normalization   INTEGER NOT NULL,
  outcome         TEXT CHECK (outcome IN ('placed', 'out_of_stock')),
  order_id        INTEGER REFERENCES orders (order_id),
  shortages       TEXT,
  created_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (customer_id, idempotency_key),
  CHECK ((outcome = 'placed') = (order_id IS NOT NULL))
) STRICT;

-- Order-id node leases: a process holds one node id while its lease lasts.
CREATE TABLE id_nodes (
  node_id        INTEGER PRIMARY KEY CHECK (node_id BETWEEN 0 AND 255),
  holder         TEXT,
  lease_until_ms INTEGER NOT NULL DEFAULT 0
) STRICT;
WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 255)
INSERT INTO id_nodes (node_id) SELECT n FROM g;

-- A cancelled order's lines are no longer scheduling candidates.
ALTER TABLE source_orders ADD COLUMN cancelled_at TEXT;
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

// A cancelled source order never has a production order. SQLite has one writer at a time,
// so triggers that read the other table are enough to make it a rule of the database.
constexpr std::string_view kCancelGuardUp = R"sql(
CREATE TRIGGER production_orders_live_source BEFORE INSERT ON production_orders
WHEN NOT EXISTS (SELECT 1 FROM source_orders so WHERE so.site_code = NEW.site_code
                 AND so.order_no = NEW.order_no AND so.lot_no = NEW.lot_no
                 AND so.cancelled_at IS NULL)
BEGIN
  SELECT RAISE(ABORT, 'production order for a cancelled or unknown source order');
END;
CREATE TRIGGER source_orders_cancel_unproduced BEFORE UPDATE OF cancelled_at ON source_orders
WHEN NEW.cancelled_at IS NOT NULL AND EXISTS (SELECT 1 FROM production_orders p
     WHERE p.site_code = NEW.site_code AND p.order_no = NEW.order_no AND p.lot_no = NEW.lot_no)
BEGIN
  SELECT RAISE(ABORT, 'a source order with a production order cannot be cancelled');
END;
)sql";

constexpr std::string_view kCancelGuardDown = R"sql(
DROP TRIGGER source_orders_cancel_unproduced;
DROP TRIGGER production_orders_live_source;
)sql";

// The operator's word on a legacy row the old system had in flight at the cutover (made or
// not made): `legacy dedup --apply` refuses to move a `processing` row without it, so that
// OnceOrder never makes again what the old system may have made. The index keeps the
// "no candidate while its legacy history is staged" test cheap (empty after the cutover).
constexpr std::string_view kLegacyResolutionUp = R"sql(
ALTER TABLE legacy_items ADD COLUMN resolution TEXT CHECK (resolution IN ('made', 'not_made'));
ALTER TABLE legacy_items ADD COLUMN resolved_at TEXT;
CREATE INDEX legacy_items_pending ON legacy_items (site_code, order_no, lot_no) WHERE moved_at IS NULL;
)sql";

constexpr std::string_view kLegacyResolutionDown = R"sql(
DROP INDEX legacy_items_pending;
ALTER TABLE legacy_items DROP COLUMN resolved_at;
ALTER TABLE legacy_items DROP COLUMN resolution;
)sql";

// Receipts expire after the published retention (API.md "How long a key lives"); the
// maintenance pass finds the old ones by age, a batch at a time.
constexpr std::string_view kOrderReceiptsByAgeUp =
    "CREATE INDEX order_receipts_by_age ON order_receipts (created_at)";
constexpr std::string_view kOrderReceiptsByAgeDown = "DROP INDEX order_receipts_by_age";
constexpr std::string_view kDocumentReceiptsByAgeUp =
    "CREATE INDEX document_receipts_by_age ON document_receipts (created_at)";
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
// the effect; a run's receipt points at its run.
constexpr std::string_view kRequestReceiptsUp = R"sql(
CREATE TABLE request_receipts (
  route           TEXT NOT NULL CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment')),
  scope           TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request         TEXT NOT NULL,
  answer          TEXT,
  run_id          INTEGER REFERENCES schedule_runs (run_id),
  created_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (route, scope, idempotency_key),
  CHECK (run_id IS NULL OR route = 'schedule_run')
) STRICT;
CREATE INDEX request_receipts_by_age ON request_receipts (created_at);
)sql";
constexpr std::string_view kRequestReceiptsDown = "DROP TABLE request_receipts";

// A customer's orders, newest first (GET /v1/orders for a customer token), without a scan of
// everyone's.
constexpr std::string_view kOrdersByCustomerUp =
    "CREATE INDEX orders_by_customer ON orders (customer_id, order_id)";
constexpr std::string_view kOrdersByCustomerDown = "DROP INDEX orders_by_customer";

// The maintenance leader's lease (service/maintenance.cpp): a row with an expiry, taken and
// renewed in short transactions, instead of a session advisory lock, which a
// transaction-mode pooler would leave on whichever server connection ran it. One row per
// job name; `term` grows with each new holder.
constexpr std::string_view kLeaderLeasesUp = R"sql(
CREATE TABLE leader_leases (
  name           TEXT PRIMARY KEY,
  holder         TEXT NOT NULL,
  lease_until_ms INTEGER NOT NULL,
  term           INTEGER NOT NULL CHECK (term > 0)
);
)sql";
constexpr std::string_view kLeaderLeasesDown = "DROP TABLE leader_leases";

// The audit trail (API.md "The audit trail"): one row per audited request, written by the
// HTTP layer right after the handler's own transaction (http/api.cpp).
constexpr std::string_view kOperatorActionsUp = R"sql(
CREATE TABLE operator_actions (
  action_id INTEGER PRIMARY KEY AUTOINCREMENT,
  at        TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  principal TEXT NOT NULL CHECK (length(principal) BETWEEN 1 AND 100),
  role      TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'customer')),
  action    TEXT NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
  target    TEXT,
  status    INTEGER NOT NULL CHECK (status BETWEEN 100 AND 599),
  summary   TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX operator_actions_by_age ON operator_actions (at);
)sql";
constexpr std::string_view kOperatorActionsDown = "DROP TABLE operator_actions";

// The console's per-minute charts (GET /v1/stats/activity) count the rows of the last minutes
// by created_at: a range over these indexes, never a scan of the table.
constexpr std::string_view kOrdersByTimeUp = "CREATE INDEX orders_by_time ON orders (created_at)";
constexpr std::string_view kOrdersByTimeDown = "DROP INDEX orders_by_time";
constexpr std::string_view kProductionOrdersByTimeUp =
    "CREATE INDEX production_orders_by_time ON production_orders (created_at)";
constexpr std::string_view kProductionOrdersByTimeDown = "DROP INDEX production_orders_by_time";
// Issued numbers only: legacy documents carry their import time and are not activity.
constexpr std::string_view kIssuedDocumentsByTimeUp =
    "CREATE INDEX documents_issued_by_time ON documents (created_at) WHERE origin = 'issued'";
constexpr std::string_view kIssuedDocumentsByTimeDown = "DROP INDEX documents_issued_by_time";
// The operator's actions on scheduling (API.md "Console actions"). A re-queue gives an order
// that reached the attempt limit a fresh budget without deleting its failed items:
// `requeued_failures` is how many of its failed items no longer count, and the view's
// `failed` subtracts it, so that every candidate statement keeps reading one column. A stop
// request is a mark on the run that the process running it reads at its next batch
// boundary (whichever process that is). A re-queue's Idempotency-Key receipt is a route of
// request_receipts of its own.
constexpr std::string_view kScheduleActionsUp = R"sql(
ALTER TABLE source_orders ADD COLUMN requeued_failures INTEGER NOT NULL DEFAULT 0 CHECK (requeued_failures >= 0);
ALTER TABLE source_orders ADD COLUMN requeued_at TEXT;
ALTER TABLE schedule_runs ADD COLUMN stop_requested_at TEXT;
-- SQLite cannot change a CHECK: the receipts table is rebuilt with the new route.
CREATE TABLE request_receipts_next (
  route           TEXT NOT NULL CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment', 'schedule_requeue')),
  scope           TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request         TEXT NOT NULL,
  answer          TEXT,
  run_id          INTEGER REFERENCES schedule_runs (run_id),
  created_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (route, scope, idempotency_key),
  CHECK (run_id IS NULL OR route = 'schedule_run')
) STRICT;
INSERT INTO request_receipts_next SELECT route, scope, idempotency_key, request, answer, run_id,
  created_at FROM request_receipts;
DROP TABLE request_receipts;
ALTER TABLE request_receipts_next RENAME TO request_receipts;
CREATE INDEX request_receipts_by_age ON request_receipts (created_at);
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
CREATE TABLE request_receipts_next (
  route           TEXT NOT NULL CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment')),
  scope           TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request         TEXT NOT NULL,
  answer          TEXT,
  run_id          INTEGER REFERENCES schedule_runs (run_id),
  created_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  PRIMARY KEY (route, scope, idempotency_key),
  CHECK (run_id IS NULL OR route = 'schedule_run')
) STRICT;
INSERT INTO request_receipts_next SELECT route, scope, idempotency_key, request, answer, run_id,
  created_at FROM request_receipts WHERE route <> 'schedule_requeue';
DROP TABLE request_receipts;
ALTER TABLE request_receipts_next RENAME TO request_receipts;
CREATE INDEX request_receipts_by_age ON request_receipts (created_at);
ALTER TABLE schedule_runs DROP COLUMN stop_requested_at;
ALTER TABLE source_orders DROP COLUMN requeued_at;
ALTER TABLE source_orders DROP COLUMN requeued_failures;
)sql";

// The orders that reached the attempt limit (GET /v1/schedule/exhausted) are read over the
// failed items only, by key, and a key's last failure is the index's last entry for it.
constexpr std::string_view kFailedItemsUp =
    "CREATE INDEX schedule_items_failed ON schedule_items (site_code, order_no, lot_no, item_id) "
    "WHERE status = 'failed'";
constexpr std::string_view kFailedItemsDown = "DROP INDEX schedule_items_failed";

// Per-item history (issue 11, "timeline"): one row per change of an item's status or attempt,
// written by triggers, so that every statement that changes an item (claims, fences, fails,
// the reaper, cancel, a run's end, legacy moves) writes its event in the same statement
// without knowing about it, and none can forget. Items are never deleted (DESIGN.md rule 9),
// so there is no foreign key: it would cost a look-up per event. `kind` is derived from the
// change: created (a new wait item), imported (an item inserted in another status, a legacy
// move, or one that existed before this migration), claimed, produced, failed, released (the
// reaper's `lease expired`), aborted, resolved (an item of a legacy run settled by `legacy
// resolve`). `status` and `attempt` are the item's after the change: invariant I17 checks
// that an item's last event agrees with it. Existing items get one `imported` event, at
// their last update. `event_id` is the rowid, not AUTOINCREMENT: events are not deleted, so
// ids only grow, and AUTOINCREMENT's update of sqlite_sequence per event cost about a quarter
// of an item's processing (docs/BENCHMARKS.md, "Item events").
constexpr std::string_view kItemEventsUp = R"sql(
CREATE TABLE schedule_item_events (
  event_id    INTEGER PRIMARY KEY,
  item_id     INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('created', 'imported', 'claimed', 'produced', 'failed',
                                            'released', 'aborted', 'resolved')),
  status      TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  owner       TEXT,
  lease_until TEXT,
  detail      TEXT,
  at          TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(
) STRICT;
CREATE INDEX schedule_item_events_by_item ON schedule_item_events (item_id, event_id);
INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail, at)
  SELECT item_id, 'imported', status, attempt, owner, lease_until, error, updated_at
  FROM schedule_items ORDER BY item_id;
CREATE TRIGGER schedule_items_event_insert AFTER INSERT ON schedule_items
BEGIN
  INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail)
  VALUES (NEW.item_id, CASE WHEN NEW.status = 'wait' THEN 'created' ELSE 'imported' END,
          NEW.status, NEW.attempt, NEW.owner, NEW.lease_until, NEW.error);
END;
CREATE TRIGGER schedule_items_event_update AFTER UPDATE OF status, attempt ON schedule_items
WHEN OLD.status IS NOT NEW.status OR OLD.attempt IS NOT NEW.attempt
BEGIN
  INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail)
  VALUES (NEW.item_id, CASE
            WHEN NEW.status = 'processing' THEN 'claimed'
            WHEN NEW.status = 'aborted' THEN 'aborted'
            WHEN EXISTS (SELECT 1 FROM schedule_runs r WHERE r.run_id = NEW.run_id
                         AND r.kind = 'legacy') THEN 'resolved'
            WHEN NEW.status = 'success' THEN 'produced'
            WHEN NEW.error = 'lease expired' THEN 'released'
            ELSE 'failed' END,
          NEW.status, NEW.attempt, NEW.owner, NEW.lease_until, NEW.error);
END;
)sql";
constexpr std::string_view kItemEventsDown = R"sql(
DROP TRIGGER schedule_items_event_update;
DROP TRIGGER schedule_items_event_insert;
DROP TABLE schedule_item_events;
)sql";

// PostgreSQL's migration 20 turns JIT off in its event triggers; SQLite has no JIT. The
// version is kept so that both engines count their schema alike.
constexpr std::string_view kItemEventsWithoutJit = "SELECT 1;";

// PostgreSQL's migration 21 says why: reservations are the lines of placed orders, counted on
// their stock rows.
constexpr std::string_view kReservedOnStockUp = R"sql(
ALTER TABLE stock ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0);
UPDATE stock SET reserved = coalesce((SELECT sum(r.quantity) FROM reservations r
  WHERE r.warehouse_id = stock.warehouse_id AND r.sku_id = stock.sku_id
  AND r.status = 'active'), 0);
DROP TABLE reservations;
)sql";
constexpr std::string_view kReservedOnStockDown = R"sql(
CREATE TABLE reservations (
  order_id     INTEGER NOT NULL,
  line_no      INTEGER NOT NULL,
  warehouse_id INTEGER NOT NULL,
  sku_id       INTEGER NOT NULL,
  quantity     INTEGER NOT NULL CHECK (quantity > 0),
  status       TEXT NOT NULL CHECK (status IN ('active', 'released')),
  created_at   TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  released_at  TEXT,
  PRIMARY KEY (order_id, line_no),
  FOREIGN KEY (order_id, line_no) REFERENCES order_lines (order_id, line_no),
  FOREIGN KEY (warehouse_id, sku_id) REFERENCES stock (warehouse_id, sku_id)
) STRICT;
CREATE INDEX reservations_active ON reservations (warehouse_id, sku_id) WHERE status = 'active';
INSERT INTO reservations (order_id, line_no, warehouse_id, sku_id, quantity, status, created_at,
  released_at)
SELECT l.order_id, l.line_no, o.warehouse_id, l.sku_id, l.quantity,
  CASE o.status WHEN 'placed' THEN 'active' ELSE 'released' END, o.created_at, o.cancelled_at
FROM order_lines l JOIN orders o ON o.order_id = l.order_id;
ALTER TABLE stock DROP COLUMN reserved;
)sql";

// PostgreSQL's migration 22 says what the outbox is (docs/EVENTS.md): thin event rows written
// by triggers with their facts, and the view event_feed that adds each event's data, built from
// its fact when read. SQLite has one writer at a time: a transaction that writes an event holds
// the write lock until it commits, so event_id order is commit order and `tx` is always 0.
// Row-level triggers. The data builders are this engine's JSON functions; the shapes are
// PostgreSQL's (oo_event_data there).
#define OO_EVENT_DATA(E)                                                                          \
  "CASE " E                                                                                       \
  ".type WHEN 'order.placed' THEN (SELECT json_object('order_id', CAST(o.order_id AS "            \
  "TEXT), 'order_no', o.order_no, 'customer_id', o.customer_id, 'warehouse_id', o.warehouse_id, " \
  "'total_cents', o.total_cents, 'lines', (SELECT json_group_array(json(x)) FROM (SELECT "        \
  "json_object('line_no', l.line_no, 'sku_id', l.sku_id, 'quantity', l.quantity, "                \
  "'unit_price_cents', l.unit_price_cents) AS x FROM order_lines l WHERE l.order_id = "           \
  "o.order_id ORDER BY l.line_no))) FROM orders o WHERE o.order_id = " E                          \
  ".ref) "                                                                                        \
  "WHEN 'order.cancelled' THEN (SELECT json_object('order_id', CAST(o.order_id AS TEXT), "        \
  "'order_no', o.order_no, 'customer_id', o.customer_id, 'warehouse_id', o.warehouse_id) FROM "   \
  "orders o WHERE o.order_id = " E                                                                \
  ".ref) "                                                                                        \
  "WHEN 'production_order.created' THEN (SELECT json_object('site_code', p.site_code, "           \
  "'order_no', p.order_no, 'lot_no', p.lot_no, 'quantity', p.quantity, 'document_scope', "        \
  "p.document_scope, 'document_number', p.document_number, 'run_id', i.run_id, 'item_id', "       \
  "p.item_id) FROM production_orders p LEFT JOIN schedule_items i ON i.item_id = p.item_id "      \
  "WHERE p.item_id = " E                                                                          \
  ".ref) "                                                                                        \
  "WHEN 'document.issued' THEN (SELECT json_object('scope', d.scope, 'value', d.value, "          \
  "'number', d.number, 'title', d.title) FROM documents d WHERE d.scope = " E                     \
  ".ref_scope AND d.value = " E                                                                   \
  ".ref) "                                                                                        \
  "WHEN 'run.finished' THEN (SELECT json_object('run_id', r.run_id, 'kind', r.kind, 'status', "   \
  "r.status, 'error', r.error, 'created_at', r.created_at) FROM schedule_runs r WHERE r.run_id "  \
  "= " E ".ref) END"

constexpr std::string_view kEventsUp = R"sql(
CREATE TABLE events (
  event_id    INTEGER PRIMARY KEY AUTOINCREMENT,
  tx          INTEGER NOT NULL DEFAULT 0,
  type        TEXT NOT NULL CHECK (type IN ('order.placed', 'order.cancelled',
                'production_order.created', 'document.issued', 'run.finished')),
  key         TEXT NOT NULL,
  occurred_at TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  ref         INTEGER NOT NULL,
  ref_scope   TEXT NOT NULL DEFAULT '',
  UNIQUE (type, key)
) STRICT;
CREATE INDEX events_feed ON events (tx, event_id);
CREATE VIEW event_feed AS
SELECT e.event_id, e.tx, e.type, e.key, e.occurred_at,
       coalesce()sql" OO_EVENT_DATA("e") R"sql(, 'null') AS data
FROM events e;

INSERT INTO events (type, key, occurred_at, ref, ref_scope)
SELECT type, key, at, ref, ref_scope FROM (
  SELECT 'order.placed' AS type, CAST(o.order_id AS TEXT) AS key, o.created_at AS at,
         o.order_id AS ref, '' AS ref_scope FROM orders o
  UNION ALL SELECT 'order.cancelled', CAST(o.order_id AS TEXT), coalesce(o.cancelled_at, o.created_at),
         o.order_id, '' FROM orders o WHERE o.status = 'cancelled'
  UNION ALL SELECT 'production_order.created', p.site_code || '/' || p.order_no || '/' || p.lot_no,
         p.created_at, p.item_id, '' FROM production_orders p
  UNION ALL SELECT 'document.issued', d.scope || '/' || d.number, d.created_at, d.value, d.scope
    FROM documents d WHERE d.origin = 'issued'
  UNION ALL SELECT 'run.finished', CAST(r.run_id AS TEXT), coalesce(r.finished_at, r.created_at),
         r.run_id, '' FROM schedule_runs r WHERE r.status IN ('done', 'error') AND r.kind <> 'legacy')
ORDER BY at, type, key;

CREATE TRIGGER events_order_placed AFTER INSERT ON orders
BEGIN
  INSERT INTO events (type, key, occurred_at, ref)
  VALUES ('order.placed', CAST(NEW.order_id AS TEXT), NEW.created_at, NEW.order_id);
END;
CREATE TRIGGER events_order_cancelled AFTER UPDATE OF status ON orders
WHEN NEW.status = 'cancelled' AND OLD.status <> 'cancelled'
BEGIN
  INSERT INTO events (type, key, occurred_at, ref)
  VALUES ('order.cancelled', CAST(NEW.order_id AS TEXT), coalesce(NEW.cancelled_at, )sql" OO_SQLITE_NOW
                                         R"sql(),
          NEW.order_id);
END;
CREATE TRIGGER events_production_order AFTER INSERT ON production_orders
BEGIN
  INSERT INTO events (type, key, occurred_at, ref)
  VALUES ('production_order.created', NEW.site_code || '/' || NEW.order_no || '/' || NEW.lot_no,
          NEW.created_at, NEW.item_id);
END;
CREATE TRIGGER events_document_issued AFTER INSERT ON documents WHEN NEW.origin = 'issued'
BEGIN
  INSERT INTO events (type, key, occurred_at, ref, ref_scope)
  VALUES ('document.issued', NEW.scope || '/' || NEW.number, NEW.created_at, NEW.value, NEW.scope);
END;
CREATE TRIGGER events_run_finished AFTER UPDATE OF status ON schedule_runs
WHEN NEW.status IN ('done', 'error') AND OLD.status NOT IN ('done', 'error') AND NEW.kind <> 'legacy'
BEGIN
  INSERT INTO events (type, key, occurred_at, ref)
  VALUES ('run.finished', CAST(NEW.run_id AS TEXT), coalesce(NEW.finished_at, )sql" OO_SQLITE_NOW
                                         R"sql(),
          NEW.run_id);
END;
)sql";
constexpr std::string_view kEventsDown = R"sql(
DROP TRIGGER events_run_finished;
DROP TRIGGER events_document_issued;
DROP TRIGGER events_production_order;
DROP TRIGGER events_order_cancelled;
DROP TRIGGER events_order_placed;
DROP VIEW event_feed;
DROP TABLE events;
)sql";

// PostgreSQL's migration 23 says what these are.
constexpr std::string_view kDeliveriesUp = R"sql(
CREATE TABLE event_consumers (
  name       TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64
                                     AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
  after_tx   INTEGER NOT NULL CHECK (after_tx >= 0),
  after_id   INTEGER NOT NULL CHECK (after_id >= 0),
  created_at TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  updated_at TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(
) STRICT;
CREATE TABLE endpoints (
  name            TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64
                                          AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
  url             TEXT NOT NULL,
  types           TEXT NOT NULL,
  secret          TEXT NOT NULL,
  delivery        TEXT NOT NULL CHECK (delivery IN ('at_least_once', 'at_most_once')),
  max_attempts    INTEGER NOT NULL CHECK (max_attempts BETWEEN 1 AND 100),
  backoff_seconds INTEGER NOT NULL CHECK (backoff_seconds BETWEEN 1 AND 86400),
  after_tx        INTEGER NOT NULL CHECK (after_tx >= 0),
  after_id        INTEGER NOT NULL CHECK (after_id >= 0),
  created_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  updated_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(
) STRICT;
CREATE TABLE deliveries (
  endpoint     TEXT NOT NULL REFERENCES endpoints (name) ON DELETE CASCADE,
  event_id     INTEGER NOT NULL REFERENCES events (event_id),
  ev_tx        INTEGER NOT NULL,
  key          TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'dead',
                                               'in_doubt')),
  mode         TEXT CHECK (mode IN ('at_least_once', 'at_most_once')),
  attempt      INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
  budget_from  INTEGER NOT NULL DEFAULT 0 CHECK (budget_from >= 0 AND budget_from <= attempt),
  owner        TEXT,
  lease_until  TEXT,
  next_at      TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  last_error   TEXT,
  last_status  INTEGER,
  resolution   TEXT CHECK (resolution IN ('delivered', 'resend', 'redeliver')),
  created_at   TEXT NOT NULL )sql" OO_DEFAULT_NOW R"sql(,
  sent_at      TEXT,
  delivered_at TEXT,
  PRIMARY KEY (endpoint, event_id),
  CHECK ((status = 'sending') = (lease_until IS NOT NULL))
) STRICT;
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
    {3, "live_item_index", kLiveIndexUp, kLiveIndexDown, false, "schedule_items_live",
     kLiveIndexNewRowsOnlyUp},
    {4, "order_intake", kIntakeUp, kIntakeDown},
    {5, "cancel_guard", kCancelGuardUp, kCancelGuardDown},
    {6, "legacy_resolution", kLegacyResolutionUp, kLegacyResolutionDown},
    {7, "order_receipts_by_age", kOrderReceiptsByAgeUp, kOrderReceiptsByAgeDown},
    {8, "document_receipts_by_age", kDocumentReceiptsByAgeUp, kDocumentReceiptsByAgeDown},
    {9, "schedule_key_facts", kScheduleKeyFactsUp, kScheduleKeyFactsDown},
    {10, "request_receipts", kRequestReceiptsUp, kRequestReceiptsDown},
    {11, "orders_by_customer", kOrdersByCustomerUp, kOrdersByCustomerDown},
    {12, "leader_leases", kLeaderLeasesUp, kLeaderLeasesDown},
    {13, "operator_actions", kOperatorActionsUp, kOperatorActionsDown},
    {14, "orders_by_time", kOrdersByTimeUp, kOrdersByTimeDown},
    {15, "production_orders_by_time", kProductionOrdersByTimeUp, kProductionOrdersByTimeDown},
    {16, "documents_issued_by_time", kIssuedDocumentsByTimeUp, kIssuedDocumentsByTimeDown},
    {17, "schedule_actions", kScheduleActionsUp, kScheduleActionsDown},
    {18, "schedule_items_failed", kFailedItemsUp, kFailedItemsDown},
    {19, "schedule_item_events", kItemEventsUp, kItemEventsDown},
    {20, "item_events_without_jit", kItemEventsWithoutJit, kItemEventsWithoutJit},
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

}  // namespace onceorder::store::sqlite
