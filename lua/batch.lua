--[[
tollgate batch: run several take calls of one algorithm in one script call (single node / Sentinel).
Not loaded on its own: src/store/redis/scripts.ts replaces the line `--@CALL@` below with the whole
text of gcra.lua or fixed_window.lua, which becomes the body of `call(KEYS, ARGV)` unchanged (its
KEYS and ARGV are the function's parameters, its `return` returns from the function).

KEYS  the keys of every call, concatenated in call order.
ARGV  1             number of calls C
      2 .. C+1      keys of each call (n1 .. nC, each >= 1)
      C+2 ..        each call's ARGV (4 * n values, as the wrapped script expects), concatenated
      so #KEYS == n1 + .. + nC and #ARGV == 1 + C + 4 * #KEYS (anything else is an error reply).
Reply the replies of the calls, concatenated in call order (4 integers per key).
Atomic  calls run one after another, each all-or-nothing on its own, exactly as C separate EVALSHAs
        arriving back to back would; a later call sees the earlier ones' charges.
]]

local function call(KEYS, ARGV)
--@CALL@
end

local calls = tonumber(ARGV[1])
if calls == nil or calls < 1 or #ARGV < 1 + calls then
  return redis.error_reply('tollgate batch: ARGV[1] must be the number of calls, followed by each call\'s key count')
end
local total = 0
for c = 1, calls do
  total = total + tonumber(ARGV[1 + c])
end
if #KEYS ~= total or #ARGV ~= 1 + calls + 4 * total then
  return redis.error_reply('tollgate batch: expected ' .. total .. ' KEYS and ' .. (1 + calls + 4 * total) ..
    ' ARGV for ' .. calls .. ' calls, got ' .. #KEYS .. ' and ' .. #ARGV)
end

local out = {}
local o = 0
local k = 0
local a = 1 + calls
for c = 1, calls do
  local n = tonumber(ARGV[1 + c])
  local keys = {}
  local argv = {}
  for j = 1, n do
    keys[j] = KEYS[k + j]
  end
  for j = 1, 4 * n do
    argv[j] = ARGV[a + j]
  end
  k = k + n
  a = a + 4 * n
  local reply = call(keys, argv)
  if reply.err then
    return reply
  end
  for j = 1, #reply do
    out[o + j] = reply[j]
  end
  o = o + #reply
end
return out
