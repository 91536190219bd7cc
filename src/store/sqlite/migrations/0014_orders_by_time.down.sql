DROP INDEX orders_by_time
