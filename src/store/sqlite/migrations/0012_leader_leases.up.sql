-- The maintenance leader's lease (service/maintenance.cpp): a row with an expiry, taken and
-- renewed in short transactions, instead of a session advisory lock, which a
-- transaction-mode pooler would leave on whichever server connection ran it. One row per
-- job name; `term` grows with each new holder.
CREATE TABLE leader_leases (
  name           TEXT PRIMARY KEY,
  holder         TEXT NOT NULL,
  lease_until_ms INTEGER NOT NULL,
  term           INTEGER NOT NULL CHECK (term > 0)
);
