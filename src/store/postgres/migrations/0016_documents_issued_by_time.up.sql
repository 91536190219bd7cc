-- Issued numbers only: legacy documents carry their import time and are not activity.
-- onceorder: no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS documents_issued_by_time ON documents (created_at) WHERE origin = 'issued'
