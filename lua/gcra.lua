--[[
tollgate GCRA: charge several buckets of one slot, all-or-nothing.
Executable specification: src/store/memory/gcra.ts (same operations, same order, same results).

KEYS  bucket keys, all in one cluster slot (the caller guarantees it with a shared hash tag).
ARGV  per bucket, 5 values, flattened in KEYS order:
        cost      tokens to charge (integer; 0 peeks and never writes; < 0 gives -cost back: a refund,
                  never above a full bucket, always allowed)
        limit     tokens per period (>= 1)
        periodMs  period of limit in ms
        burst     bucket capacity in tokens
        maxDebt   -1: an ordinary bucket; >= 0: an overdraft bucket, allowed while it holds one whole
                  token, whose positive costs always apply, into debt up to maxDebt tokens past empty
      so #ARGV == 5 * #KEYS (anything else is an error reply).
Reply per bucket, 4 integers, flattened in KEYS order:
        allowed       1 or 0
        remaining     whole tokens left (after the charge when charged, else as the bucket is)
        retryAfterMs  0 when allowed; ms until the cost would be admitted (overdraft: until one whole
                      token is back); -1 never (cost > burst)
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
Forced  refunds and positive overdraft charges are evaluated first (in order) and always written.
Denied  when any bucket is denied, only the forced buckets are written and every allowed ordinary
        bucket reports remaining and resetAfterMs as the bucket is, uncharged (allowed stays 1: it
        alone would pass); forced buckets report themselves after their charge.
Atomic  Redis runs a script to completion with no other command in between. Phase 1 reads and
        evaluates every bucket; phase 2 writes every bucket only if all were allowed, so a denied
        call charges nothing but its forced takes. Several entries for the same key see each
        other's charge.
]]

local n = #KEYS
if #ARGV ~= 5 * n then
  return redis.error_reply('tollgate gcra: expected ' .. (5 * n) .. ' ARGV for ' .. n .. ' keys, got ' .. #ARGV)
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
local forced_tat, forced_expiry, forced_order = nil, nil, nil -- the forced takes' writes alone
local all_allowed = true

-- Evaluate bucket i (see the header); records its reply and, when it charges, its pending write.
local function evaluate(i, key, base, cost, max_debt)
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
  local new_ahead = nil -- set when the bucket is written
  if cost < 0 then
    -- Refund: never above a full bucket; a full one is left alone.
    allowed, retry = 1, 0
    if ahead == 0 then
      remaining, reset = peek_remaining, peek_reset
    else
      new_ahead = math.max(ahead + cost * t, 0)
    end
  elseif max_debt >= 0 then
    -- Overdraft: allowed while one whole token is left; a positive cost always applies, into debt
    -- up to max_debt tokens past empty (the cap never lowers what is already owed).
    local admits = ahead + t <= tau + slack
    if cost == 0 then
      remaining, reset = peek_remaining, peek_reset
      if admits then
        allowed, retry = 1, 0
      else
        allowed, retry = 0, math.max(1, math.ceil((ahead + t - tau) / 1000))
      end
    else
      new_ahead = ahead + cost * t
      local cap = tau + max_debt * t
      if new_ahead > cap then
        new_ahead = math.max(cap, ahead)
      end
      if admits then
        allowed, retry = 1, 0
      else
        allowed, retry = 0, math.max(1, math.ceil((new_ahead + t - tau) / 1000))
      end
    end
  elseif cost > burst then
    allowed, remaining, retry, reset = 0, peek_remaining, -1, peek_reset
  elseif cost == 0 then
    allowed, remaining, retry, reset = 1, peek_remaining, 0, peek_reset
  else
    local next_ahead = ahead + cost * t
    if next_ahead <= tau + slack then
      allowed, retry = 1, 0
      new_ahead = next_ahead
    else
      allowed, remaining, reset = 0, peek_remaining, peek_reset
      retry = math.max(1, math.ceil((next_ahead - tau) / 1000))
    end
  end
  if new_ahead ~= nil then
    reset = math.ceil(new_ahead / 1000)
    remaining = whole_tokens(tau, t, slack, new_ahead)
    if pending[key] == nil then
      order[#order + 1] = key
    end
    local tat = now + math.floor(new_ahead + 0.5)
    pending[key] = tat
    pending_expiry[key] = math.ceil(tat / 1000) + 1
  end
  if allowed == 0 then
    all_allowed = false
  end
  uncharged[i] = { peek_remaining, peek_reset }
  local o = (i - 1) * 4
  out[o + 1] = allowed
  out[o + 2] = remaining
  out[o + 3] = retry
  out[o + 4] = reset
end

-- Forced takes first (refunds, positive overdraft charges: applied whatever the call decides), then
-- the others, which see them.
local forced = nil
for i = 1, n do
  local base = (i - 1) * 5
  local cost = tonumber(ARGV[base + 1])
  local max_debt = tonumber(ARGV[base + 5])
  if cost < 0 or (cost > 0 and max_debt >= 0) then
    forced = forced or {}
    forced[i] = true
    evaluate(i, KEYS[i], base, cost, max_debt)
  end
end
if forced ~= nil then
  forced_tat, forced_expiry, forced_order = {}, {}, {}
  for j, key in ipairs(order) do
    forced_order[j] = key
    forced_tat[key] = pending[key]
    forced_expiry[key] = pending_expiry[key]
  end
end
for i = 1, n do
  if forced == nil or not forced[i] then
    local base = (i - 1) * 5
    evaluate(i, KEYS[i], base, tonumber(ARGV[base + 1]), tonumber(ARGV[base + 5]))
  end
end

-- Inside a merged call, batch.lua's write-back provides redis.set_tat, which keeps the numbers and
-- writes each key once after the last call.
local set_tat = redis.set_tat or function(key, tat, expiry_ms)
  -- '%.0f': tostring() would print 14 significant digits and lose microseconds.
  redis.call('SET', key, string.format('%.0f', tat), 'PXAT', string.format('%.0f', expiry_ms))
end

if not all_allowed then
  -- Only the forced takes are applied: allowed ordinary buckets report themselves as they are.
  for i = 1, n do
    if out[(i - 1) * 4 + 1] == 1 and (forced == nil or not forced[i]) then
      out[(i - 1) * 4 + 2] = uncharged[i][1]
      out[(i - 1) * 4 + 4] = uncharged[i][2]
    end
  end
  if forced_order ~= nil then
    for _, key in ipairs(forced_order) do
      set_tat(key, forced_tat[key], forced_expiry[key])
    end
  end
  return out
end

-- Every bucket passed: charge them all.
for _, key in ipairs(order) do
  set_tat(key, pending[key], pending_expiry[key])
end

return out
