--[[
tollgate fixed window: count hits on several counters of one slot, all-or-nothing.
Executable specification: src/store/memory/fixed-window.ts (same operations, same results).

KEYS  counter keys, all in one cluster slot (the caller guarantees it with a shared hash tag).
ARGV  per bucket, 5 values, flattened in KEYS order (the same layout as gcra.lua):
        cost      hits to count (integer; 0 peeks and never writes; < 0 takes -cost hits off the
                  counter: a refund, never below 0, always allowed)
        limit     hits per window (>= 1)
        periodMs  window length in ms; windows are epoch-aligned (envoyproxy/ratelimit semantics);
                  0 marks a calendar window, whose boundaries come in burst
        burst     ignored (equals limit for fixed windows); kept so both scripts share one encoder.
                  Calendar window (periodMs 0): the text 'start:end:nextEnd' (epoch ms) — the window
                  containing the caller's now and the end of the one after (src/store/redis/
                  calendar-argv.ts). The window ends at the first of them later than TIME; when TIME
                  is at or past nextEnd (clocks a window apart) the call fails with an error reply.
        maxDebt   -1: an ordinary counter; >= 0: an overdraft counter, allowed while one hit is left,
                  whose positive costs always count, up to limit + maxDebt
      so #ARGV == 5 * #KEYS (anything else is an error reply).
Reply per bucket, 4 integers, flattened in KEYS order:
        allowed       1 or 0
        remaining     hits left in the window (after the charge when charged)
        retryAfterMs  0 when allowed; ms until the window ends; -1 never (cost > limit)
        resetAfterMs  ms until the window ends

State   one integer counter per bucket that expires exactly at the window end (PXAT, absolute on the
        TIME clock), so the key needs no window suffix. A counter is created with SET .. PXAT in the
        same step that gives it its
        value and is only ever changed with INCRBY (refunds too), which keeps the TTL: no counter can exist
        without a TTL. A counter found without a positive TTL is treated as absent and rewritten.
Time    redis.call('TIME').
Forced  refunds and positive overdraft charges are evaluated first (in order) and always written.
Denied  when any bucket is denied, only the forced counters are written and every allowed ordinary
        bucket reports remaining and resetAfterMs as the bucket is, uncharged (allowed stays 1: it
        alone would pass); forced counters report themselves after their change.
Atomic  Redis runs a script to completion with no other command in between. Phase 1 reads and
        evaluates every counter; phase 2 writes only if all were allowed, so a denied call counts
        nothing. Several entries for the same key see each other's hits.
]]

local n = #KEYS
if #ARGV ~= 5 * n then
  return redis.error_reply('tollgate fixed_window: expected ' .. (5 * n) .. ' ARGV for ' .. n .. ' keys, got ' .. #ARGV)
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now_ms = math.floor(now / 1000)

local out = {}
local uncharged = {} -- per bucket {remaining, reset} as it is, for a denied call
local stored = {}   -- key -> count as read in phase 1 (nil when absent)
local pending = {}  -- key -> count to write
local end_of = {}   -- key -> window end in epoch ms (PXAT of a new counter)
local order = {}
local forced_count, forced_order = nil, nil -- the forced takes' writes alone
local all_allowed = true

-- Evaluate counter i (see the header); records its reply and, when it counts, its pending write.
-- Returns an error reply for a bad calendar window (the caller returns it: nothing was written).
local function evaluate(i, key, base, cost, max_debt)
  local limit = tonumber(ARGV[base + 2])
  local period_ms = tonumber(ARGV[base + 3])
  local window_end
  if period_ms == 0 then
    local s, e, nx = string.match(ARGV[base + 4], '^(%d+):(%d+):(%d+)$')
    s, e, nx = tonumber(s), tonumber(e), tonumber(nx)
    if nx == nil then
      return redis.error_reply('tollgate fixed_window: calendar window of ' .. key .. ' must be start:end:nextEnd, got ' .. ARGV[base + 4])
    elseif now_ms < s then
      window_end = s
    elseif now_ms < e then
      window_end = e
    elseif now_ms < nx then
      window_end = nx
    else
      return redis.error_reply('tollgate fixed_window: calendar window of ' .. key .. ' ends at ' .. nx ..
        ', before Redis TIME ' .. now_ms .. ' (the clocks of tollgate and Redis are a window apart)')
    end
  else
    window_end = (math.floor(now_ms / period_ms) + 1) * period_ms
  end
  local ttl = window_end - now_ms

  local count = pending[key]
  local present = count ~= nil
  if count == nil then
    local raw = redis.call('GET', key)
    if raw and redis.call('PTTL', key) > 0 then
      stored[key] = tonumber(raw)
      present = true
    end
    count = stored[key] or 0
  end
  local left = math.max(0, limit - count)

  local allowed, remaining, retry
  local next_count = nil -- set when the counter is written
  if cost < 0 then
    -- Refund: never below 0; an absent counter stays absent.
    allowed, remaining, retry = 1, left, 0
    if present then
      next_count = math.max(0, count + cost)
      remaining = math.max(0, limit - next_count)
    end
  elseif max_debt >= 0 then
    -- Overdraft: allowed while one hit is left; a positive cost always counts, up to limit + max_debt
    -- (the cap never lowers the counter). The window end forgives the debt.
    if count < limit then
      allowed, retry = 1, 0
    else
      allowed, retry = 0, ttl
    end
    remaining = left
    if cost > 0 then
      next_count = count + cost
      if next_count > limit + max_debt then
        next_count = math.max(limit + max_debt, count)
      end
      remaining = math.max(0, limit - next_count)
    end
  elseif cost > limit then
    allowed, remaining, retry = 0, left, -1
  elseif count + cost > limit then
    allowed, remaining, retry = 0, left, ttl
  else
    allowed, remaining, retry = 1, limit - count - cost, 0
    if cost > 0 then
      next_count = count + cost
    end
  end
  if next_count ~= nil then
    if pending[key] == nil then
      order[#order + 1] = key
      end_of[key] = window_end
    end
    pending[key] = next_count
  end
  if allowed == 0 then
    all_allowed = false
  end
  uncharged[i] = { left, ttl }
  local o = (i - 1) * 4
  out[o + 1] = allowed
  out[o + 2] = remaining
  out[o + 3] = retry
  out[o + 4] = ttl
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
    local err = evaluate(i, KEYS[i], base, cost, max_debt)
    if err ~= nil then
      return err
    end
  end
end
if forced ~= nil then
  forced_count, forced_order = {}, {}
  for j, key in ipairs(order) do
    forced_order[j] = key
    forced_count[key] = pending[key]
  end
end
for i = 1, n do
  if forced == nil or not forced[i] then
    local base = (i - 1) * 5
    local err = evaluate(i, KEYS[i], base, tonumber(ARGV[base + 1]), tonumber(ARGV[base + 5]))
    if err ~= nil then
      return err
    end
  end
end

-- A new counter is created with its window end; an existing one changes by INCRBY, which keeps its TTL.
local function write(key, count)
  local before = stored[key]
  if before == nil then
    redis.call('SET', key, string.format('%.0f', count), 'PXAT', string.format('%.0f', end_of[key]))
  else
    redis.call('INCRBY', key, string.format('%.0f', count - before))
  end
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
      write(key, forced_count[key])
    end
  end
  return out
end

-- Every bucket passed: charge them all.
for _, key in ipairs(order) do
  write(key, pending[key])
end

return out
