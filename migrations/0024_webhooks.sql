-- Webhooks (issue 31, point 1): endpoints an organization registers, and the deliveries of its
-- domain events (migration 0023) to them.

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  url text NOT NULL,
  description text NOT NULL DEFAULT '',
  -- NULL: every event type, including types added later.
  event_types text[],
  enabled boolean NOT NULL DEFAULT true,
  -- Why the endpoint was disabled (by its owner, or by Intake after 5 days of failures).
  disabled_reason text,
  disabled_at timestamptz,
  -- The `whsec_` signing secret, sealed (src/webhooks/secret-box.ts): AES-256-GCM under the payload keys.
  secret_sealed text NOT NULL,
  -- After a rotation the previous secret still signs (a second signature) until it expires.
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  -- The start of the current run of failed attempts; NULL after any success.
  failing_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_organization_id_idx ON webhook_endpoints (organization_id, created_at, id);

-- One delivery per (endpoint, event): its `id` is the `webhook-id` header, the same on every attempt
-- and every redelivery, so receivers deduplicate by it.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- NULL for a test event (not a domain event). No foreign key: events are purged after 30 days.
  event_id bigint,
  event_type text NOT NULL,
  -- The resource the event is about; deliveries of one subject to one endpoint go in event order.
  subject_id uuid,
  -- The JSON body, fixed at the first attempt so that every attempt signs the same bytes.
  body text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_response_status integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id);

-- Every attempt of a delivery: what the receiver answered (status, a bounded excerpt) or why it could not be reached.
CREATE TABLE webhook_delivery_attempts (
  id bigserial PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at timestamptz NOT NULL DEFAULT now(),
  response_status integer,
  response_excerpt text,
  error text,
  duration_ms integer NOT NULL
);
CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, id);
