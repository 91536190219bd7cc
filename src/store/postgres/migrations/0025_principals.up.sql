-- A placed order and an issued document record the principal that asked for them (docs/SECURITY.md,
-- "Who did what"). Rows from before this migration keep NULL: nobody knows who made them.
--
-- A new row must name its principal. The column's default raises instead of a NOT NULL or a
-- CHECK (principal IS NOT NULL): either would refuse the old rows' NULL on their next update
-- (a cancel), and a row trigger would cost every insert on the hot paths, while a default is
-- evaluated only for an INSERT that leaves the column out, the mistake it exists to refuse.
CREATE FUNCTION oo_principal_required(t text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a new row of % must name its principal', t USING ERRCODE = 'not_null_violation';
END $$;
ALTER TABLE orders ADD COLUMN principal text CHECK (length(principal) BETWEEN 1 AND 100);
ALTER TABLE orders ALTER COLUMN principal SET DEFAULT oo_principal_required('orders');
ALTER TABLE documents ADD COLUMN principal text CHECK (length(principal) BETWEEN 1 AND 100);
ALTER TABLE documents ALTER COLUMN principal SET DEFAULT oo_principal_required('documents');
