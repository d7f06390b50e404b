-- The event seam (issue 30, point 6): every state change an integrator may want to hear about is
-- written here in the same transaction as the change itself, so an event exists exactly when its
-- change committed. Nothing consumes it yet but a test and the retention sweep; webhooks (issue 31)
-- will deliver from it. `id` orders events in commit-compatible order per organization only as far
-- as a bigserial can: consumers page by id and tolerate a late lower id (a transaction that took its
-- id earlier and committed later), which is why `recorded_at` is kept beside it.
CREATE TABLE domain_events (
  id bigserial PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  type text NOT NULL,
  -- The resource the event is about (a signal, a session, a recording, a meeting join).
  subject_id uuid NOT NULL,
  payload jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX domain_events_organization_id_idx ON domain_events (organization_id, id);
CREATE INDEX domain_events_recorded_at_idx ON domain_events (recorded_at);
