--[[
tollgate refund: give tokens back to buckets of one slot (cross-slot compensation in a cluster when
another slot's group denied the call, and lease returns).
Executable specification: gcraRefund in src/store/memory/gcra.ts and fixedWindowRefund in
src/store/memory/fixed-window.ts.

KEYS  bucket keys, all in one cluster slot.
ARGV  per bucket, 5 values, flattened in KEYS order:
        algorithm  'gcra' or 'fixed_window'
        cost       tokens to give back (integer >= 0)
        limit      tokens per period (>= 1)
        periodMs   period of limit in ms
        burst      bucket capacity (unused by fixed_window)
      so #ARGV == 5 * #KEYS (anything else is an error reply).
Reply   one integer: how many buckets were changed. An absent bucket is already full and is left
        alone (no key is ever created by a refund).

gcra          tat' = tat - cost*T; the key is deleted when tat' <= now, else rewritten with
              PXAT = ceil(tat' / 1000) + 1 epoch ms (as gcra.lua).
fixed_window  the counter is decreased, never below 0; DECRBY keeps its TTL (the window end).
Time          redis.call('TIME').
Atomic        Redis runs a script to completion with no other command in between.
]]

local n = #KEYS
if #ARGV ~= 5 * n then
  return redis.error_reply('tollgate refund: expected ' .. (5 * n) .. ' ARGV for ' .. n .. ' keys, got ' .. #ARGV)
end

for i = 1, n do
  local algorithm = ARGV[(i - 1) * 5 + 1]
  if algorithm ~= 'gcra' and algorithm ~= 'fixed_window' then
    -- Checked before any write so that a bad call changes nothing.
    return redis.error_reply('tollgate refund: unknown algorithm ' .. algorithm .. ' for key ' .. KEYS[i])
  end
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local changed = 0

for i = 1, n do
  local key = KEYS[i]
  local base = (i - 1) * 5
  local algorithm = ARGV[base + 1]
  local cost = tonumber(ARGV[base + 2])
  local limit = tonumber(ARGV[base + 3])
  local period_ms = tonumber(ARGV[base + 4])
  local value = tonumber(redis.call('GET', key))
  if value ~= nil and cost > 0 then
    if algorithm == 'gcra' then
      local new_tat = value - cost * (period_ms * 1000 / limit)
      if new_tat <= now then
        redis.call('DEL', key)
      else
        local expiry = math.ceil(new_tat / 1000) + 1
        redis.call('SET', key, string.format('%.0f', math.floor(new_tat + 0.5)), 'PXAT', string.format('%.0f', expiry))
      end
      changed = changed + 1
    else
      local give = math.min(cost, value)
      if give > 0 then
        redis.call('DECRBY', key, string.format('%.0f', give))
        changed = changed + 1
      end
    end
  end
end

return changed
