-- Webhook delivery engine (issue 31): the indexes its queries need beside migration 0024's.
-- Per-subject order: a delivery waits while an earlier one (lower event id) of its subject to its
-- endpoint is pending; this finds that one without scanning the endpoint's whole backlog.
CREATE INDEX webhook_deliveries_pending_subject_idx ON webhook_deliveries (endpoint_id, subject_id, event_id) WHERE status = 'pending';
-- The safety sweep: endpoints with a due delivery, whatever endpoint.
CREATE INDEX webhook_deliveries_pending_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
