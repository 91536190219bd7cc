-- Baseline (c), the gap-allowing ceiling: a sequence value and an insert in one statement.
-- Sequences never block, but a rolled-back transaction leaves a gap, so this is not a
-- valid way to number documents; it shows what the gapless counter costs.
-- Variables: -D scopes=N (scope 'bench-1' .. 'bench-N').
\set s random(1, :scopes)
INSERT INTO bench_gappy (scope, value, title)
 VALUES ('bench-' || :s, nextval('bench_gappy_seq'), 'bench');
