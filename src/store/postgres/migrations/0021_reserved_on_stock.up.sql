-- A reservation is an order line of a placed order: the table that repeated each line with a
-- status (`active` while the order is placed, `released` once cancelled) is folded into what
-- already says so. Each placed line's quantity is counted on its stock row (`reserved`,
-- changed by the same UPDATE that changes `available`), and the ledger's `reservation` and
-- `release` entries, one per line, keep the history. An order then writes one row, two index
-- entries and two foreign-key checks less per line; invariants I4 and I5 check the fold from both sides.
ALTER TABLE stock ADD COLUMN reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0);
UPDATE stock s SET reserved = r.q FROM (SELECT warehouse_id, sku_id, sum(quantity) AS q
  FROM reservations WHERE status = 'active' GROUP BY warehouse_id, sku_id) r
  WHERE r.warehouse_id = s.warehouse_id AND r.sku_id = s.sku_id;
DROP TABLE reservations;
