import { useLocation } from 'preact-iso';
import { api, unwrap } from '../api';
import { ErrorNote, FilterSelect, Loading, Pager, Time, useApplicationOptions, useListQuery, useLoad } from '../ui';

const SOURCES = ['explicit_feedback', 'qualitative_inference'] as const;
const RATINGS = ['positive', 'negative'] as const;

/** Signals: what processing found (explicit feedback, inferred sentiment, issues, requests…), filtered; the filters live in the URL. */
export function SignalsPage() {
  const { query } = useLocation();
  const source = SOURCES.find((s) => s === query.source);
  const rating = RATINGS.find((r) => r === query.rating);
  const applicationId = query.applicationId || undefined;
  const { page, go } = useListQuery('/console/signals', { source, rating, applicationId });
  const appOptions = useApplicationOptions();
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
        <FilterSelect
          label="Source"
          value={source}
          options={[
            ['explicit_feedback', 'explicit feedback'],
            ['qualitative_inference', 'inferred'],
          ]}
          onChange={(v) => go({ source: v, page: '1' })}
        />
        <FilterSelect
          label="Rating"
          value={rating}
          options={RATINGS.map((x) => [x, x] as const)}
          onChange={(v) => go({ rating: v, page: '1' })}
        />
        {appOptions && (
          <FilterSelect
            label="Application"
            value={applicationId}
            options={appOptions}
            onChange={(v) => go({ applicationId: v, page: '1' })}
          />
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
