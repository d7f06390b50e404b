import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, describeError, unwrap, type Answer, type Body } from '../api';
import { ErrorNote, Loading, Pager, ShownOnce, Time, useConfirm, useLoad, usePolling } from '../ui';
import { retrySentence } from '../webhook-schedule';

type EventType = NonNullable<Body<'createWebhookEndpoint'>['eventTypes']>[number];
type Delivery = Answer<'listWebhookDeliveries'>['deliveries'][number];
/** Every event type, said plainly (checked against the API's types: a type added there fails the build here). */
const EVENT_TYPES: Record<EventType, string> = {
  'signal.created': 'A signal was found in a conversation',
  'agent_session.processed': 'A session was processed through a new watermark',
  'agent_session.billing_blocked': 'Processing stopped for lack of credits',
  'agent_session.billing_resumed': 'Processing resumed after credits were added',
  'recording.media_ready': "A recording's media is ready to play",
  'recording.media_failed': "A recording's media failed",
  'recording.transcript_completed': "A recording's transcript is complete",
  'meeting_join.ended': 'A recorder bot left its meeting',
};
const ALL = Object.keys(EVENT_TYPES) as EventType[];

function EventTypesField({ value, onChange }: { value: EventType[] | null; onChange: (v: EventType[] | null) => void }) {
  return (
    <fieldset>
      <legend>Events delivered</legend>
      <label class="inline">
        <input type="radio" name="event-scope" checked={value === null} onChange={() => onChange(null)} /> Every type, including types added
        later
      </label>
      <label class="inline">
        <input type="radio" name="event-scope" checked={value !== null} onChange={() => onChange(value ?? [...ALL])} /> These types
      </label>
      {value !== null &&
        ALL.map((t) => (
          <label key={t} class="scope">
            <input
              type="checkbox"
              checked={value.includes(t)}
              onChange={(e) => onChange(e.currentTarget.checked ? [...value, t] : value.filter((x) => x !== t))}
            />{' '}
            <code>{t}</code> {EVENT_TYPES[t]}
          </label>
        ))}
    </fieldset>
  );
}

