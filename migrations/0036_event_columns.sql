-- Full, shared and long-running (issue 53, decision 0216), first of four: the organization on every
-- event-level table, and a revision's session. Each of 0036-0039 is its own transaction (0038 none),
-- so that no lock is held across the revisions' backfill (0037) and agent_events is locked only for
-- 0039's catalogue statements. A 0.1 process running beside this version (the rolling upgrade) keeps
-- working: the triggers below fill what it does not write.

-- The organization (decision 0200: the tenant key of per-tenant export and erasure, of a column
-- store's sort key, of tenant sharding). Written by every insert from this version on; NULL on the
-- rows written before it, which stay in the legacy partition until retention removes them (every
-- read by organization goes through the sessions, which have it). Nullable columns without a
-- default: catalogue changes, no row rewritten.
ALTER TABLE agent_events ADD COLUMN organization_id uuid;
ALTER TABLE agent_event_revisions ADD COLUMN organization_id uuid;
ALTER TABLE agent_analysis_jobs ADD COLUMN organization_id uuid;
ALTER TABLE agent_participants ADD COLUMN organization_id uuid;
-- A revision names its session (0039 drops its foreign key to agent_events(id)); 0037 fills the rows before.
ALTER TABLE agent_event_revisions ADD COLUMN session_id uuid;

-- What a 0.1 process does not write: the organization (from the session), and a revision's
-- session (from its event). This version writes both itself, so the triggers' WHEN skips them.
CREATE FUNCTION intake_fill_session_organization() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.organization_id := (SELECT organization_id FROM agent_sessions WHERE id = NEW.session_id);
  RETURN NEW;
END $$;
CREATE FUNCTION intake_fill_revision_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.session_id IS NULL THEN
    NEW.session_id := (SELECT session_id FROM agent_events WHERE id = NEW.event_id);
  END IF;
  NEW.organization_id := (SELECT organization_id FROM agent_sessions WHERE id = NEW.session_id);
  RETURN NEW;
END $$;
CREATE TRIGGER agent_event_revisions_fill BEFORE INSERT ON agent_event_revisions
  FOR EACH ROW WHEN (NEW.session_id IS NULL OR NEW.organization_id IS NULL) EXECUTE FUNCTION intake_fill_revision_session();
CREATE TRIGGER agent_analysis_jobs_organization BEFORE INSERT ON agent_analysis_jobs
  FOR EACH ROW WHEN (NEW.organization_id IS NULL) EXECUTE FUNCTION intake_fill_session_organization();
CREATE TRIGGER agent_participants_organization BEFORE INSERT ON agent_participants
  FOR EACH ROW WHEN (NEW.organization_id IS NULL) EXECUTE FUNCTION intake_fill_session_organization();

