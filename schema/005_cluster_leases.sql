-- The cluster's leases live on PostgreSQL only (several nodes share one
-- database there; a SQLite file has one server). This version keeps the two
-- schemas' numbers the same.
SELECT 1;
