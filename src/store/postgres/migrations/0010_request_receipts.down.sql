DROP TABLE request_receipts
