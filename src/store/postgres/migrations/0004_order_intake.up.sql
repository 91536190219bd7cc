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
