-- As 0007, for the document receipts.
CREATE INDEX document_receipts_by_age ON document_receipts (created_at)