/** Webhook endpoints: the list and a new one (its secret shown once). */
export function WebhooksPage() {
  const { route } = useLocation();
  const [page, setPage] = useState(1);
  const list = useLoad(() => unwrap(api.GET('/v3/rest/webhook-endpoints', { params: { query: { page, limit: 50 } } })), [page]);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<EventType[] | null>(null);
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const endpoint = await unwrap(api.POST('/v3/rest/webhook-endpoints', { body: { url, description, eventTypes: types } }));
      setCreated({ id: endpoint.id, secret: endpoint.secret });
      setUrl('');
      setDescription('');
      list.reload();
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <main id="main">
      <h1>Webhooks</h1>
      <p class="lead" data-testid="webhooks-lead">
        Intake POSTs events to your endpoints, signed (Standard Webhooks). {retrySentence()}
      </p>
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Loading what="endpoints" />}
      {list.data && list.data.endpoints.length === 0 && (
        <p>No endpoints yet: nothing is sent until you create one below (docs/guides/webhooks.md).</p>
      )}
      {list.data && list.data.endpoints.length > 0 && (
        <table>
          <caption class="visually-hidden">Webhook endpoints</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Description</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {list.data.endpoints.map((ep) => (
              <tr key={ep.id}>
                <td>
                  <a href={`/console/webhooks/${ep.id}`}>{ep.url}</a>
                </td>
                <td>{ep.description || '—'}</td>
                <td>{ep.eventTypes ? ep.eventTypes.join(', ') : 'every type'}</td>
                <td>{ep.enabled ? 'enabled' : `disabled${ep.disabledReason ? `: ${ep.disabledReason}` : ''}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && <Pager page={page} hasMore={list.data.has_more} go={setPage} />}
      {created && (
        <ShownOnce
          label="The endpoint's signing secret"
          secret={created.secret}
          onDone={() => {
            const id = created.id;
            setCreated(null);
            route(`/console/webhooks/${id}`);
          }}
        />
      )}
      <section aria-labelledby="new-endpoint">
        <h2 id="new-endpoint">New endpoint</h2>
        <form onSubmit={(e) => void create(e)} class="stack">
          <label>
            URL
            <input type="url" required maxLength={2048} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </label>
          <label>
            Description
            <input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </label>
          <EventTypesField value={types} onChange={setTypes} />
          <ErrorNote error={error} />
          <button type="submit" class="primary">
            Create endpoint
          </button>
        </form>
      </section>
    </main>
  );
}

function DeliveryDetail({ endpointId, delivery, onRedelivered }: { endpointId: string; delivery: Delivery; onRedelivered: () => void }) {
  const path = { endpointId, deliveryId: delivery.id };
  const detail = useLoad(
    () => unwrap(api.GET('/v3/rest/webhook-endpoints/{endpointId}/deliveries/{deliveryId}', { params: { path } })),
    [delivery.id, delivery.attempts],
  );
  const [error, setError] = useState<string | null>(null);
  const redeliver = async () => {
    setError(null);
    try {
      await unwrap(api.POST('/v3/rest/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/redeliver', { params: { path } }));
      onRedelivered();
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <div class="delivery-detail">
      <ErrorNote error={detail.error ?? error} />
      {detail.data && (
        <>
          <h4>Attempts</h4>
          {detail.data.attemptLog.length === 0 ? (
            <p class="muted">Not attempted yet.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Attempts of {delivery.id}</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Response</th>
                  <th scope="col">Took</th>
                  <th scope="col">Answer or error</th>
                </tr>
              </thead>
              <tbody>
                {detail.data.attemptLog.map((a) => (
                  <tr key={a.attemptedAt}>
                    <td>
                      <Time at={a.attemptedAt} />
                    </td>
                    <td>{a.responseStatus ?? '—'}</td>
                    <td>{a.durationMs} ms</td>
                    <td>
                      <code class="excerpt">{a.error ?? a.responseExcerpt ?? ''}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {detail.data.body && (
            <details>
              <summary>Body sent</summary>
              <pre>{detail.data.body}</pre>
            </details>
          )}
        </>
      )}
      <button type="button" onClick={() => void redeliver()}>
        Redeliver
      </button>
    </div>
  );
}

function Deliveries({ endpointId, tick }: { endpointId: string; tick: number }) {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<'' | 'pending' | 'succeeded' | 'failed'>('');
  const [open, setOpen] = useState<string | null>(null);
  const list = useLoad(
    () =>
      unwrap(
        api.GET('/v3/rest/webhook-endpoints/{endpointId}/deliveries', {
          params: { path: { endpointId }, query: { page, limit: 25, status: status || undefined } },
        }),
      ),
    [endpointId, page, status, tick],
  );
  usePolling(list.reload, 3000, !!list.data?.deliveries.some((d) => d.status === 'pending'));
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <label>
        Status
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as typeof status)}>
          <option value="">All</option>
          <option value="pending">pending</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
        </select>
      </label>
      <ErrorNote error={list.error} />
      {list.data && list.data.deliveries.length === 0 && (
        <p class="muted">
          {status
            ? 'No deliveries match.'
            : 'No deliveries yet: events are delivered as they happen. Send a test event to try the endpoint.'}
        </p>
      )}
      {list.data && list.data.deliveries.length > 0 && (
        <table>
          <caption class="visually-hidden">Deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Details</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.deliveries.map((d) => (
              <>
                <tr key={d.id}>
                  <td>
                    <code>{d.eventType}</code>
                  </td>
                  <td>
                    <span class={`badge ${d.status === 'succeeded' ? 'completed' : d.status === 'failed' ? 'negative' : ''}`}>
                      {d.status}
                    </span>
                  </td>
                  <td>{d.attempts}</td>
                  <td>{d.lastResponseStatus ?? d.lastError ?? '—'}</td>
                  <td>
                    <Time at={d.createdAt} />
                  </td>
                  <td>
                    <button type="button" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? null : d.id)}>
                      {open === d.id ? 'Hide' : 'Attempts'}
                      <span class="visually-hidden">
                        {' '}
                        of {d.eventType} delivery {d.id}
                      </span>
                    </button>
                  </td>
                </tr>
                {open === d.id && (
                  <tr key={`${d.id}-detail`}>
                    <td colSpan={6}>
                      <DeliveryDetail endpointId={endpointId} delivery={d} onRedelivered={list.reload} />
                    </td>
                  </tr>
                )}
              </>
            ))}
          </tbody>
        </table>
      )}
      {list.data && <Pager page={page} hasMore={list.data.has_more} go={setPage} />}
    </section>
  );
}

/** An endpoint: its settings (enable, event types), its secret rotated, a test event, its deliveries. */
export function WebhookPage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.endpointId ?? '';
  const path = { endpointId: id };
  const ep = useLoad(() => unwrap(api.GET('/v3/rest/webhook-endpoints/{endpointId}', { params: { path } })), [id]);
  const [types, setTypes] = useState<EventType[] | null | undefined>(undefined);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const { ask, dialog } = useConfirm();
  const e = ep.data;
  if (!e)
    return (
      <main id="main">
        <h1>Webhook endpoint</h1>
        <ErrorNote error={ep.error} />
        {!ep.error && <Loading what="the endpoint" />}
      </main>
    );
  const act = async (what: () => Promise<unknown>, done?: string) => {
    setError(null);
    setNotice(null);
    try {
      await what();
      if (done) setNotice(done);
      ep.reload();
      setTick((t) => t + 1);
    } catch (err) {
      setError(describeError(err));
    }
  };
  const patch = (body: Body<'updateWebhookEndpoint'>) =>
    unwrap(api.PATCH('/v3/rest/webhook-endpoints/{endpointId}', { params: { path }, body }));
  const rotate = async () => {
    if (
      !(await ask({
        title: 'Rotate the signing secret?',
        body: (
          <p>
            A new secret signs deliveries from now on; the current one also signs them for 24 hours, while your receiver moves to the new
            one.
          </p>
        ),
        action: 'Rotate secret',
      }))
    )
      return;
    await act(async () =>
      setSecret((await unwrap(api.POST('/v3/rest/webhook-endpoints/{endpointId}/rotate-secret', { params: { path } }))).secret),
    );
  };
  const remove = async () => {
    if (
      !(await ask({
        title: `Delete ${e.url}?`,
        body: <p>Nothing more is delivered to it, and its delivery log is deleted.</p>,
        action: 'Delete endpoint',
      }))
    )
      return;
    await act(async () => {
      await unwrap(api.DELETE('/v3/rest/webhook-endpoints/{endpointId}', { params: { path } }));
      route('/console/webhooks');
    });
  };
  const shown: EventType[] | null = types === undefined ? ((e.eventTypes as EventType[] | null) ?? null) : types;
  return (
    <main id="main">
      <p>
        <a href="/console/webhooks">Webhooks</a> /
      </p>
      <h1>{e.url}</h1>
      <p class="muted">
        {e.description || 'No description'} · created <Time at={e.createdAt} />
        {e.previousSecretExpiresAt && (
          <>
            {' '}
            · the previous secret also signs until <Time at={e.previousSecretExpiresAt} />
          </>
        )}
      </p>
      <p data-testid="endpoint-state">
        {e.enabled ? 'Enabled' : `Disabled${e.disabledReason ? `: ${e.disabledReason}` : ''}`}{' '}
        <button type="button" onClick={() => void act(() => patch({ enabled: !e.enabled }), e.enabled ? 'Disabled.' : 'Enabled.')}>
          {e.enabled ? 'Disable' : 'Enable'}
        </button>
      </p>
      {secret && <ShownOnce label="The new signing secret" secret={secret} onDone={() => setSecret(null)} />}
      <form
        onSubmit={(ev) => {
          ev.preventDefault();
          void act(() => patch({ eventTypes: shown }), 'Saved.');
        }}
        class="stack"
      >
        <EventTypesField value={shown} onChange={setTypes} />
        <button type="submit">Save event types</button>
      </form>
      <div class="actions-row">
        <button
          type="button"
          onClick={() =>
            void act(() => unwrap(api.POST('/v3/rest/webhook-endpoints/{endpointId}/test', { params: { path } })), 'Test event sent.')
          }
        >
          Send a test event
        </button>
        <button type="button" onClick={() => void rotate()}>
          Rotate secret
        </button>
        <button type="button" class="danger" onClick={() => void remove()}>
          Delete endpoint
        </button>
      </div>
      <ErrorNote error={error} />
      {notice && (
        <p role="status" class="ok">
          {notice}
        </p>
      )}
      <Deliveries endpointId={id} tick={tick} />
      {dialog}
    </main>
  );
}
