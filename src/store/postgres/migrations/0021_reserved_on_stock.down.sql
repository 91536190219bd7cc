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
