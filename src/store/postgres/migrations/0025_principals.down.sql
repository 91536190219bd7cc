ALTER TABLE documents DROP COLUMN principal;
ALTER TABLE orders DROP COLUMN principal;
DROP FUNCTION oo_principal_required(text);
