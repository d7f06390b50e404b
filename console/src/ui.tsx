import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { describeError } from './api';

/** Something loaded from the API: its data, its error (as the user reads it), and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: string | null; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
      },
      (e: unknown) => live && setError(describeError(e)),
    );
    return () => {
      live = false;
    };
    // `load` is a new closure each render: `deps` say when it reads something else.
  }, [...deps, tick]);
  return { data, error, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** Runs `fn` every `ms` while `active` and the tab is visible (a session that is still moving). */
export function usePolling(fn: () => void, ms: number, active: boolean): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return;
    const id = setInterval(() => {
      if (document.visibilityState === 'visible') saved.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms, active]);
}

export function ErrorNote({ error }: { error: string | null | undefined }) {
  return error ? (
    <p role="alert" class="error">
      {error}
    </p>
  ) : null;
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  const d = new Date(at);
  return (
    <time dateTime={at} title={at}>
      {d.toLocaleString()}
    </time>
  );
}

export interface ConfirmRequest {
  title: string;
  body: ComponentChildren;
  /** The confirming button's label ("Turn capture off"). */
  action: string;
}

/**
 * A confirmation before a destructive change: a modal <dialog> naming what will happen. `ask`
 * resolves true when the user confirms.
 */
export function useConfirm(): { ask: (r: ConfirmRequest) => Promise<boolean>; dialog: ComponentChildren } {
  const ref = useRef<HTMLDialogElement>(null);
  const [request, setRequest] = useState<(ConfirmRequest & { resolve: (ok: boolean) => void }) | null>(null);
  useEffect(() => {
    if (request && ref.current && !ref.current.open) ref.current.showModal();
  }, [request]);
  const close = (ok: boolean) => {
    ref.current?.close();
    request?.resolve(ok);
    setRequest(null);
  };
  const dialog = (
    <dialog ref={ref} aria-labelledby="confirm-title" onCancel={() => close(false)}>
      {request && (
        <div>
          <h2 id="confirm-title">{request.title}</h2>
          <div>{request.body}</div>
          <div class="actions">
            <button type="button" onClick={() => close(false)}>
              Cancel
            </button>
            <button type="button" class="danger" onClick={() => close(true)}>
              {request.action}
            </button>
          </div>
        </div>
      )}
    </dialog>
  );
  return { ask: (r) => new Promise((resolve) => setRequest({ ...r, resolve })), dialog };
}

/** A secret shown once (an ingest secret, an API key), with a copy button. */
export function ShownOnce({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <section class="once" aria-labelledby="once-title">
      <h3 id="once-title">{label}</h3>
      <p>This is the only time it is shown: copy it now and keep it where your secrets live.</p>
      <p>
        <code data-testid="secret">{secret}</code>{' '}
        <button
          type="button"
          onClick={() => {
            void navigator.clipboard?.writeText(secret).then(() => setCopied(true));
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </section>
  );
}

/** Previous and next page of an offset-paged list. */
export function Pager({ page, hasMore, go }: { page: number; hasMore: boolean; go: (page: number) => void }) {
  if (page === 1 && !hasMore) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => go(page - 1)}>
        Previous
      </button>
      <span>Page {page}</span>
      <button type="button" disabled={!hasMore} onClick={() => go(page + 1)}>
        Next
      </button>
    </nav>
  );
}

/**
 * A list's filters and page kept in its URL (a link to a filtered list works, Back works): the page
 * number, and `go` to a URL with some of them changed (absent or empty: removed; page 1: left out).
 */
export function useListQuery(path: string, filters: Record<string, string | undefined>) {
  const { query, route } = useLocation();
  const page = Math.max(1, Number(query.page) || 1);
  const go = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...filters, page: String(page), ...changes }))
      if (v && !(k === 'page' && v === '1')) next.set(k, v);
    route(`${path}${next.size ? `?${next.toString()}` : ''}`);
  };
  return { page, go };
}

/** A filter of a list: "All" (undefined) or one of `options` ([value, label]). */
export function FilterSelect({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string | undefined;
  options: readonly (readonly [string, string])[];
  onChange: (value: string | undefined) => void;
}) {
  return (
    <label>
      {label}
      <select value={value ?? ''} onChange={(e) => onChange(e.currentTarget.value || undefined)}>
        <option value="">All</option>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A `datetime-local` value (the browser's time zone) as an instant, for the API. */
export const isoOf = (local: string | undefined) => (local ? new Date(local).toISOString() : undefined);

/**
 * A list's time filter (sessions started, signals found, recordings recorded): from (inclusive) and
 * before (exclusive), in the browser's time zone, kept in the URL as `after` and `before`. An empty
 * range is said here instead of being sent.
 */
export function CreatedRange({
  legend,
  fromLabel,
  toLabel,
  after,
  before,
  go,
}: {
  legend: string;
  fromLabel: string;
  toLabel: string;
  after: string | undefined;
  before: string | undefined;
  go: (range: { after: string | undefined; before: string | undefined }) => void;
}) {
  const [from, setFrom] = useState(after ?? '');
  const [to, setTo] = useState(before ?? '');
  const [error, setError] = useState<string | null>(null);
  // Back and forward change the URL: the inputs follow it.
  useEffect(() => {
    setFrom(after ?? '');
    setTo(before ?? '');
  }, [after, before]);
  return (
    <form
      class="filters"
      aria-label={legend}
      onSubmit={(e) => {
        e.preventDefault();
        if (from && to && new Date(from) >= new Date(to)) return setError(`“${toLabel}” must be later than “${fromLabel}”.`);
        setError(null);
        go({ after: from || undefined, before: to || undefined });
      }}
    >
      <label>
        {fromLabel}
        <input type="datetime-local" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
      </label>
      <label>
        {toLabel}
        <input type="datetime-local" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
      </label>
      <button type="submit">Filter</button>
      {(after || before) && (
        <button
          type="button"
          onClick={() => {
            setError(null);
            go({ after: undefined, before: undefined });
          }}
        >
          Any time
        </button>
      )}
      <ErrorNote error={error} />
    </form>
  );
}
