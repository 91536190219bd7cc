-- As 0007, for the document receipts.
-- onceorder: no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS document_receipts_by_age ON document_receipts (created_at)
