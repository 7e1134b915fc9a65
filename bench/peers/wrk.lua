-- wrk script of bench/peers/run.py: the request (PEERS_METHOD, PEERS_BODY, PEERS_HEADERS as "Name: value"
-- lines) and a check of every answer: status 200, PEERS_EXPECT found in the body (the deal's payload as
-- compact JSON for MCP, the floor's whole answer for the floor), no "isError":true. Prints
-- "PEERS_BAD <count> <first bad answer>" at the end; run.py fails on any.
wrk.method = os.getenv("PEERS_METHOD") or "GET"
local body = os.getenv("PEERS_BODY") or ""
if body ~= "" then wrk.body = body end
for line in string.gmatch(os.getenv("PEERS_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(line, "^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end
local expect = os.getenv("PEERS_EXPECT") or ""
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
  first_bad = ""
end

function response(status, headers, answer)
  if status ~= 200 or not string.find(answer, expect, 1, true) or string.find(answer, '"isError":true', 1, true) then
    bad = bad + 1
    if first_bad == "" then first_bad = status .. " " .. string.sub(answer, 1, 300) end
  end
end

function done(summary, latency, requests)
  local count, sample = 0, ""
  for _, thread in ipairs(threads) do
    count = count + thread:get("bad")
    if sample == "" then sample = thread:get("first_bad") or "" end
  end
  io.write(string.format("PEERS_BAD %d %s\n", count, sample))
end
