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
INSERT INTO reservations (order_id, line_no, warehouse_id, sku_id, quantity, status, created_at,
  released_at)
SELECT l.order_id, l.line_no, o.warehouse_id, l.sku_id, l.quantity,
  CASE o.status WHEN 'placed' THEN 'active' ELSE 'released' END, o.created_at, o.cancelled_at
FROM order_lines l JOIN orders o ON o.order_id = l.order_id;
ALTER TABLE stock DROP COLUMN reserved;
