import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { Upload } from 'tus-js-client';
import { api, describeError, unwrap } from '../api';
import { useOrganization } from '../caller';
import { CreatedRange, ErrorNote, isoOf, Loading, Pager, Time, useListQuery, useLoad } from '../ui';

/**
 * A file sent with tus-js-client to the upload the API created: progress as it goes, and after a
 * network drop it asks the server where it stopped and resumes from there (retryDelays).
 */
export function uploadFile(file: File, uploadUrl: string, onProgress: (sent: number, total: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const upload = new Upload(file, {
      uploadUrl,
      // Resume after a drop: at once, then after 1, 3, 5 and 10 s; then every 10 s up to a minute.
      retryDelays: [0, 1000, 3000, 5000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000],
      chunkSize: 5 * 1024 * 1024,
      // The upload URL is a short-lived secret (not kept in localStorage to resume another day).
      storeFingerprintForResuming: false,
      onProgress,
      onSuccess: () => resolve(),
      onError: reject,
    });
    upload.start();
  });
}

type Phase = 'idle' | 'creating' | 'uploading' | 'processing' | 'done' | 'failed';

/**
 * A file to a recording's media: an upload created with the API, the bytes sent with tus (resuming
 * after a drop), then the upload followed until the media is ready. A progress bar says where it is.
 */
export function useMediaUpload() {
  const [phase, setPhase] = useState<Phase>('idle');
  const [sent, setSent] = useState(0);
  const [total, setTotal] = useState(0);
  const [status, setStatus] = useState('');
  const [error, setError] = useState<string | null>(null);
  const send = async (recordingId: string, file: File): Promise<boolean> => {
    const path = { recordingId };
    setError(null);
    setTotal(file.size);
    setSent(0);
    try {
      const created = await unwrap(
        api.POST('/v3/rest/recordings/{recordingId}/uploads', { params: { path }, body: { fileName: file.name, fileSize: file.size } }),
      );
      setPhase('uploading');
      await uploadFile(file, created.uploadUrl, (bytes) => setSent(bytes));
      setPhase('processing');
      for (;;) {
        const s = await unwrap(
          api.GET('/v3/rest/recordings/{recordingId}/uploads/{uploadId}', { params: { path: { ...path, uploadId: created.uploadId } } }),
        );
        setStatus(s.phase === 'encoding' && s.encodeProgress !== null ? `encoding ${s.encodeProgress}%` : s.phase);
        if (s.phase === 'ready') break;
        if (s.phase === 'failed' || s.phase === 'cancelled')
          throw new Error(`The upload ${s.phase}${s.errorCode ? ` (${s.errorCode})` : ''}.`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      setPhase('done');
      return true;
    } catch (err) {
      setPhase('failed');
      setError(describeError(err));
      return false;
    }
  };
  const busy = phase === 'creating' || phase === 'uploading' || phase === 'processing';
  const progress =
    phase === 'idle' ? null : (
      <div aria-live="polite">
        <label>
          Upload
          <progress max={Math.max(total, 1)} value={sent} data-testid="upload-progress" />
        </label>
        <span class="muted" data-testid="upload-state">
          {phase === 'creating'
            ? 'Creating the recording…'
            : phase === 'uploading'
              ? `${Math.floor((sent / Math.max(total, 1)) * 100)}% of ${(total / 1e6).toFixed(1)} MB sent (resumes by itself after a network drop)`
              : phase === 'processing'
                ? `Sent; ${status || 'processing'}…`
                : phase === 'done'
                  ? 'Uploaded and ready.'
                  : 'The upload stopped.'}
        </span>
      </div>
    );
  return { send, busy, progress, error, setError, setPhase };
}

/** Creates a recording and uploads its file, with a progress bar; then follows the encode. */
function NewRecording() {
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [externalId, setExternalId] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const upload = useMediaUpload();

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!file) return upload.setError('Choose a file to upload.');
    upload.setPhase('creating');
    let recordingId: string;
    try {
      const recording = await unwrap(
        api.POST('/v3/rest/recordings', {
          body: {
            name: name || file.name,
            record: { externalId: externalId || `console-${crypto.randomUUID()}` },
            recordedAt: new Date().toISOString(),
          },
        }),
      );
      recordingId = recording.id;
    } catch (err) {
      upload.setPhase('failed');
      return upload.setError(describeError(err));
    }
    if (await upload.send(recordingId, file)) route(`/console/recordings/${recordingId}`);
  };
  return (
    <section aria-labelledby="new-recording">
      <h2 id="new-recording">Upload a recording</h2>
      <form onSubmit={(e) => void submit(e)} class="stack">
        <label>
          File (audio or video)
          <input type="file" accept="audio/*,video/*" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
        <label>
          Name
          <input value={name} maxLength={500} placeholder="the file's name" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          External id
          <input
            value={externalId}
            maxLength={512}
            placeholder="generated"
            onInput={(e) => setExternalId(e.currentTarget.value)}
            aria-describedby="external-help"
          />
        </label>
        <p class="help" id="external-help">
          Your system's id for it: creating a recording with an id that exists is refused.
        </p>
        {upload.progress}
        <ErrorNote error={upload.error} />
        <button type="submit" class="primary" disabled={upload.busy}>
          Upload
        </button>
      </form>
    </section>
  );
}

