-- A placed order and an issued document record the principal that asked for them (docs/SECURITY.md,
-- "Who did what"). Rows from before this migration keep NULL: nobody knows who made them.
--
-- A new row must name its principal: SQLite cannot make an added column NOT NULL without a
-- default (which would hide the omission), so a trigger refuses an insert without one.
ALTER TABLE orders ADD COLUMN principal TEXT
  CHECK (principal IS NULL OR length(principal) BETWEEN 1 AND 100);
CREATE TRIGGER orders_principal_required BEFORE INSERT ON orders WHEN NEW.principal IS NULL
BEGIN SELECT RAISE(ABORT, 'a new row of orders must name its principal'); END;
ALTER TABLE documents ADD COLUMN principal TEXT
  CHECK (principal IS NULL OR length(principal) BETWEEN 1 AND 100);
CREATE TRIGGER documents_principal_required BEFORE INSERT ON documents WHEN NEW.principal IS NULL
BEGIN SELECT RAISE(ABORT, 'a new row of documents must name its principal'); END;
