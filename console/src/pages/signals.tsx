import { useLocation } from 'preact-iso';
import { api, unwrap } from '../api';
import { useApplicationOptions } from '../caller';
import { CreatedRange, ErrorNote, FilterSelect, isoOf, Loading, Pager, Time, useListQuery, useLoad } from '../ui';
import { ApplicationName } from './sessions';

const SOURCES = ['explicit_feedback', 'qualitative_inference'] as const;
const RATINGS = ['positive', 'negative'] as const;

/** Signals: what processing found (explicit feedback, inferred sentiment, issues, requests…), filtered; the filters live in the URL. */
export function SignalsPage() {
  const { query } = useLocation();
  const source = SOURCES.find((s) => s === query.source);
  const rating = RATINGS.find((r) => r === query.rating);
  const applicationId = query.applicationId || undefined;
  const { after, before } = query;
  const { page, go } = useListQuery('/console/signals', { source, rating, applicationId, after, before });
  const appOptions = useApplicationOptions();
  const appName = new Map(appOptions ?? []);
  const list = useLoad(
    () =>
      unwrap(
        api.GET('/v3/rest/signals', {
          params: { query: { source, rating, applicationId, createdFrom: isoOf(after), createdTo: isoOf(before), page, limit: 50 } },
        }),
      ),
    [source, rating, applicationId, after, before, page],
  );
  const filtered = !!(source || rating || applicationId || after || before);
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
      <CreatedRange
        legend="Found between"
        fromLabel="Found from"
        toLabel="Found before"
        after={after}
        before={before}
        go={(range) => go({ ...range, page: '1' })}
      />
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Loading what="signals" />}
      {list.data && list.data.signals.length === 0 && filtered && <p>No signals match.</p>}
      {list.data && list.data.signals.length === 0 && !filtered && (
        <p>
          No signals yet. Signals come from processed sessions: feedback events (a rating, labels or a comment on an answer), and what the
          analysis of each finished answer infers. A session waiting for credits (billing blocked) is analysed once credits are added; a
          session with content capture off is not analysed.
        </p>
      )}
      {list.data && list.data.signals.length > 0 && (
        <table>
          <caption class="visually-hidden">Signals</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Rating</th>
              <th scope="col">What</th>
              <th scope="col">Session</th>
              <th scope="col">Application</th>
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
                  <ApplicationName id={g.applicationId} name={appName.get(g.applicationId)} />
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
