import { useLocation } from 'preact-iso';
import { api, unwrap } from '../api';
import { ErrorNote, Loading, Pager, Time, useListQuery, useLoad } from '../ui';

const SOURCES = ['explicit_feedback', 'qualitative_inference'] as const;
const RATINGS = ['positive', 'negative'] as const;

/** Signals: what processing found (explicit feedback, inferred sentiment, issues, requests…), filtered; the filters live in the URL. */
export function SignalsPage() {
  const { query } = useLocation();
  const source = SOURCES.find((s) => s === query.source);
  const rating = RATINGS.find((r) => r === query.rating);
  const applicationId = query.applicationId || undefined;
  const { page, go } = useListQuery('/console/signals', { source, rating, applicationId });
  const apps = useLoad(() => unwrap(api.GET('/v3/rest/agent-applications', { params: { query: { limit: 100 } } })), []);
  const list = useLoad(
    () => unwrap(api.GET('/v3/rest/signals', { params: { query: { source, rating, applicationId, page, limit: 50 } } })),
    [source, rating, applicationId, page],
  );
  return (
    <main id="main">
      <h1>Signals</h1>
      <p class="lead">
        What processing found in conversations: explicit feedback, and inferred sentiment, issues, requests, praise and topics.
      </p>
      <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Source
          <select value={source ?? ''} onChange={(e) => go({ source: e.currentTarget.value || undefined, page: '1' })}>
            <option value="">All</option>
            <option value="explicit_feedback">explicit feedback</option>
            <option value="qualitative_inference">inferred</option>
          </select>
        </label>
        <label>
          Rating
          <select value={rating ?? ''} onChange={(e) => go({ rating: e.currentTarget.value || undefined, page: '1' })}>
            <option value="">All</option>
            {RATINGS.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        {apps.data && (
          <label>
            Application
            <select value={applicationId ?? ''} onChange={(e) => go({ applicationId: e.currentTarget.value || undefined, page: '1' })}>
              <option value="">All</option>
              {apps.data.applications.map((a) => (
                <option key={a.applicationId} value={a.applicationId}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </form>
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Loading what="signals" />}
      {list.data && list.data.signals.length === 0 && <p>No signals match.</p>}
      {list.data && list.data.signals.length > 0 && (
        <table>
          <caption class="visually-hidden">Signals</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Rating</th>
              <th scope="col">What</th>
              <th scope="col">Session</th>
              <th scope="col">Found</th>
            </tr>
          </thead>
          <tbody>
            {list.data.signals.map((g) => (
              <tr key={g.id}>
                <td>{g.kind ?? g.source}</td>
                <td>{g.rating ? <span class={`badge ${g.rating}`}>{g.rating}</span> : '—'}</td>
                <td>{[g.summary ?? g.comment, g.labels.join(', ')].filter(Boolean).join(' · ') || '—'}</td>
                <td>
                  <a href={`/console/sessions/${g.sessionId}`}>{g.sessionId.slice(0, 8)}</a>
                </td>
                <td>
                  <Time at={g.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && <Pager page={page} hasMore={list.data.has_more} go={(p) => go({ page: String(p) })} />}
    </main>
  );
}
