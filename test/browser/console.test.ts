import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildConsole } from '../../console/build.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { assistantMessage, feedbackEvent, processingContext, userMessage, type ProcessingContext } from '../../harness/agents.js';
import { createSignInUser } from '../../harness/oauth-browser.js';
import { waitFor } from '../../harness/wait.js';
import { TestReceiver } from '../../harness/webhooks.js';
import { startWebhookWaker, type WebhookWaker } from '../../src/webhooks/waker.js';
import { testGateway } from '../helpers/webhooks.js';

/** Debian's chromium package (playwright-core cannot download browsers here); CHROMIUM_PATH overrides. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** UPDATE_SCREENSHOTS=1 writes the README's screenshots (docs/images/console); otherwise they go to a temporary folder. */
const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(PROJECT_ROOT, 'docs', 'images', 'console')
  : mkdtempSync(path.join(tmpdir(), 'intake-console-shots-'));

/**
 * The web console (issue 36) in a real browser, headless Chromium, against the API with a real
 * worker, Temporal and PostgreSQL: sign in through the authorization server, create an application
 * and a secret, send an ingest with the API, watch the session appear with its events and
 * watermark, change a setting; every page checked with axe-core (no serious or critical violation).
 * `npm run test:browser`.
 */
describe('the web console in a real browser (headless Chromium)', function () {
  this.timeout(180_000);
  let ctx: ProcessingContext & { taskQueue: string };
  let browser: Browser;
  let page: Page;
  let user: Awaited<ReturnType<typeof createSignInUser>>;
  let temporal: Awaited<ReturnType<typeof testGateway>>;
  /** What a production worker runs beside its workers: it wakes the webhook senders. */
  let waker: WebhookWaker;
  const errors: string[] = [];

  before(async () => {
    await buildConsole({ ifStale: true });
    ctx = await processingContext({ credits: 1000 });
    user = await createSignInUser(ctx.pool, ctx.org.organizationId, 'admin');
    temporal = await testGateway();
    waker = await startWebhookWaker({
      databaseUrl: ctx.databaseUrl,
      pool: ctx.pool,
      temporal: temporal.gateway,
      taskQueue: `${ctx.taskQueue}-webhooks`,
      sweepMs: 1000,
    });
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
  });
  after(async () => {
    await browser?.close();
    await waker?.close();
    await temporal?.close();
    await ctx?.close();
  });

  /** axe-core on the page as it is: no serious or critical violation of WCAG 2.1 A and AA. */
  async function accessible(what: string, on: Page = page): Promise<void> {
    const result = await new AxeBuilder({ page: on }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
      [],
      `${what}: axe found serious or critical violations`,
    );
    assert.ok(result.passes.length >= 5, `${what}: axe ran its checks (${result.passes.length} passed)`);
  }
  /** A media element's playback, read in the page (the page's CSP refuses evaluated strings; the test's types have no DOM). */
  function playback(selector: string): Promise<{ currentTime: number; readyState: number }> {
    return page.locator(selector).evaluate((el) => {
      const media = el as unknown as { currentTime: number; readyState: number };
      return { currentTime: media.currentTime, readyState: media.readyState };
    });
  }
  async function screenshot(name: string): Promise<void> {
    const file = path.join(SHOTS, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(statSync(file).size > 5_000, `${name}: a screenshot`);
  }

  const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name });
  let applicationId = '';
  let secret = '';

  it('signs in through the authorization server and lands on the sessions page', async () => {
    await page.goto(`${ctx.api.url}/console/`);
    await page.getByRole('heading', { name: 'Intake console' }).waitFor();
    await accessible('the sign-in page');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Sign in to Intake' }).waitFor();
    assert.match(await page.locator('main').innerText(), /Intake console/);
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/console/sessions');
    // Nothing sent yet: the page says how sessions come, not that none match.
    await page.getByText(/^No sessions yet\. A session appears when an agent sends its first events/).waitFor();
    await page.getByRole('link', { name: 'Agent applications' }).last().waitFor();
    await accessible('the empty sessions page');
  });

  it('creates an application and an ingest secret, shown once', async () => {
    await nav('Agent applications').click();
    await page.getByRole('heading', { name: 'Agent applications', level: 1 }).waitFor();
    await page.getByText('No applications yet').waitFor();
    await accessible('the applications page');
    await page.getByLabel('Name').fill('Support assistant');
    await page.getByLabel('Agent key').fill('support-assistant');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('heading', { name: 'Support assistant', level: 1 }).waitFor();
    applicationId = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByRole('button', { name: 'Create ingest secret' }).click();
    secret = await page.getByTestId('secret').innerText();
    assert.match(secret, /^iak_/);
    await accessible('the application page with a new secret');
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.getByTestId('secret').count(), 0, 'shown once: gone when dismissed');
    assert.equal(await page.getByRole('button', { name: /^Revoke / }).count(), 1);
  });

  it('shows a session sent with the API: its events in order, the gap, the feedback on its response, the watermark', async () => {
    const ingest = await fetch(`${ctx.api.url}/v3/rest/agent-conversations/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Service-Agent-Key': secret },
      body: JSON.stringify({
        agentKey: 'support-assistant',
        externalSessionId: 'conversation-42',
        status: 'open',
        participants: [{ externalId: 'u-1', displayName: 'Ada' }],
        events: [
          userMessage(1, 'How do I rotate an ingest secret?', { participantExternalId: 'u-1' }),
          assistantMessage(2, 'Create a new secret, deploy it, then revoke the old one.', {
            model: { provider: 'openai', name: 'gpt-4o' },
            usage: { inputTokens: 1812, outputTokens: 64, latencyMs: 930 },
          }),
          feedbackEvent(3, 'e2', 'positive', { feedback: { targetEventExternalId: 'e2', rating: 'positive', comment: 'Clear, thanks' } }),
          userMessage(5, 'And the old one stops at once?'),
        ],
      }),
    });
    assert.equal(ingest.status, 202, await ingest.clone().text());
    const { sessionId } = (await ingest.json()) as { sessionId: string };

    await nav('Sessions').click();
    await page.getByRole('link', { name: 'conversation-42' }).click();
    await page.getByRole('heading', { name: 'conversation-42', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/console/sessions/${sessionId}`);
    // Processed through 3, waiting for 4: the page updates itself until the watermark shows it.
    await page.getByTestId('watermark').filter({ hasText: '3 of 5' }).waitFor({ timeout: 60_000 });
    const items = await page.locator('.timeline > li').allInnerTexts();
    assert.equal(items.length, 5, JSON.stringify(items));
    assert.match(items[0]!, /^User[\s\S]*#1[\s\S]*How do I rotate an ingest secret\?/);
    assert.match(items[1]!, /^Assistant[\s\S]*#2[\s\S]*Create a new secret[\s\S]*positive[\s\S]*Clear, thanks[\s\S]*#3/);
    // The answer's model, tokens and latency; the session's totals (names, not ids: the application by its name).
    assert.equal(await page.getByTestId('answer-facts').innerText(), 'openai/gpt-4o · 1,812 in / 64 out tokens · 930 ms');
    assert.equal(await page.getByTestId('answers').innerText(), '1');
    assert.equal(await page.getByTestId('tokens').innerText(), '1,812 in / 64 out');
    assert.equal(await page.getByTestId('latency').innerText(), '930 ms');
    await page.locator('.facts').getByRole('link', { name: 'Support assistant' }).waitFor();
    assert.doesNotMatch(await page.locator('main').innerText(), new RegExp(applicationId), 'no application id shown');
    assert.match(items[2]!, /^Processed through sequence 3/);
    assert.match(items[3]!, /Sequence 4 not received yet/);
    assert.match(items[4]!, /^User[\s\S]*#5[\s\S]*And the old one stops at once\?/);
    assert.match(await page.locator('main').innerText(), /Ada/);
    // One finalized response processed: one metered unit.
    await page
      .getByTestId('units')
      .filter({ hasText: /^1 agent response processed$/ })
      .waitFor();
    await screenshot('session');
    await accessible('the session page');

    await nav('Sessions').click();
    await page.getByRole('link', { name: 'conversation-42' }).waitFor();
    await page
      .getByRole('row', { name: /conversation-42/ })
      .getByRole('cell', { name: 'Support assistant' })
      .waitFor();
    assert.deepEqual(await page.getByLabel('Processing').locator('option').allInnerTexts(), [
      'All',
      'pending',
      'processing',
      'completed',
      'billing blocked',
      'capture disabled',
    ]);
    // Event 5 waits behind the missing 4: pending, not completed.
    await page.getByLabel('Processing').selectOption('completed');
    await page.getByText('No sessions match these filters.').waitFor();
    await page.getByLabel('Processing').selectOption('');
    await page.getByRole('link', { name: 'conversation-42' }).waitFor();
    // When it started: a range that holds today, then one that ends before it (kept in the URL; Back works).
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Started from').fill(`${day(-1)}T00:00`);
    await page.getByLabel('Started before').fill(`${day(1)}T00:00`);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/after=.*&before=/);
    await page.getByRole('link', { name: 'conversation-42' }).waitFor();
    await page.getByLabel('Started before').fill(`${day(-1)}T12:00`);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No sessions match these filters.').waitFor();
    await page.getByLabel('Started from').fill(`${day(1)}T00:00`);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('“Started before” must be later than “Started from”.').waitFor();
    await accessible('the sessions page with a date range');
    await page.getByRole('button', { name: 'Any time' }).click();
    await page.getByRole('link', { name: 'conversation-42' }).waitFor();
    assert.equal(new URL(page.url()).search, '');
    await screenshot('sessions');
  });

  it('lists signals with filters, usage per day as a chart, and the credit balance with its ledger', async () => {
    await nav('Signals').click();
    await page.getByRole('heading', { name: 'Signals', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'feedback' }).first().waitFor();
    await page.getByLabel('Rating').selectOption('negative');
    await page.getByText('No signals match.').waitFor();
    assert.match(page.url(), /\?rating=negative$/);
    await page.getByLabel('Rating').selectOption('positive');
    await page.getByRole('cell', { name: 'Clear, thanks' }).waitFor();
    await page
      .getByRole('row', { name: /Clear, thanks/ })
      .getByRole('cell', { name: 'Support assistant' })
      .waitFor();
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Found before').fill(`${day(-1)}T00:00`);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No signals match.').waitFor();
    assert.match(page.url(), /\?rating=positive&before=/);
    await page.getByLabel('Found from').fill(`${day(-1)}T00:00`);
    await page.getByLabel('Found before').fill(`${day(1)}T00:00`);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('cell', { name: 'Clear, thanks' }).waitFor();
    await accessible('the signals page');

    await nav('Usage and credits').click();
    await page.getByRole('heading', { name: 'Usage and credits', level: 1 }).waitFor();
    await page.getByTestId('usage-total').filter({ hasText: /^1$/ }).waitFor();
    const chart = await page.getByRole('img', { name: /^Units per day from / }).getAttribute('aria-label');
    assert.match(chart!, /: 1 in total, at most 1 a day$/);
    // 1,000 credits, one analysis spent (its cost a line of the ledger).
    const balance = Number(await page.getByTestId('balance').innerText());
    assert.ok(balance < 1000, `balance ${balance}`);
    await page.getByRole('cell', { name: '+1000' }).waitFor();
    await screenshot('usage');
    await accessible('the usage page');
  });

  it('uploads a file with a progress bar that resumes after a network drop, and plays it with the transcript following', async () => {
    // A recording made with the API, with its authoritative transcript and no media yet.
    const created = await ctx.api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}` },
      json: {
        name: 'Sense and Sensibility, chapter 1',
        record: { externalId: 'librivox-0870' },
        recordedAt: '2026-11-20T09:00:00Z',
        transcript: {
          utterances: [
            { startSec: 0, endSec: 3, speaker: 0, text: 'The family of Dashwood had long been settled in Sussex.' },
            { startSec: 3, endSec: 7.5, speaker: 1, text: 'Their estate was large, and their residence was at Norland Park.' },
          ],
        },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const recordingId = created.body.id as string;

    await nav('Recordings').click();
    await page.getByRole('heading', { name: 'Recordings', level: 1 }).waitFor();
    await accessible('the recordings page');
    await page.getByLabel('Recorded from').fill('2026-11-19T00:00');
    await page.getByLabel('Recorded before').fill('2026-11-21T00:00');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('link', { name: 'Sense and Sensibility, chapter 1' }).click();
    await page.getByRole('heading', { name: 'Sense and Sensibility, chapter 1', level: 1 }).waitFor();
    assert.equal(await page.getByTestId('asset-status').innerText(), 'waiting');

    // The network drops during the first transfer: tus asks where it stopped and sends the rest.
    let patches = 0;
    await page.route('**/v3/uploads/**', async (route) => {
      if (route.request().method() === 'PATCH' && ++patches === 1) return route.abort('connectionreset');
      return route.continue();
    });
    await page
      .getByLabel('File (audio or video)')
      .setInputFiles(path.join(PROJECT_ROOT, 'samples', 'librivox-sense-and-sensibility-0870.flac'));
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page
      .getByTestId('asset-status')
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 90_000 });
    await page.unroute('**/v3/uploads/**');
    assert.ok(patches >= 2, `the transfer resumed after the drop (${patches} PATCH requests)`);

    const ranges: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/v3/media/playback/')) ranges.push(r.headers().range ?? '(none)');
    });
    const audio = page.locator('audio.player');
    assert.match((await audio.getAttribute('src'))!, new RegExp(`/v3/media/playback/${recordingId}/.+\\?expires=\\d+&signature=`));
    // It plays: the browser reads the media (byte ranges of the signed URL) and time moves.
    await audio.evaluate((el) => {
      const media = el as unknown as { muted: boolean; play(): Promise<void> };
      media.muted = true;
      return media.play();
    });
    assert.ok(await waitFor(async () => (await playback('audio.player')).currentTime > 0.3, 30_000, 100), 'the audio plays');
    // Played from 4 s: the second utterance is the one highlighted.
    await page.getByRole('button', { name: 'Play from 0:03' }).click();
    assert.ok(await waitFor(async () => (await playback('audio.player')).currentTime > 3.2, 30_000, 100), 'it plays from 0:03');
    assert.match(await page.locator('.transcript li[aria-current="true"]').innerText(), /Norland Park/);
    await page.getByLabel('Monologues').check();
    await page.locator('.transcript li').first().waitFor();
    await screenshot('recording');
    await accessible('the recording page');
    assert.ok(ranges.length > 0 && ranges.every((r) => /^bytes=\d+-/.test(r)), `the player asked for byte ranges: ${ranges.join(', ')}`);

    // Deleted from its page, after a confirmation saying what goes.
    await page.getByRole('button', { name: 'Delete recording' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Sense and Sensibility, chapter 1?' });
    assert.match(await dialog.innerText(), /media files are removed from storage/);
    await dialog.getByRole('button', { name: 'Delete recording' }).click();
    await page.getByRole('heading', { name: 'Recordings', level: 1 }).waitFor();
    const gone = await ctx.api.request(`/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': ctx.org.apiKey } });
    assert.equal(gone.status, 404);
  });

  it('starts a meeting join and follows the recorder bot until its media plays', async () => {
    await nav('Recordings').click();
    await page.getByLabel('Meeting link (Zoom, Google Meet, Microsoft Teams, Webex)').fill('https://zoom.us/j/84211234567');
    await page.getByRole('button', { name: 'Send the recorder' }).click();
    await page.getByTestId('bot').waitFor();
    assert.match(await page.getByTestId('bot').innerText(), /^zoom: /);
    await page
      .getByTestId('bot')
      .filter({ hasText: /^zoom: done since/ })
      .waitFor({ timeout: 90_000 });
    await page
      .getByTestId('asset-status')
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 90_000 });
    const player = page.locator('.player');
    assert.match((await player.getAttribute('src'))!, /\/v3\/media\/playback\//);
    assert.ok(await waitFor(async () => (await playback('.player')).readyState >= 1, 30_000, 100), 'the media loads');
    // No transcriber here (TRANSCRIBER=none): the page says none will come and what to do, not "not yet".
    await page
      .getByTestId('no-transcript')
      .filter({ hasText: /^No transcriber is configured, so this recording has no transcript and none will come/ })
      .waitFor({ timeout: 30_000 });
    await accessible('a meeting recording');
  });

  it('webhooks: an endpoint with its secret shown once, a test event delivered with its attempt, redelivered, the secret rotated', async () => {
    const receiver = new TestReceiver();
    const url = await receiver.listen();
    try {
      await nav('Webhooks').click();
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      await page.getByText(/^No endpoints yet: nothing is sent until you create one/).waitFor();
      assert.match(
        await page.getByTestId('webhooks-lead').innerText(),
        /retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts over about 27 hours\. An endpoint without a successful attempt for 5 days is disabled\./,
      );
      await accessible('the webhooks page');
      await page.getByLabel('URL').fill(url);
      await page.getByLabel('Description').fill('Our CRM');
      await page.getByLabel('These types').check();
      await page.getByRole('checkbox', { name: /recording\.media_failed/ }).uncheck();
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      receiver.secrets = [await page.getByTestId('secret').innerText()];
      assert.match(receiver.secrets[0]!, /^whsec_/);
      await page.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('heading', { name: url, level: 1 }).waitFor();
      assert.equal(await page.getByRole('checkbox', { name: /recording\.media_failed/ }).isChecked(), false);

      await page.getByRole('button', { name: 'Send a test event' }).click();
      await page.getByRole('cell', { name: 'webhook.test', exact: true }).waitFor();
      await page
        .getByRole('row', { name: /webhook\.test/ })
        .getByText('succeeded')
        .waitFor({ timeout: 30_000 });
      assert.deepEqual(receiver.received.at(-1)?.verifiedWith, [0], 'signed with the secret shown');
      await page.getByRole('button', { name: /^Attempts of webhook\.test/ }).click();
      await page
        .getByRole('table', { name: /^Attempts of msg_/ })
        .getByRole('cell', { name: '200', exact: true })
        .waitFor();
      await accessible('an endpoint with its deliveries');
      await screenshot('webhook');
      await page.getByRole('button', { name: 'Redeliver' }).click();
      assert.ok(await waitFor(async () => receiver.received.length >= 2, 30_000, 100), 'redelivered');

      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
      const rotated = await page.getByTestId('secret').innerText();
      assert.notEqual(rotated, receiver.secrets[0]);
      await page.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('button', { name: 'Disable' }).click();
      await page
        .getByTestId('endpoint-state')
        .filter({ hasText: /^Disabled/ })
        .waitFor();
    } finally {
      await receiver.close();
    }
  });

  it('keys and access: an API key with chosen scopes shown once and revoked; the users; the console among your connected applications', async () => {
    await nav('Keys and access').click();
    await page.getByRole('heading', { name: 'Keys and access', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('textbox', { name: 'Name' }).fill('Nightly export');
    await page.getByRole('checkbox', { name: /feedback:write/ }).uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByTestId('secret').innerText();
    const used = await fetch(`${ctx.api.url}/v3/rest/organization`, { headers: { 'X-Service-Api-Key': key } });
    assert.equal(used.status, 200, 'the key shown works');
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /Nightly export/ });
    assert.doesNotMatch(await row.innerText(), /feedback:write/);
    assert.match(await row.innerText(), /feedback:read/);
    await page.getByRole('cell', { name: user.email }).waitFor();
    await page.getByRole('row', { name: /Intake console/ }).waitFor();
    await accessible('the keys and access page');
    await page.getByRole('button', { name: 'Revoke Nightly export' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();
    const refused = await fetch(`${ctx.api.url}/v3/rest/organization`, { headers: { 'X-Service-Api-Key': key } });
    assert.equal(refused.status, 401);
  });

  it('privacy: erasing a person lists what will be removed before the confirmation; the export downloads; a session is deleted', async () => {
    const email = 'grace.erase@example.com';
    const put = await fetch(`${ctx.api.url}/v3/rest/people`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'X-Service-Api-Key': ctx.org.apiKey },
      body: JSON.stringify({ email, first_name: 'Grace', last_name: 'Erase' }),
    });
    assert.equal(put.status < 300, true, await put.clone().text());
    const recording = await ctx.api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': ctx.org.apiKey },
      json: {
        name: 'Call with Grace',
        record: { externalId: 'grace-call' },
        participants: [{ speaker: 0, person: { type: 'upsert', email } }],
        transcript: { utterances: [{ startSec: 0, endSec: 2, speaker: 0, text: `Write to ${email}.` }] },
      },
    });
    assert.equal(recording.status, 201, JSON.stringify(recording.body));

    await nav('Privacy').click();
    await page.getByRole('heading', { name: 'Privacy', level: 1 }).waitFor();
    await page.getByLabel('Their e-mail address').fill(email.toUpperCase());
    await page.getByRole('button', { name: 'Show what would be erased' }).click();
    const preview = page.getByTestId('erasure-preview');
    await preview.waitFor();
    assert.match(await preview.innerText(), /Grace Erase[\s\S]*Transcript lines naming them\s+1/);
    await accessible('the erasure preview');
    await page.getByRole('button', { name: `Erase ${email}` }).click();
    const dialog = page.getByRole('dialog', { name: `Erase ${email}?` });
    assert.match(await dialog.innerText(), /What will be erased[\s\S]*Transcript lines naming them\s+1/);
    await screenshot('erase-confirm');
    await dialog.getByRole('button', { name: 'Erase permanently' }).click();
    await page
      .getByTestId('erasure')
      .getByText(/^Erased; finished/)
      .waitFor({ timeout: 60_000 });
    const transcript = await ctx.api.request(`/v3/rest/recordings/${recording.body.id as string}/transcript`, {
      headers: { 'X-Service-Api-Key': ctx.org.apiKey },
    });
    assert.doesNotMatch(JSON.stringify(transcript.body), /grace\.erase/i, 'erased from the transcript');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download the export' }).click();
    const file = await (await download).path();
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal((JSON.parse(lines[0]!) as { type: string }).type, 'export');
    assert.equal((JSON.parse(lines.at(-1)!) as { type: string }).type, 'end');
    assert.ok(
      lines.some((l) => l.includes('conversation-42')),
      'the session is in the export',
    );

    await nav('Sessions').click();
    await page.getByRole('link', { name: 'conversation-42' }).click();
    await page.getByRole('button', { name: 'Delete session' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete conversation-42?' });
    assert.match(await confirm.innerText(), /4 events, their revisions, its participants, signals and analyses are permanently deleted/);
    await confirm.getByRole('button', { name: 'Delete session' }).click();
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    await page.getByText(/^No sessions yet/).waitFor();
  });

  it('a member sees no admin page: none in the navigation, and an admin page opened by its URL says plainly it is for admins', async () => {
    const member = await createSignInUser(ctx.pool, ctx.org.organizationId);
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const as = await context.newPage();
    as.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    as.on('pageerror', (e) => errors.push(e.message));
    // Nothing the member may not do is even asked: no 403 from the API on any page.
    const refused: string[] = [];
    as.on('response', (r) => {
      if (r.status() === 403) refused.push(`${r.request().method()} ${new URL(r.url()).pathname}`);
    });
    try {
      await as.goto(`${ctx.api.url}/console/`);
      await as.getByRole('button', { name: 'Sign in' }).click();
      await as.getByLabel('E-mail').fill(member.email);
      await as.getByLabel('Password').fill(member.password);
      await as.getByRole('button', { name: 'Sign in', exact: true }).click();
      await as.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
      await as
        .locator('header .org')
        .filter({ hasText: /· member$/ })
        .waitFor();
      assert.deepEqual(await as.getByRole('navigation', { name: 'Console' }).getByRole('link').allInnerTexts(), [
        'Sessions',
        'Signals',
        'Recordings',
        'Usage and credits',
        'Connected applications',
      ]);
      await as.getByText(/an admin of your organization creates the application and its secret\.$/).waitFor();
      await accessible("a member's sessions page", as);

      for (const [path, title] of [
        ['/console/applications', 'Agent applications'],
        [`/console/applications/${applicationId}`, 'Agent applications'],
        ['/console/webhooks', 'Webhooks'],
        ['/console/webhooks/00000000-0000-4000-8000-000000000000', 'Webhooks'],
        ['/console/privacy', 'Privacy'],
      ] as const) {
        await as.goto(`${ctx.api.url}${path}`);
        await as.getByRole('heading', { name: title, level: 1 }).waitFor();
        const said = as.getByTestId('admins-only');
        await said.waitFor();
        assert.match(await said.innerText(), /^This page is for admins of Org \d+\. You are signed in as a member/, path);
        assert.doesNotMatch(await as.locator('main').innerText(), /insufficient_scope|\[|scope/, `${path}: no error code`);
        assert.equal(await as.locator('main').locator('form, input, select, textarea, button').count(), 0, `${path}: no form`);
        assert.equal(await as.getByRole('alert').count(), 0, `${path}: no error`);
      }
      await accessible('an admin page opened by a member', as);

      // Keys and access: their own connected applications only (the console among them).
      await as.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Connected applications' }).click();
      await as.getByRole('heading', { name: 'Connected applications', level: 1 }).waitFor();
      await as.getByRole('row', { name: /Intake console/ }).waitFor();
      assert.equal(await as.getByRole('heading', { name: 'API keys' }).count(), 0);
      assert.equal(await as.getByRole('heading', { name: 'Users' }).count(), 0);
      await accessible("a member's connected applications", as);
      // Usage and credits: the balance, not the ledger.
      await as.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Usage and credits' }).click();
      await as.getByTestId('balance').waitFor();
      assert.equal(await as.getByRole('heading', { name: 'Ledger' }).count(), 0);
      await as.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Signals' }).click();
      await as.getByRole('heading', { name: 'Signals', level: 1 }).waitFor();
      await as.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Recordings' }).click();
      await as.getByRole('heading', { name: 'Recordings', level: 1 }).waitFor();
      assert.deepEqual(refused, [], 'no request refused with 403');
    } finally {
      await context.close();
    }
  });

  it('changes a setting: turning content capture off asks first, says what it deletes, then saves', async () => {
    await page.goto(`${ctx.api.url}/console/applications/${applicationId}`);
    await page.getByRole('heading', { name: 'Support assistant', level: 1 }).waitFor();
    await page.getByLabel('Content capture').uncheck();
    await page.getByLabel('Retention (days)').fill('30');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save these settings?' });
    await dialog.waitFor();
    const said = await dialog.innerText();
    assert.match(said, /stored content, participants, jobs and signals are permanently deleted/);
    assert.match(said, /Retention of 30 days: conversations older than that are permanently deleted/);
    await screenshot('application-confirm');
    await accessible('the confirmation');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    const unchanged = await ctx.api.request(`/v3/rest/agent-applications/${applicationId}`, {
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    assert.equal(unchanged.body.contentCapture, true, 'cancelled: nothing sent');

    await page.getByRole('button', { name: 'Save settings' }).click();
    await dialog.getByRole('button', { name: 'Save and apply' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const changed = await ctx.api.request(`/v3/rest/agent-applications/${applicationId}`, {
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    assert.equal(changed.body.contentCapture, false);
    assert.equal(changed.body.retentionDays, 30);

    // The ingest secret revoked: the agent sending it is refused.
    await page.getByRole('button', { name: /^Revoke iak_/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke secret' }).click();
    await page.getByRole('cell', { name: /^revoked/ }).waitFor();
    const refused = await fetch(`${ctx.api.url}/v3/rest/agent-conversations/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Service-Agent-Key': secret },
      body: JSON.stringify({
        agentKey: 'support-assistant',
        externalSessionId: 'after-revoke',
        status: 'open',
        participants: [],
        events: [],
      }),
    });
    assert.equal(refused.status, 401);
    assert.deepEqual(errors, [], 'no console error: nothing the CSP blocked, no failed script');
  });
});
