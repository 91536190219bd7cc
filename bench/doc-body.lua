-- The shared driver's doc.lua with a document body: POST a document to one scope (or one of N
-- scopes) whose body is a header and LINES lines (20), as an invoice of 20 rows would be
-- (docs/API.md, "Document numbers"). Run through bench/with-token.lua.
local n = tonumber(os.getenv("SCOPES") or "1")
local nlines = tonumber(os.getenv("LINES") or "20")
local c = 0
local lines = {}
for i = 1, nlines do
  lines[i] = string.format('{"line":%d,"sku":"SKU-%05d","qty":%d,"price_cents":%d,"note":"row %d"}',
                           i, 1000 + i, i % 7 + 1, 1250 + i, i)
end
local body = '{"title":"x","header":{"customer":"ACME","currency":"EUR","terms":"30 days"},'
             .. '"lines":[' .. table.concat(lines, ",") .. ']}'
request = function()
  c = c + 1
  local s = "HOT" .. (c % n)
  return wrk.format("POST", "/v1/scopes/" .. s .. "/documents", {["Content-Type"] = "application/json"}, body)
end