/** Starts the recorder bot on a meeting (user tokens only). */
function JoinMeeting() {
  const { route } = useLocation();
  const [joinUrl, setJoinUrl] = useState('');
  const [error, setError] = useState<string | null>(null);
  const join = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const { recordingId } = await unwrap(api.POST('/v3/rest/recordings/meeting-joins', { body: { type: 'meetingUrl', joinUrl } }));
      route(`/console/recordings/${recordingId}`);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="join-title">
      <h2 id="join-title">Record a meeting</h2>
      <form onSubmit={(e) => void join(e)} class="stack">
        <label>
          Meeting link (Zoom, Google Meet, Microsoft Teams, Webex)
          <input type="url" required value={joinUrl} onInput={(e) => setJoinUrl(e.currentTarget.value)} />
        </label>
        <ErrorNote error={error} />
        <button type="submit">Send the recorder</button>
      </form>
    </section>
  );
}

/** Recordings, newest first, filtered by when they were recorded; upload one; record a meeting. */
export function RecordingsPage() {
  const { query } = useLocation();
  const { page, go } = useListQuery('/console/recordings', { after: query.after, before: query.before });
  const recordingAllowed = useOrganization().data?.recordingAllowed;
  const list = useLoad(
    () =>
      unwrap(
        api.GET('/v3/rest/recordings', {
          params: { query: { page, limit: 25, recorded_at_gte: isoOf(query.after), recorded_at_lt: isoOf(query.before) } },
        }),
      ),
    [page, query.after, query.before],
  );
  return (
    <main id="main">
      <h1>Recordings</h1>
      <CreatedRange
        legend="Recorded between"
        fromLabel="Recorded from"
        toLabel="Recorded before"
        after={query.after}
        before={query.before}
        go={(range) => go({ ...range, page: '1' })}
      />
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Loading what="recordings" />}
      {list.data && list.data.recordings.length === 0 && (query.after || query.before) && <p>No recordings match.</p>}
      {list.data && list.data.recordings.length === 0 && !query.after && !query.before && (
        <p>
          No recordings yet.{' '}
          {recordingAllowed === false
            ? 'Create one with the API (POST /v3/rest/recordings, docs/guides/recordings.md).'
            : 'Upload a file or send the recorder to a meeting below, or create one with the API (POST /v3/rest/recordings, docs/guides/recordings.md).'}
        </p>
      )}
      {list.data && list.data.recordings.length > 0 && (
        <table>
          <caption class="visually-hidden">Recordings</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Recorded</th>
              <th scope="col">Made by</th>
              <th scope="col">Metadata</th>
            </tr>
          </thead>
          <tbody>
            {list.data.recordings.map((r) => (
              <tr key={r.id}>
                <td>
                  <a href={`/console/recordings/${r.id}`}>{r.display_name}</a>
                </td>
                <td>
                  <Time at={r.recorded_at} />
                </td>
                <td>{r.source}</td>
                <td>{r.metadata.map((m) => `${m.source.external_entity_name} ${m.record.external_id}`).join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && <Pager page={page} hasMore={list.data.has_more} go={(p) => go({ page: String(p) })} />}
      {recordingAllowed === false ? (
        <p data-testid="recording-off">
          Recording is turned off for your organization: uploads and meeting recordings are refused. Your Intake operator turns it on (
          <code>intake org update --org &lt;organizationId&gt; --recording on</code>).
        </p>
      ) : (
        <>
          <NewRecording />
          <JoinMeeting />
        </>
      )}
    </main>
  );
}
