--[[
tollgate rlqs_usage: record one Envoy's usage of one RLQS shared bucket and read every live entry
of it (one call per bucket per usage report, never per request).
Executable specification: MemoryUsageBoard.reportNow (src/store/rlqs/memory-board.ts).

KEYS  [1] the bucket's usage hash (engine/keys.ts quotaKey: same hash tag as the bucket)
ARGV  participant  field name: instance, stream and BucketId of the reporting Envoy; empty for a
                   read (nothing written, demand and held ignored: the rebalancer's re-read)
      demand       its demand, requests per second (a decimal number >= 0)
      held         the rate it holds, requests per second (a decimal number >= 0)
      staleMs      entries older than this (ms) are dropped and not returned
Reply flat list: participant, demand, held for every live entry (the caller's included), strings
State one hash field per participant: "<demand> <held> <ms>"; PEXPIRE 2*staleMs on every write, so
      a bucket nobody reports disappears by itself (a read leaves the TTL alone).
Time  redis.call('TIME'): one clock for every tollgate instance.
]]

if #ARGV ~= 4 then
  return redis.error_reply('tollgate rlqs_usage: expected 4 ARGV, got ' .. #ARGV)
end
local key = KEYS[1]
local participant = ARGV[1]
local demand = tonumber(ARGV[2])
local held = tonumber(ARGV[3])
local stale = tonumber(ARGV[4])
if demand == nil or held == nil or stale == nil or demand < 0 or held < 0 or stale <= 0 then
  return redis.error_reply('tollgate rlqs_usage: demand, held must be numbers >= 0 and staleMs > 0')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

if participant ~= '' then
  redis.call('HSET', key, participant, ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. now)
end
local all = redis.call('HGETALL', key)
local out = {}
for i = 1, #all, 2 do
  local d, h, at = string.match(all[i + 1], '^(%S+) (%S+) (%d+)$')
  if at == nil or now - tonumber(at) > stale then
    redis.call('HDEL', key, all[i])
  else
    out[#out + 1] = all[i]
    out[#out + 1] = d
    out[#out + 1] = h
  end
end
if participant ~= '' then
  redis.call('PEXPIRE', key, 2 * stale)
end
return out
