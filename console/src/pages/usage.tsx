import { useState } from 'preact/hooks';
import { api, unwrap, type Schemas } from '../api';
import { useApplicationOptions, useCan } from '../caller';
import { ErrorNote, FilterSelect, Loading, Pager, Time, useLoad } from '../ui';

const DAY = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

/**
 * Units per day as bars: an SVG drawn here (a bar per day needs no charting library), labelled for
 * screen readers, with the same numbers in the table below it.
 */
export function DayChart({ days, from, to }: { days: Schemas['Usage']['days']; from: string; to: string }) {
  const byDate = new Map(days.map((d) => [d.date, d.quantity]));
  const all: { date: string; quantity: number }[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t < Date.parse(`${to}T00:00:00Z`); t += DAY) {
    const date = isoDay(t);
    all.push({ date, quantity: byDate.get(date) ?? 0 });
  }
  const max = Math.max(1, ...all.map((d) => d.quantity));
  const width = 720;
  const height = 180;
  const bar = width / Math.max(all.length, 1);
  const total = all.reduce((s, d) => s + d.quantity, 0);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height + 24}`}
        role="img"
        aria-label={`Units per day from ${from} to ${to}: ${total} in total, at most ${max} a day`}
      >
        <line x1="0" y1={height} x2={width} y2={height} class="axis" />
        {all.map((d, i) => {
          const h = (d.quantity / max) * (height - 10);
          return (
            <rect key={d.date} x={i * bar + 1} y={height - h} width={Math.max(bar - 2, 1)} height={h} class="bar">
              <title>
                {d.date}: {d.quantity}
              </title>
            </rect>
          );
        })}
        <text x="0" y={height + 18} class="tick">
          {all[0]?.date}
        </text>
        <text x={width} y={height + 18} text-anchor="end" class="tick">
          {all.at(-1)?.date}
        </text>
        <text x="4" y="12" class="tick">
          {max}
        </text>
      </svg>
    </figure>
  );
}

/** Usage per day as a chart, the credit balance and its ledger. */
export function UsagePage() {
  const today = Date.now();
  const [from, setFrom] = useState(isoDay(today - 29 * DAY));
  const [to, setTo] = useState(isoDay(today + DAY));
  const [applicationId, setApplicationId] = useState<string | undefined>(undefined);
  const [ledgerPage, setLedgerPage] = useState(1);
  const appOptions = useApplicationOptions();
  const usage = useLoad(
    () =>
      unwrap(
        api.GET('/v3/rest/usage', {
          params: { query: { from: `${from}T00:00:00Z`, to: `${to}T00:00:00Z`, applicationId } },
        }),
      ),
    [from, to, applicationId],
  );
  const org = useLoad(() => unwrap(api.GET('/v3/rest/organization')), []);
  // The ledger is for admins: a member sees the balance only.
  const admin = useCan('admin');
  const ledger = useLoad(
    () =>
      admin
        ? unwrap(api.GET('/v3/rest/organization/credit-transactions', { params: { query: { page: ledgerPage, limit: 20 } } }))
        : Promise.resolve(null),
    [ledgerPage, admin],
  );
  return (
    <main id="main">
      <h1>Usage and credits</h1>
      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Processed responses per day</h2>
        <form class="filters" aria-label="Usage period" onSubmit={(e) => e.preventDefault()}>
          <label>
            From
            <input type="date" value={from} max={to} onChange={(e) => e.currentTarget.value && setFrom(e.currentTarget.value)} />
          </label>
          <label>
            To (exclusive)
            <input type="date" value={to} min={from} onChange={(e) => e.currentTarget.value && setTo(e.currentTarget.value)} />
          </label>
          {appOptions && <FilterSelect label="Application" value={applicationId} options={appOptions} onChange={setApplicationId} />}
        </form>
        <ErrorNote error={usage.error} />
        {!usage.data && !usage.error && <Loading what="usage" />}
        {usage.data && (
          <>
            <p>
              <strong data-testid="usage-total">{usage.data.quantity}</strong> {usage.data.unit.replace(/_/g, ' ')} units in the period.
            </p>
            <DayChart days={usage.data.days} from={from} to={to} />
            {usage.data.days.length > 0 && (
              <table>
                <caption>Days with usage</caption>
                <thead>
                  <tr>
                    <th scope="col">Day (UTC)</th>
                    <th scope="col">Units</th>
                  </tr>
                </thead>
                <tbody>
                  {usage.data.days.map((d) => (
                    <tr key={d.date}>
                      <td>{d.date}</td>
                      <td>{d.quantity}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </section>
      <section aria-labelledby="credits-title">
        <h2 id="credits-title">Credits</h2>
        <ErrorNote error={org.error} />
        {org.data && (
          <p>
            Balance: <strong data-testid="balance">{org.data.creditBalance}</strong> credits. Credits are added by your Intake operator.
            {org.data.creditBalance <= 0 &&
              ' At this balance, answers are not analysed (their sessions are billing blocked): explicit feedback and metering go on, and the analyses resume by themselves once credits are added.'}
          </p>
        )}
        {admin && <h3>Ledger</h3>}
        <ErrorNote error={ledger.error} />
        {ledger.data && ledger.data.transactions.length === 0 && <p class="muted">No credit movements yet.</p>}
        {ledger.data && ledger.data.transactions.length > 0 && (
          <table>
            <caption class="visually-hidden">Credit ledger</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Change</th>
                <th scope="col">Reason</th>
                <th scope="col">Balance after</th>
              </tr>
            </thead>
            <tbody>
              {ledger.data.transactions.map((t) => (
                <tr key={t.transactionId}>
                  <td>
                    <Time at={t.createdAt} />
                  </td>
                  <td class={t.amount < 0 ? 'debit' : 'credit'}>{t.amount > 0 ? `+${t.amount}` : t.amount}</td>
                  <td>{t.reason}</td>
                  <td>{t.balanceAfter}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {ledger.data && <Pager page={ledgerPage} hasMore={ledger.data.has_more} go={setLedgerPage} />}
      </section>
    </main>
  );
}
