DROP TABLE leader_leases
