-- Order intake (seeds 004, 002). Stock rows per (warehouse, SKU) never go negative; every
-- change of `available` is a ledger entry.
CREATE TABLE stock (
  warehouse_id INTEGER NOT NULL CHECK (warehouse_id > 0),
  sku_id       INTEGER NOT NULL CHECK (sku_id > 0),
  available    INTEGER NOT NULL CHECK (available >= 0),
  price_cents  INTEGER NOT NULL CHECK (price_cents >= 0),
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
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
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
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
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
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
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
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
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
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
