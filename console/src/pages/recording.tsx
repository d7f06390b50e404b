import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, describeError, unwrap, type Schemas } from '../api';
import { ErrorNote, Loading, Time, useConfirm, useLoad, usePolling } from '../ui';
import { useMediaUpload } from './recordings';

type Entry = Schemas['TranscriptEntry'];
const clock = (sec: number) => `${Math.floor(sec / 60)}:${String(Math.floor(sec % 60)).padStart(2, '0')}`;

/** The entry playing at `time`: the last one that started at or before it and has not ended. */
export function playingIndex(entries: readonly Entry[], time: number): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.startSec <= time) return time < e.endSec ? i : -1;
  }
  return -1;
}

type TranscriptState = Schemas['Recording']['transcript']['status'];

/** Why a recording has no transcript lines, and what to do: said for each state, never "not yet" when nothing will come. */
function NoTranscript({ status, mediaWaiting }: { status: TranscriptState; mediaWaiting: boolean }) {
  const send = (
    <>
      send the transcript with the API when you create a recording (<code>transcript.utterances</code> in{' '}
      <code>POST /v3/rest/recordings</code>)
    </>
  );
  if (status === 'unavailable')
    return (
      <p data-testid="no-transcript">
        No transcriber is configured, so this recording has no transcript and none will come. To have transcripts, {send}, or have your
        Intake operator configure a transcriber (<code>TRANSCRIBER</code>; see docs/guides/recordings.md).
      </p>
    );
  if (status === 'processing') return <p data-testid="no-transcript">Transcribing; this page updates itself.</p>;
  if (status === 'failed') return <p data-testid="no-transcript">Transcription failed. The recording has no transcript; {send}.</p>;
  if (status === 'completed') return <p data-testid="no-transcript">The transcript is empty: nothing was said, or nothing recognised.</p>;
  return (
    <p data-testid="no-transcript">
      No transcript yet. {mediaWaiting ? 'It is made from the media once it is uploaded and processed' : 'It is made from the media'} when a
      transcriber is configured (<code>TRANSCRIBER</code>); without one, {send}.
    </p>
  );
}

