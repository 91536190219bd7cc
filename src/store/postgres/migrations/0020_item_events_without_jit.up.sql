-- Migration 19's event triggers run their INSERT … SELECT from PL/pgSQL, which plans it once
-- per connection and keeps the plan, its JIT decision included. When the first change on a
-- connection was large (the reaper aborting a dead run of thousands of items), the kept plan's
-- cost (estimated from that statement's transition tables) passed jit_above_cost, and from
-- then on every claim and completion on that connection compiled the insert with LLVM. The insert writes one row per changed item and never gains from
-- compiling.
ALTER FUNCTION oo_item_events_inserted() SET jit = off;
ALTER FUNCTION oo_item_events_updated() SET jit = off;
