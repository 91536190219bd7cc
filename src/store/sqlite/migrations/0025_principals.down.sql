DROP TRIGGER documents_principal_required;
ALTER TABLE documents DROP COLUMN principal;
DROP TRIGGER orders_principal_required;
ALTER TABLE orders DROP COLUMN principal;
