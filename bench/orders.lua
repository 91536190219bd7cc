-- wrk script for bench/seed002-table.sh and bench/side-by-side-orders.sh: 5-SKU carts over NSKUS SKUs of warehouse 1 (like
-- /work/shared/bench/order.lua), with duplicates as in seed 002's incident: DUP percent of
-- the requests come in groups of 4 with the same Idempotency-Key and the same body. A wrk
-- thread hands consecutive requests to different connections, so a group's 4 requests are
-- in flight at the same time on 4 connections.
local nskus = tonumber(os.getenv("NSKUS") or "10000")
local k = tonumber(os.getenv("K") or "5")
local dup = tonumber(os.getenv("DUP") or "20") / 100
-- A group starts with probability q; groups of 4 then make the share dup of all requests.
local q = dup / (4 - 3 * dup)
local c, left, key, body = 0, 0, nil, nil
-- setup runs in the main Lua state; thread:set makes `tid` a global of that thread's own
-- state. It must stay a global: a `local tid` here would shadow it, every thread would see
-- the same value, seed the same random sequence and send the same keys as the others (half
-- of the requests would be replays).
local threads = 0
setup = function(thread) threads = threads + 1; thread:set("tid", threads) end
init = function() math.randomseed(os.time() * 1000 + tid) end
local function fresh()
  c = c + 1
  local seen, lines = {}, {}
  while #lines < k do
    local s = math.random(1, nskus)
    if not seen[s] then seen[s] = true; lines[#lines + 1] = '{"sku_id":' .. s .. ',"quantity":1}' end
  end
  body = '{"customer_id":1,"warehouse_id":1,"lines":[' .. table.concat(lines, ",") .. ']}'
  key = string.format("k-%d-%d-%d", tid, c, math.random(1, 1000000000))
end
request = function()
  if left > 0 then
    left = left - 1
  else
    fresh()
    if math.random() < q then left = 3 end
  end
  return wrk.format("POST", "/v1/orders", {["Content-Type"] = "application/json", ["Idempotency-Key"] = key,
    ["Authorization"] = "Bearer " .. (os.getenv("ONCEORDER_TOKEN") or "")}, body)
end
