DROP TABLE document_receipts;
DROP TABLE documents;
DROP TABLE doc_scopes;
DROP FUNCTION oo_format_number(bigint, int, int);
