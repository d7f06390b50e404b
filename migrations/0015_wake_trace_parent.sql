-- The W3C traceparent of the agent ingest that requested a session's latest wake, when tracing is
-- on: the drainer or the reconciler tells the session's workflow inside that trace, so that one
-- trace runs from the HTTP request through the workflow to its activities. Null when untraced.
ALTER TABLE agent_sessions ADD COLUMN wake_trace_parent text;
