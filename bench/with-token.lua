-- wrk script: runs the wrk script named by WRK_SCRIPT (such as the shared driver's doc.lua)
-- with `Authorization: Bearer $ONCEORDER_TOKEN` on every request it formats, for a server
-- started by bench/lib.sh's serve_start.
local format = wrk.format
local authorization = "Bearer " .. (os.getenv("ONCEORDER_TOKEN") or "")
wrk.headers["Authorization"] = authorization
wrk.format = function(method, path, headers, body)
  headers = headers or {}
  headers["Authorization"] = authorization
  return format(method, path, headers, body)
end
dofile(os.getenv("WRK_SCRIPT"))
