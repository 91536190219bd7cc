ALTER TABLE source_orders DROP COLUMN cancelled_at;
DROP TABLE id_nodes;
DROP TABLE order_receipts;
DROP TABLE reservations;
DROP TABLE order_lines;
DROP TABLE orders;
DROP TABLE stock_ledger;
DROP TABLE stock;
