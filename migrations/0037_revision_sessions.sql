-- Full, shared and long-running (issue 53, decision 0216), second of four: the session and the
-- organization of every revision written before 0036, in one statement. An UPDATE takes no lock that
-- stops inserts (0036 committed the columns): ingest, revisions included, goes on meanwhile, and the
-- rows it inserts get both from 0036's trigger. About 3% of the events have a revision: 1.5 s at 1M
-- events on the benchmark's machine.
UPDATE agent_event_revisions r SET session_id = e.session_id, organization_id = s.organization_id
FROM agent_events e JOIN agent_sessions s ON s.id = e.session_id
WHERE e.id = r.event_id AND r.session_id IS NULL;
