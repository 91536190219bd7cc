DROP TABLE document_receipts;
DROP TABLE documents;
DROP TABLE doc_scopes;