/** The transcript as utterances or monologues, the one playing highlighted; a click plays from there. */
function Transcript({
  recordingId,
  status,
  mediaWaiting,
  time,
  seek,
}: {
  recordingId: string;
  status: TranscriptState;
  mediaWaiting: boolean;
  time: number;
  seek: (sec: number) => void;
}) {
  const [type, setType] = useState<'utterance' | 'monologue'>('utterance');
  const transcript = useLoad(
    () => unwrap(api.GET('/v3/rest/recordings/{recordingId}/transcript', { params: { path: { recordingId }, query: { type } } })),
    [recordingId, type, status],
  );
  const entries = (type === 'utterance' ? transcript.data?.utterances : transcript.data?.monologues) ?? [];
  const playing = playingIndex(entries, time);
  return (
    <section aria-labelledby="transcript-title">
      <h2 id="transcript-title">Transcript</h2>
      <fieldset>
        <legend>Show as</legend>
        <label class="inline">
          <input type="radio" name="transcript-type" checked={type === 'utterance'} onChange={() => setType('utterance')} /> Utterances
        </label>
        <label class="inline">
          <input type="radio" name="transcript-type" checked={type === 'monologue'} onChange={() => setType('monologue')} /> Monologues
        </label>
      </fieldset>
      <ErrorNote error={transcript.error} />
      {transcript.data && entries.length === 0 && <NoTranscript status={status} mediaWaiting={mediaWaiting} />}
      <ol class="transcript">
        {entries.map((e, i) => (
          <li key={`${e.startSec}-${i}`} class={i === playing ? 'playing' : undefined} aria-current={i === playing ? 'true' : undefined}>
            <button type="button" class="link" onClick={() => seek(e.startSec)} aria-label={`Play from ${clock(e.startSec)}`}>
              {clock(e.startSec)}
            </button>{' '}
            <strong>Speaker {e.speaker}</strong> {e.text}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** Media for a recording that has none yet (created with the API, say): a file uploaded here. */
function UploadMedia({ recordingId, onReady }: { recordingId: string; onReady: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const upload = useMediaUpload();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (file && (await upload.send(recordingId, file))) onReady();
  };
  return (
    <section aria-labelledby="upload-title">
      <h2 id="upload-title">Upload its media</h2>
      <form onSubmit={(e) => void submit(e)} class="stack">
        <label>
          File (audio or video)
          <input type="file" accept="audio/*,video/*" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
        {upload.progress}
        <ErrorNote error={upload.error} />
        <button type="submit" class="primary" disabled={upload.busy}>
          Upload
        </button>
      </form>
    </section>
  );
}

export function RecordingPage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.recordingId ?? '';
  const rec = useLoad(() => unwrap(api.GET('/v3/rest/recordings/{recordingId}', { params: { path: { recordingId: id } } })), [id]);
  const join = useLoad(async () => {
    const res = await api.GET('/v3/rest/recordings/{recordingId}/meeting-join', { params: { path: { recordingId: id } } });
    return res.response.status === 404 ? null : unwrap(Promise.resolve(res));
  }, [id]);
  const media = useRef<HTMLMediaElement>(null);
  const [time, setTime] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const { ask, dialog } = useConfirm();
  const r = rec.data;
  // Waiting for media is not moving: an upload from this page reloads when it is done (polling would take its form away mid-upload).
  const moving = !!r && ['queued', 'uploading', 'processing'].includes(r.asset.status);
  // A meeting's media comes when its bot is done: the recording is followed meanwhile too.
  const botActive = !!join.data && !['done', 'failed'].includes(join.data.botState);
  // The transcript comes after the media (or is said to be unavailable): followed until it settles.
  const transcribing = r?.transcript.status === 'processing' || (r?.asset.status === 'completed' && r.transcript.status === 'waiting');
  usePolling(rec.reload, 3000, moving || (!!join.data && r?.asset.status === 'waiting') || transcribing);
  usePolling(join.reload, 3000, botActive);
  // The signed URL changes with each read: keep the element's source while it plays.
  const [kept, setKept] = useState<{ id: string; url: string } | null>(null);
  const src = kept?.id === id ? kept.url : null;
  useEffect(() => {
    if (r?.asset.url && r.id === id && !src) setKept({ id, url: r.asset.url });
  }, [r?.asset.url, id]);

  if (!r)
    return (
      <main id="main">
        <h1>Recording</h1>
        <ErrorNote error={rec.error} />
        {!rec.error && <Loading what="the recording" />}
      </main>
    );

  const remove = async () => {
    const ok = await ask({
      title: `Delete ${r.name}?`,
      body: (
        <ul>
          <li>The recording, its transcript, participants' links and metadata are permanently deleted.</li>
          <li>Its media files are removed from storage, and a recorder bot still in the meeting is stopped.</li>
        </ul>
      ),
      action: 'Delete recording',
    });
    if (!ok) return;
    try {
      await unwrap(api.DELETE('/v3/rest/recordings/{recordingId}', { params: { path: { recordingId: id } } }));
      route('/console/recordings');
    } catch (err) {
      setError(describeError(err));
    }
  };
  const isVideo = !!src && /\.mp4(\?|$)/.test(new URL(src, location.href).pathname);
  const seek = (sec: number) => {
    if (!media.current) return;
    media.current.currentTime = sec;
    void media.current.play().catch(() => undefined);
  };
  return (
    <main id="main">
      <p>
        <a href="/console/recordings">Recordings</a> /
      </p>
      <h1>{r.name}</h1>
      <dl class="facts">
        <dt>Recorded</dt>
        <dd>
          <Time at={r.recordedAt} />
        </dd>
        <dt>Media</dt>
        <dd data-testid="asset-status">
          {r.asset.status}
          {r.asset.errorCode && ` (${r.asset.errorCode})`}
          {r.assetRetry && ` · retrying (attempt ${r.assetRetry.attempt}): ${r.assetRetry.message}`}
        </dd>
        <dt>Transcript</dt>
        <dd>
          {r.transcript.status}
          {r.transcript.source && ` (${r.transcript.source === 'api' ? 'sent with the API' : 'automatic'})`}
        </dd>
        {join.data && (
          <>
            <dt>Recorder bot</dt>
            <dd data-testid="bot">
              {join.data.platform.replace('_', ' ')}: {join.data.botState.replace('_', ' ')} since <Time at={join.data.botStateSince} />
              {join.data.reason && ` (${join.data.reason})`}
            </dd>
          </>
        )}
      </dl>
      {src &&
        (isVideo ? (
          <video
            ref={media as { current: HTMLVideoElement | null }}
            src={src}
            controls
            preload="metadata"
            onTimeUpdate={(e) => setTime(e.currentTarget.currentTime)}
            class="player"
          >
            <track kind="captions" />
          </video>
        ) : (
          <audio
            ref={media}
            src={src}
            controls
            preload="metadata"
            onTimeUpdate={(e) => setTime(e.currentTarget.currentTime)}
            class="player"
          />
        ))}
      {moving && (
        <p class="muted" aria-live="polite">
          The media is being prepared; this page updates itself.
        </p>
      )}
      {['waiting', 'failed', 'cancelled'].includes(r.asset.status) && !join.data && <UploadMedia recordingId={id} onReady={rec.reload} />}
      <Transcript recordingId={id} status={r.transcript.status} mediaWaiting={r.asset.status === 'waiting'} time={time} seek={seek} />
      <section aria-labelledby="participants-title">
        <h2 id="participants-title">Participants</h2>
        {r.participants.length === 0 ? (
          <p class="muted">None named.</p>
        ) : (
          <ul>
            {r.participants.map((p) => (
              <li key={p.speaker}>
                Speaker {p.speaker}: {[p.person.firstName, p.person.lastName].filter(Boolean).join(' ') || p.person.email} ({p.person.email}
                )
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="metadata-title">
        <h2 id="metadata-title">Metadata</h2>
        {r.record ? (
          <dl class="facts">
            <dt>Source</dt>
            <dd>
              {r.record.source.externalEntityName} ({r.record.source.type})
            </dd>
            <dt>External id</dt>
            <dd>
              <code>{r.record.externalId}</code>
            </dd>
            {r.record.values.map((v) => (
              <>
                <dt key={`n${v.fieldId}`}>{v.name}</dt>
                <dd key={`v${v.fieldId}`}>{typeof v.value === 'string' ? v.value : JSON.stringify(v.value)}</dd>
              </>
            ))}
          </dl>
        ) : (
          <p class="muted">No metadata record.</p>
        )}
      </section>
      <section aria-labelledby="delete-title" class="danger-zone">
        <h2 id="delete-title">Delete the recording</h2>
        <ErrorNote error={error} />
        <button type="button" class="danger" onClick={() => void remove()}>
          Delete recording
        </button>
      </section>
      {dialog}
    </main>
  );
}
