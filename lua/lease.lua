--[[
tollgate lease: take up to `want` tokens from ONE bucket for an instance's local lease (two-tier
limiting). Unlike gcra.lua / fixed_window.lua this is not all-or-nothing: the grant is whatever the
bucket holds now, up to `want` (possibly 0). Returned tokens go back through refund.lua.
Executable specification: MemoryStore.grant (src/store/memory/memory-store.ts).

KEYS  [1] the bucket key
ARGV  want      tokens wanted (integer >= 1)
      limit     tokens per period (>= 1)
      periodMs  period of limit in ms
      burst     bucket capacity in tokens (fixed window: equal to limit)
      algorithm 'gcra' or 'fixed_window'
Reply 3 integers: granted, remaining (whole tokens left in the bucket after the grant),
      resetAfterMs (ms until the bucket is full again / the window ends)
State as gcra.lua (tat in integer µs, PXAT ceil(tat/1000)+1) and fixed_window.lua (a counter whose
      PXAT is the window end), so leases and direct takes share one bucket.
Time  redis.call('TIME'): one clock for every tollgate instance.
Atomic Redis runs the script to completion: the read, the grant and the write cannot interleave
      with another instance's call, so the sum of all grants never exceeds what the bucket held.
]]

if #ARGV ~= 5 then
  return redis.error_reply('tollgate lease: expected 5 ARGV, got ' .. #ARGV)
end
local key = KEYS[1]
local want = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local period_ms = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local algorithm = ARGV[5]

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])

if algorithm == 'gcra' then
  local t = period_ms * 1000 / limit
  local tau = t * burst
  -- The same steps as gcra.lua (and MemoryStore.grant through gcra.ts): time ahead of now, exact;
  -- half a µs of rounding slack per token of burst, at most half of T.
  local ahead = math.max((tonumber(redis.call('GET', key)) or now) - now, 0)
  local slack = math.min(0.5 * burst, 0.5 * t)
  local available = math.max(0, math.floor((tau - ahead + slack) / t + 1e-9))
  local granted = math.min(want, available)
  if granted == 0 then
    return { 0, available, math.ceil(ahead / 1000) }
  end
  local new_ahead = ahead + granted * t
  local tat = now + math.floor(new_ahead + 0.5)
  redis.call('SET', key, string.format('%.0f', tat), 'PXAT', string.format('%.0f', math.ceil(tat / 1000) + 1))
  return { granted, math.max(0, math.floor((tau - new_ahead + slack) / t + 1e-9)), math.ceil(new_ahead / 1000) }
elseif algorithm == 'fixed_window' then
  local now_ms = math.floor(now / 1000)
  local window_end = (math.floor(now_ms / period_ms) + 1) * period_ms
  local count = tonumber(redis.call('GET', key)) or 0
  if count > 0 and redis.call('PTTL', key) <= 0 then
    count = 0
  end
  local available = math.max(0, limit - count)
  local granted = math.min(want, available)
  if granted > 0 then
    if count == 0 then
      redis.call('SET', key, granted, 'PXAT', string.format('%.0f', window_end))
    else
      redis.call('INCRBY', key, granted)
    end
  end
  return { granted, available - granted, window_end - now_ms }
end
return redis.error_reply('tollgate lease: unknown algorithm ' .. tostring(algorithm))
