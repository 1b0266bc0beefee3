--[[
tollgate GCRA: charge several buckets of one slot, all-or-nothing.
Executable specification: src/store/memory/gcra.ts (same operations, same order, same results).

KEYS  bucket keys, all in one cluster slot (the caller guarantees it with a shared hash tag).
ARGV  per bucket, 4 values, flattened in KEYS order:
        cost      tokens to charge (integer >= 0; 0 peeks and never writes)
        limit     tokens per period (>= 1)
        periodMs  period of limit in ms
        burst     bucket capacity in tokens
      so #ARGV == 4 * #KEYS (anything else is an error reply).
Reply per bucket, 4 integers, flattened in KEYS order:
        allowed       1 or 0
        remaining     whole tokens left (after the charge when charged, else as the bucket is)
        retryAfterMs  0 when allowed; ms until the cost would be admitted; -1 never (cost > burst)
        resetAfterMs  ms until the bucket is full again
      Only integers are returned: Redis truncates Lua floats in replies.

State   one string per bucket: the theoretical arrival time tat in integer microseconds, written
        with PXAT = ceil(tat / 1000) + 1 epoch ms, so idle buckets vanish once full. The expiry is
        absolute on the TIME clock: a relative PX counts from Redis' cached command time and could
        end before tat if the server stalled between starting the script and calling TIME.
Math    emission interval T = periodMs*1000/limit, capacity tau = T*burst, all in µs relative to
        now (ahead = tat - now is exact; cost*T is added to it, never to the 16-digit tat), with
        slack = min(burst/2, T/2) µs for the whole-µs rounding of every stored tat since full.
Time    redis.call('TIME'): one clock for every tollgate instance.
Denied  when any bucket is denied, nothing is written and every allowed bucket reports remaining
        and resetAfterMs as the bucket is, uncharged (allowed stays 1: it alone would pass).
Atomic  Redis runs a script to completion with no other command in between. Phase 1 reads and
        evaluates every bucket; phase 2 writes every bucket only if all were allowed, so a denied
        call charges nothing. Several entries for the same key see each other's charge.
]]

local n = #KEYS
if #ARGV ~= 4 * n then
  return redis.error_reply('tollgate gcra: expected ' .. (4 * n) .. ' ARGV for ' .. n .. ' keys, got ' .. #ARGV)
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])

-- slack: µs of tat storage rounding tolerated (half a µs per token of burst, at most half of T;
-- see slackOf in gcra.ts).
local function whole_tokens(tau, t, slack, ahead)
  return math.max(0, math.floor((tau - ahead + slack) / t + 1e-9))
end

local out = {}
local uncharged = {} -- per bucket {remaining, reset} as it is, for a denied call
local pending = {}
local pending_expiry = {}
local order = {}
local all_allowed = true

for i = 1, n do
  local key = KEYS[i]
  local base = (i - 1) * 4
  local cost = tonumber(ARGV[base + 1])
  local limit = tonumber(ARGV[base + 2])
  local period_ms = tonumber(ARGV[base + 3])
  local burst = tonumber(ARGV[base + 4])
  local t = period_ms * 1000 / limit
  local tau = t * burst
  local slack = math.min(0.5 * burst, 0.5 * t)

  local stored = pending[key]
  if stored == nil then
    stored = tonumber(redis.call('GET', key))
  end
  -- Time ahead of now, in µs: `stored - now` is exact (two integers below 2^53); the charge is added
  -- to it, not to the 16-digit tat, so every bit of cost * t counts (see gcra.ts).
  local ahead = math.max((stored or now) - now, 0)
  local peek_remaining = whole_tokens(tau, t, slack, ahead)
  local peek_reset = math.ceil(ahead / 1000)

  local allowed, remaining, retry, reset
  if cost > burst then
    allowed, remaining, retry, reset = 0, peek_remaining, -1, peek_reset
  elseif cost == 0 then
    allowed, remaining, retry, reset = 1, peek_remaining, 0, peek_reset
  else
    local new_ahead = ahead + cost * t
    if new_ahead <= tau + slack then
      reset = math.ceil(new_ahead / 1000)
      allowed, remaining, retry = 1, whole_tokens(tau, t, slack, new_ahead), 0
      if pending[key] == nil then
        order[#order + 1] = key
      end
      local tat = now + math.floor(new_ahead + 0.5)
      pending[key] = tat
      pending_expiry[key] = math.ceil(tat / 1000) + 1
    else
      allowed, remaining, reset = 0, peek_remaining, peek_reset
      retry = math.max(1, math.ceil((new_ahead - tau) / 1000))
    end
  end
  if allowed == 0 then
    all_allowed = false
  end
  uncharged[i] = { peek_remaining, peek_reset }
  out[base + 1] = allowed
  out[base + 2] = remaining
  out[base + 3] = retry
  out[base + 4] = reset
end

if not all_allowed then
  -- Nothing is charged: allowed buckets report themselves as they are (uncharged).
  for i = 1, n do
    if out[(i - 1) * 4 + 1] == 1 then
      out[(i - 1) * 4 + 2] = uncharged[i][1]
      out[(i - 1) * 4 + 4] = uncharged[i][2]
    end
  end
  return out
end

-- Every bucket passed: charge them all. Inside a merged call, batch.lua's write-back provides
-- redis.set_tat, which keeps the numbers and writes each key once after the last call.
local set_tat = redis.set_tat or function(key, tat, expiry_ms)
  -- '%.0f': tostring() would print 14 significant digits and lose microseconds.
  redis.call('SET', key, string.format('%.0f', tat), 'PXAT', string.format('%.0f', expiry_ms))
end
for _, key in ipairs(order) do
  set_tat(key, pending[key], pending_expiry[key])
end

return out
