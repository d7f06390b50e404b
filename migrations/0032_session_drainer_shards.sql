-- Session drainer shards (issue 34). Sessions are drained by AGENT_DRAIN_SHARDS drainer workflows per
-- task queue, each claiming the sessions of its bucket (a hash of the session id, see
-- src/db/repositories/agent-sessions.ts, claimDueSessions). The workers of a task queue say here
-- that they are alive, every few seconds: each holds no more than its share of the shards
-- (shards / live workers, rounded up), so that every worker drains. A worker that stops saying so
-- is not counted after a few seconds; its shards' activities time out and move to the others.
CREATE TABLE session_drainer_workers (
  task_queue text NOT NULL,
  worker text NOT NULL,
  seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_queue, worker)
);
