-- What reading a batch's rows costs PostgreSQL, by how they travel: the rows of a batch of 8
-- five-line orders (the order, line and receipt columns in_place_many and
-- in_insert_receipts_lock_stock take) read 20,000 times as jsonb (jsonb_to_recordset, as
-- before) and as one parameter per column (unnest of string_to_array and text[] literals, as
-- now). Prints µs per batch for each form and for an empty statement (the loop's own cost).
-- docs/BENCHMARKS.md, "Batch rows as arrays".
-- Run: pg_virtualenv -t psql -qX -f bench/batch-rows.sql
CREATE TEMP TABLE b AS
SELECT
  (SELECT '[' || string_agg(format('{"id":%s,"n":%s,"w":1,"sku":%s,"q":1,"p":100,"site":"W1",'
                                   '"ono":"O%s","lot":"%s"}', 7e11 + o, l, o * 37 + l, 1e5 + o, l), ',') || ']'
   FROM generate_series(1, 8) o, generate_series(1, 5) l) AS lines_json,
  (SELECT '[' || string_agg(format('{"id":%s,"ono":"O%s","c":%s,"w":1,"t":500}', 7e11 + o, 1e5 + o, o), ',') || ']'
   FROM generate_series(1, 8) o) AS orders_json,
  (SELECT '[' || string_agg(format('{"i":%s,"c":%s,"w":1,"k":"key-%s","n":"%sx1,%sx1,%sx1,%sx1,%sx1"}',
                                   o, o, o, o, o + 1, o + 2, o + 3, o + 4), ',') || ']'
   FROM generate_series(1, 8) o) AS receipts_json,
  (SELECT string_agg((7e11 + o)::text, ',') FROM generate_series(1, 8) o, generate_series(1, 5) l) AS line_ids,
  (SELECT string_agg(l::text, ',') FROM generate_series(1, 8) o, generate_series(1, 5) l) AS line_nos,
  (SELECT string_agg((o * 37 + l)::text, ',') FROM generate_series(1, 8) o, generate_series(1, 5) l) AS skus,
  (SELECT '{' || string_agg('"O' || (1e5 + o) || '"', ',') || '}' FROM generate_series(1, 8) o, generate_series(1, 5) l) AS line_onos,
  (SELECT '{' || string_agg('"' || l || '"', ',') || '}' FROM generate_series(1, 8) o, generate_series(1, 5) l) AS lots,
  (SELECT string_agg((7e11 + o)::text, ',') FROM generate_series(1, 8) o) AS order_ids,
  (SELECT '{' || string_agg('"O' || (1e5 + o) || '"', ',') || '}' FROM generate_series(1, 8) o) AS order_nos,
  (SELECT string_agg(o::text, ',') FROM generate_series(1, 8) o) AS customers,
  (SELECT '{' || string_agg('"key-' || o || '"', ',') || '}' FROM generate_series(1, 8) o) AS keys,
  (SELECT '{' || string_agg(format('"%sx1,%sx1,%sx1,%sx1,%sx1"', o, o + 1, o + 2, o + 3, o + 4), ',') || '}'
   FROM generate_series(1, 8) o) AS carts;

CREATE TEMP TABLE result (form text, us_per_batch numeric);

DO $$
DECLARE
  r record;
  x bigint;
  n constant integer := 20000;
  t timestamptz;
BEGIN
  SELECT * INTO r FROM b;
  t := clock_timestamp();
  FOR i IN 1..n LOOP
    SELECT count(*) INTO x FROM jsonb_to_recordset(r.lines_json::jsonb)
      AS l(id bigint, n integer, w bigint, sku bigint, q bigint, p bigint, site text, ono text, lot text);
    SELECT count(*) INTO x FROM jsonb_to_recordset(r.orders_json::jsonb)
      AS o(id bigint, ono text, c bigint, w bigint, t bigint);
    SELECT count(*) INTO x FROM jsonb_to_recordset(r.receipts_json::jsonb)
      AS q(i bigint, c bigint, k text, w bigint, n text);
  END LOOP;
  INSERT INTO result VALUES ('jsonb', round(extract(epoch FROM clock_timestamp() - t) * 1e6 / n, 1));
  t := clock_timestamp();
  FOR i IN 1..n LOOP
    SELECT count(*) INTO x FROM unnest(string_to_array(r.line_ids, ',')::bigint[],
      string_to_array(r.line_nos, ',')::integer[], string_to_array(r.line_ids, ',')::bigint[],
      string_to_array(r.skus, ',')::bigint[], string_to_array(r.line_nos, ',')::bigint[],
      string_to_array(r.skus, ',')::bigint[], r.lots::text[], r.line_onos::text[], r.lots::text[])
      AS l(id, n, w, sku, q, p, site, ono, lot);
    SELECT count(*) INTO x FROM unnest(string_to_array(r.order_ids, ',')::bigint[], r.order_nos::text[],
      string_to_array(r.customers, ',')::bigint[], string_to_array(r.customers, ',')::bigint[],
      string_to_array(r.customers, ',')::bigint[]) AS o(id, ono, c, w, t);
    SELECT count(*) INTO x FROM unnest(string_to_array(r.customers, ',')::bigint[], r.keys::text[],
      string_to_array(r.customers, ',')::bigint[], r.carts::text[]) WITH ORDINALITY AS q(c, k, w, n, i);
  END LOOP;
  INSERT INTO result VALUES ('arrays', round(extract(epoch FROM clock_timestamp() - t) * 1e6 / n, 1));
  t := clock_timestamp();
  FOR i IN 1..n LOOP
    SELECT 1 INTO x;
    SELECT 1 INTO x;
    SELECT 1 INTO x;
  END LOOP;
  INSERT INTO result VALUES ('empty', round(extract(epoch FROM clock_timestamp() - t) * 1e6 / n, 1));
END $$;

SELECT form, us_per_batch FROM result;
