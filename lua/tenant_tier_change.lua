--[[
tollgate tenant_tier_change: set or remove one tenant's tier override (admin API
`PUT`/`DELETE /v1/tenants/{tenant}`) and tell every instance, in one atomic step.
Executable specification: MemoryTenantOverrides.set / .delete (src/store/tenants/overrides.ts), which
notify within the process instead of publishing.

KEYS  [1] the overrides hash (engine/keys.ts tenantTiersKey: one hash tag, one slot)
ARGV  tenant   the field: the tenant's name
      tier     the new tier; empty: remove the tenant's override
      channel  where the change is announced (engine/keys.ts tenantTiersChannel)
Reply the tier the change replaced (a bulk string), or nil (false) when the tenant had none.
State one hash field per tenant with an override: tier name. No TTL: an override lasts until removed.
Notice PUBLISH channel tenant, only when something changed (removing an absent override publishes
      nothing); every instance reloads the hash on it.
Atomic Redis runs the script to completion: the write and its notice cannot be separated, so no
      instance can reload between them and miss the change.
]]

if #ARGV ~= 3 then
  return redis.error_reply('tollgate tenant_tier_change: expected 3 ARGV, got ' .. #ARGV)
end
local old = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '' then
  if old then redis.call('HDEL', KEYS[1], ARGV[1]) end
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
if old or ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[3], ARGV[1]) end
return old
