#pragma once
// Every change of a task's state in the fleet's queue, each one Lua script that Redis runs atomically
// (redis_queue.cpp says which keys and arguments each takes). The invariant they keep: a task's hash
// names the one stream entry that may still finish it (`entry`); a worker holding any other entry (a
// task cancelled, refreshed, or already finished by a worker that reclaimed it) only acknowledges it.
namespace cuset::service::redis_scripts {

inline constexpr const char* kFinished = R"lua(
local function finished(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
)lua";

// KEYS: task, stream, every stream. ARGV: id, priority, class, request, now, force_refresh, max_queued.
inline constexpr const char* kSubmit = R"lua(
local state = redis.call('HGET', KEYS[1], 'state')
if state and not (finished(state) and ARGV[6] == '1') then return {'existing', ''} end
local waiting = 0
for i = 3, #KEYS do
  local pending = redis.pcall('XPENDING', KEYS[i], 'workers')
  local taken = 0
  if type(pending) == 'table' and pending[1] then taken = pending[1] end
  waiting = waiting + redis.call('XLEN', KEYS[i]) - taken
end
if waiting >= tonumber(ARGV[7]) then return {'full', ''} end
redis.call('DEL', KEYS[1])
local entry = redis.call('XADD', KEYS[2], '*', 'task', ARGV[1])
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'state', 'queued', 'priority', ARGV[2], 'class', ARGV[3], 'stream', KEYS[2],
  'entry', entry, 'request', ARGV[4], 'submitted_at', ARGV[5], 'deliveries', '0', 'results_written', '0', 'cancel', '0')
return {'accepted', entry}
)lua";

// KEYS: task, stream. ARGV: entry, now, consumer, reclaimed ('1': taken over from a silent worker).
// {'run', deliveries, cancel requested}, or 'skip' (acknowledged) or 'taken' (another worker has it).
inline constexpr const char* kStart = R"lua(
local t = redis.call('HMGET', KEYS[1], 'state', 'entry')
if (not t[1]) or t[2] ~= ARGV[1] or finished(t[1]) then
  redis.call('XACK', KEYS[2], 'workers', ARGV[1])
  redis.call('XDEL', KEYS[2], ARGV[1])
  return {'skip', '0'}
end
if t[1] ~= 'queued' and ARGV[4] ~= '1' then return {'taken', '0'} end
local deliveries = redis.call('HINCRBY', KEYS[1], 'deliveries', 1)
redis.call('HSET', KEYS[1], 'state', 'processing', 'started_at', ARGV[2], 'worker', ARGV[3])
return {'run', tostring(deliveries), redis.call('HGET', KEYS[1], 'cancel') or '0'}
)lua";

// KEYS: task, stream, totals. ARGV: entry, state, result, now, ttl seconds.
inline constexpr const char* kFinish = R"lua(
redis.call('XACK', KEYS[2], 'workers', ARGV[1])
redis.call('XDEL', KEYS[2], ARGV[1])
local t = redis.call('HMGET', KEYS[1], 'state', 'entry')
if (not t[1]) or t[2] ~= ARGV[1] or finished(t[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'result', ARGV[3], 'finished_at', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'results_written', 1)
redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
)lua";

// KEYS: task, totals. ARGV: now, the cancelled response, ttl seconds. 0: unknown or finished.
inline constexpr const char* kCancel = R"lua(
local t = redis.call('HMGET', KEYS[1], 'state', 'entry', 'stream')
if (not t[1]) or finished(t[1]) then return 0 end
if t[1] == 'queued' then
  redis.call('XDEL', t[3], t[2])
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'result', ARGV[2], 'finished_at', ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'results_written', 1)
  redis.call('HINCRBY', KEYS[2], 'cancelled', 1)
  redis.call('EXPIRE', KEYS[1], ARGV[3])
else
  redis.call('HSET', KEYS[1], 'cancel', '1')
end
return 1
)lua";

// A stopping worker hands its task back: a new entry, queued again; not when another worker has taken
// it over meanwhile. KEYS: task, stream. ARGV: entry, consumer.
inline constexpr const char* kRequeue = R"lua(
local t = redis.call('HMGET', KEYS[1], 'state', 'entry', 'worker')
if t[1] ~= 'processing' or t[2] ~= ARGV[1] or t[3] ~= ARGV[2] then return 0 end
redis.call('XACK', KEYS[2], 'workers', ARGV[1])
redis.call('XDEL', KEYS[2], ARGV[1])
local entry = redis.call('XADD', KEYS[2], '*', 'task', redis.call('HGET', KEYS[1], 'id'))
redis.call('HSET', KEYS[1], 'state', 'queued', 'entry', entry)
redis.call('HINCRBY', KEYS[1], 'deliveries', -1)
return 1
)lua";

// What a worker's heartbeat needs to know of its task: stop it? KEYS: task. ARGV: entry.
// 1: cancelled by a client, finished by another worker, refreshed, or expired.
inline constexpr const char* kShouldStop = R"lua(
local t = redis.call('HMGET', KEYS[1], 'state', 'entry', 'cancel')
if (not t[1]) or t[2] ~= ARGV[1] or finished(t[1]) or t[3] == '1' then return 1 end
return 0
)lua";

}  // namespace cuset::service::redis_scripts
