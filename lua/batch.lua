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
Reply the replies of the calls, concatenated in call order (4 integers per key); a call that failed
      (error reply, or a Redis error raised by one of its commands) has instead its message as a
      string, then 4 * n - 1 zeros, and only it fails: the others ran as usual.
Atomic  calls run one after another, each all-or-nothing on its own, exactly as C separate EVALSHAs
        arriving back to back would; a later call sees the earlier ones' charges.
]]

local function call(KEYS, ARGV)
--@CALL@
end

local calls = tonumber(ARGV[1])
if calls == nil or calls < 1 or calls % 1 ~= 0 or #ARGV < 1 + calls then
  return redis.error_reply('tollgate batch: ARGV[1] must be the number of calls, followed by each call\'s key count')
end
local total = 0
for c = 1, calls do
  local n = tonumber(ARGV[1 + c])
  if n == nil or n < 1 or n % 1 ~= 0 then
    return redis.error_reply('tollgate batch: key count of call ' .. c .. ' must be a whole number >= 1')
  end
  total = total + n
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
  -- A call that fails (an error reply of its own, or a Redis error such as WRONGTYPE or OOM raised
  -- by one of its commands) fails alone: its 4 * n slots hold the message first, then zeros. Both
  -- wrapped scripts write only after every read and check passed, so a failed call wrote nothing
  -- (unless a write itself failed after an earlier one of the same call, e.g. OOM).
  local ok, reply = pcall(call, keys, argv)
  local message = nil
  if not ok then
    message = type(reply) == 'table' and (reply.err or 'error') or tostring(reply)
  elseif type(reply) == 'table' and reply.err then
    message = reply.err
  end
  if message ~= nil then
    out[o + 1] = message
    for j = 2, 4 * n do
      out[o + j] = 0
    end
    o = o + 4 * n
  else
    for j = 1, #reply do
      out[o + j] = reply[j]
    end
    o = o + #reply
  end
end
return out
