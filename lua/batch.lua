--[[
tollgate batch: run several take calls of one algorithm in one script call (single node / Sentinel).
Not loaded on its own: src/store/redis/scripts.ts replaces the line `--@CALL@` below with the whole
text of gcra.lua or fixed_window.lua, which becomes the body of `call(KEYS, ARGV)` unchanged (its
KEYS and ARGV are the function's parameters, its `return` returns from the function).

KEYS  the keys of every call, concatenated in call order.
ARGV  1             number of calls C
      2 .. C+1      keys of each call (n1 .. nC, each >= 1)
      C+2 ..        each call's ARGV (5 * n values, as the wrapped script expects), concatenated
      so #KEYS == n1 + .. + nC and #ARGV == 1 + C + 5 * #KEYS (anything else is an error reply).
Reply the replies of the calls, concatenated in call order (4 integers per key); a call that failed
      (error reply, or a Redis error raised by one of its commands) has instead its message as a
      string, then 4 * n - 1 zeros, and only it fails: the others ran as usual.
Atomic  calls run one after another, each all-or-nothing on its own, exactly as C separate EVALSHAs
        arriving back to back would; a later call sees the earlier ones' charges.
Writes  (GCRA only: scripts.ts replaces the line `--@REDIS@` below with `local redis = write_back`
        for gcra.lua and removes it for fixed_window.lua.) The wrapped script's redis.call then goes
        through write_back: TIME is read once per batch (the calls arrive in the same microsecond),
        a GET of a key read or written earlier in the batch is answered from the batch's own table,
        and gcra.lua's write goes to redis.set_tat, which records it; each key is written once (SET
        .. PXAT), with its last value and expiry, after the last call. A hot key charged by 50 calls
        of a batch costs one GET, one SET and two string.format instead of 50 of each
        (bench/RESULTS.md, "Write-back"). A call's writes count only when it succeeded; if a final
        SET fails (OOM), every call that wrote that key fails with the message.
]]

local real = redis
local clock = nil -- TIME of this batch, read on first use
local seen = {} -- key -> what a GET reads now (false: no key; a tat number once written)
local dirty = {} -- key -> { tat, expiry_ms } of committed calls, written after the last call
local dirty_order = {}
local writers = {} -- key -> the calls whose writes it holds
local staged = {} -- writes of the running call: key -> { tat, expiry_ms }
local staged_order = {}
local write_back = setmetatable({
  call = function(command, key, ...)
    if command == 'TIME' then
      if clock == nil then
        clock = real.call('TIME')
      end
      return clock
    elseif command == 'GET' and select('#', ...) == 0 then
      local s = staged[key]
      if s ~= nil then
        return s[1]
      end
      local v = seen[key]
      if v == nil then
        v = real.call('GET', key)
        seen[key] = v
      end
      return v
    end
    return real.call(command, key, ...)
  end,
  -- gcra.lua's write (SET key tat PXAT expiry), kept as numbers until the final write.
  set_tat = function(key, tat, expiry_ms)
    if staged[key] == nil then
      staged_order[#staged_order + 1] = key
    end
    staged[key] = { tat, expiry_ms }
  end,
}, { __index = real })
--@REDIS@

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
if #KEYS ~= total or #ARGV ~= 1 + calls + 5 * total then
  return redis.error_reply('tollgate batch: expected ' .. total .. ' KEYS and ' .. (1 + calls + 5 * total) ..
    ' ARGV for ' .. calls .. ' calls, got ' .. #KEYS .. ' and ' .. #ARGV)
end

local out = {}
local call_at = {} -- offset of each call's reply in out
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
  for j = 1, 5 * n do
    argv[j] = ARGV[a + j]
  end
  k = k + n
  a = a + 5 * n
  -- A call that fails (an error reply of its own, or a Redis error such as WRONGTYPE or OOM raised
  -- by one of its commands) fails alone: its 4 * n slots hold the message first, then zeros. Both
  -- wrapped scripts write only after every read and check passed, so a failed call wrote nothing
  -- (unless a write itself failed after an earlier one of the same call, e.g. OOM).
  staged = {}
  staged_order = {}
  local ok, reply = pcall(call, keys, argv)
  local message = nil
  if not ok then
    message = type(reply) == 'table' and (reply.err or 'error') or tostring(reply)
  elseif type(reply) == 'table' and reply.err then
    message = reply.err
  end
  if message == nil then
    for _, key in ipairs(staged_order) do
      if dirty[key] == nil then
        dirty_order[#dirty_order + 1] = key
        writers[key] = {}
      end
      dirty[key] = staged[key]
      seen[key] = staged[key][1]
      local w = writers[key]
      w[#w + 1] = c
    end
  end
  call_at[c] = o
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

-- Write-back: each key once, last value and expiry. A failed write fails every call that wrote it.
for _, key in ipairs(dirty_order) do
  local d = dirty[key]
  -- '%.0f': tostring() would print 14 significant digits and lose microseconds.
  local ok, err = pcall(real.call, 'SET', key, string.format('%.0f', d[1]), 'PXAT', string.format('%.0f', d[2]))
  if not ok then
    local message = type(err) == 'table' and (err.err or 'error') or tostring(err)
    for _, c in ipairs(writers[key]) do
      local at = call_at[c]
      local n = tonumber(ARGV[1 + c])
      out[at + 1] = message
      for j = 2, 4 * n do
        out[at + j] = 0
      end
    end
  end
end
return out
