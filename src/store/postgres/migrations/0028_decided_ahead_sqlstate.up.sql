-- oo_assert (migration 5) with its own SQLSTATE, OO002: a batch decided ahead (in_place_known)
-- raises it when the stock rows or receipts it was decided on had moved. The connection maps
-- OO002 to retry_transaction (classify_sqlstate), and the batch is decided again on locked
-- rows; every other guard raises oo_assert's OO001, a broken invariant (internal). The code,
-- not the message, tells the two apart. Raised inside the statement, so a pipelined COMMIT
-- becomes a rollback.
CREATE FUNCTION oo_assert_unmoved(ok boolean, message text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'OO002', MESSAGE = message;
  END IF;
  RETURN true;
END $$;
