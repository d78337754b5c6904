// Headless-browser test of the viewer: Debian's Chromium driven by playwright-core (which never
// downloads a browser here). Serves the built page and two trajectories written by
// check_trajectory from a localhost HTTP server, loads both runs, steps through every frame and
// checks that the page draws every body at the pose the file holds (to 1e-9), that the contact
// markers of each frame are the file's penetrating contacts, that overlay and side-by-side
// switch viewports, and that nothing is logged as an error.
//
//   node viewer-test.mjs --modules DIR/node_modules --viewer pegplus-viewer.html
//                        --traj-dir DIR [--chromium /usr/bin/chromium]
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

const POSE_TOL = 1e-9; // the page's pose against the file's doubles

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const modules = opt('--modules');
const viewerHtml = opt('--viewer');
const trajDir = opt('--traj-dir');
const chromium = opt('--chromium', '/usr/bin/chromium');
const RUNS = ['heap-standard.pptraj.gz', 'column-overlap-ode.pptraj'];

let failures = 0, passes = 0;
function check(cond, what) {
  if (cond) { ++passes; return; }
  ++failures;
  console.error(`FAIL: ${what}`);
}

// The test's own reader of the format (independent of the page's src/pptraj.js).
function readTrajectory(file) {
  let buf = readFileSync(file);
  if (buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
  if (buf.toString('latin1', 0, 8) !== 'PPTRAJ1\n') throw new Error(`${file}: bad magic`);
  const run = { header: null, bodies: [], frames: [] };
  let at = 8;
  while (at < buf.length) {
    const tag = buf.readUInt32LE(at), bytes = buf.readUInt32LE(at + 4);
    const p = buf.subarray(at + 8, at + 8 + bytes);
    if (p.length !== bytes) throw new Error(`${file}: truncated`);
    if (tag === 1) run.header = JSON.parse(p.toString('utf8'));
    else if (tag === 2) run.bodies.push(JSON.parse(p.toString('utf8')));
    else if (tag === 3) {
      const n = p.readUInt32LE(4);
      const f = { step: p.readUInt32LE(0), t: p.readDoubleLE(8), n, poses: [], contacts: [] };
      for (let b = 0; b < n; ++b) {
        const pose = [];
        for (let k = 0; k < 7; ++k) pose.push(p.readDoubleLE(16 + 56 * b + 8 * k));
        f.poses.push(pose);
      }
      let c = 16 + 56 * n;
      const m = p.readUInt32LE(c);
      c += 4;
      for (let k = 0; k < m; ++k, c += 40) f.contacts.push({ a: p.readInt32LE(c), b: p.readInt32LE(c + 4), depth: p.readDoubleLE(c + 8) });
      run.frames.push(f);
    }
    at += 8 + bytes;
  }
  return run;
}

function fail(msg) {
  console.error(`viewer test: ${msg}`);
  process.exit(1);
}

if (!modules || !viewerHtml || !trajDir) fail('usage: node viewer-test.mjs --modules DIR --viewer FILE --traj-dir DIR [--chromium PATH]');
if (!existsSync(chromium))
  fail(`no Chromium at ${chromium}: install Debian's chromium (sh cmake/install-deps.sh as root); the test never downloads a browser`);
const { chromium: pwChromium } = createRequire(path.join(modules, 'noop.js'))('playwright-core');

const files = RUNS.map((name) => path.join(trajDir, name));
for (const f of files) if (!existsSync(f)) fail(`missing ${f} (written by the check_trajectory test)`);
const expected = files.map(readTrajectory);

// A long run arriving slowly: the plain heap file, its first half sent at once and the rest
// only when the test releases it, so the page must play the frames it has before the end.
let release;
const released = new Promise((resolve) => { release = resolve; });
function serveSlowly(res) {
  const bytes = readFileSync(path.join(trajDir, 'heap-standard.pptraj'));
  res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
  const half = Math.floor(bytes.length / 2);
  res.write(bytes.subarray(0, half));
  released.then(() => res.end(bytes.subarray(half)));
}

// localhost server: the page and the trajectories
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  let file = null, type = 'application/octet-stream';
  if (url.pathname === '/slow/heap-standard.pptraj') { serveSlowly(res); return; }
  if (url.pathname === '/viewer.html') { file = viewerHtml; type = 'text/html; charset=utf-8'; }
  else if (url.pathname.startsWith('/traj/')) {
    const name = path.basename(url.pathname);
    if (RUNS.includes(name)) file = path.join(trajDir, name);
  }
  if (!file) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { 'Content-Type': type });
  res.end(readFileSync(file));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;

const profile = mkdtempSync(path.join(os.tmpdir(), 'pegplus-viewer-chromium-'));
const errors = [];
let browser;
try {
  browser = await pwChromium.launchPersistentContext(profile, {
    executablePath: chromium,
    headless: true,
    // the closed network needs the quiet flags; software WebGL (SwiftShader) needs the last two
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--enable-unsafe-swiftshader', '--use-angle=swiftshader'],
    viewport: { width: 1200, height: 700 },
  });
  const page = browser.pages()[0] || await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  const query = RUNS.map((r) => `traj=/traj/${r}`).join('&');
  await page.goto(`http://127.0.0.1:${port}/viewer.html?${query}`);
  await page.waitForFunction(() => window.pegplusViewer !== undefined, null, { timeout: 20000 });
  await page.evaluate(() => window.pegplusViewer.ready);

  // both runs loaded, with the file's bodies and frames
  for (let r = 0; r < RUNS.length; ++r) {
    const info = await page.evaluate((i) => window.pegplusViewer.runInfo(i), r);
    check(info.loaded && info.error === null, `run ${r} loaded without error (${info.error})`);
    check(info.frames === expected[r].frames.length, `run ${r}: ${info.frames} frames, file ${expected[r].frames.length}`);
    check(info.bodies === expected[r].bodies.length, `run ${r}: ${info.bodies} bodies, file ${expected[r].bodies.length}`);
    check(info.header.scene === expected[r].header.scene && info.header.model === expected[r].header.model,
      `run ${r}: header ${info.header.scene}/${info.header.model}`);
  }
  // the timeline: every run's frame times, merged
  const times = [...new Set(expected.flatMap((e) => e.frames.map((f) => f.t)))].sort((a, b) => a - b);
  const frameCount = await page.evaluate(() => window.pegplusViewer.frameCount());
  check(frameCount === times.length, `timeline has ${frameCount} frames, expected ${times.length}`);

  // every frame: each run shows its last frame at or before the time, every body at the file's pose
  let poseChecks = 0, worst = 0;
  for (let i = 0; i < times.length; ++i) {
    await page.evaluate((k) => window.pegplusViewer.setFrame(k), i);
    const state = await page.evaluate((n) => {
      const v = window.pegplusViewer;
      const out = [];
      for (let r = 0; r < n; ++r) {
        const info = v.runInfo(r);
        const poses = [];
        for (let b = 0; b < info.bodies; ++b) poses.push(v.bodyPose(r, b));
        out.push({ shown: v.shownFrame(r), poses, markers: v.contactMarkers(r) });
      }
      return out;
    }, RUNS.length);
    for (let r = 0; r < RUNS.length; ++r) {
      const frames = expected[r].frames;
      let f = 0;
      while (f + 1 < frames.length && frames[f + 1].t <= times[i]) ++f;
      check(state[r].shown && state[r].shown.index === f && state[r].shown.step === frames[f].step,
        `frame ${i}: run ${r} shows frame ${JSON.stringify(state[r].shown)}, expected ${f} (step ${frames[f].step})`);
      for (let b = 0; b < expected[r].bodies.length; ++b) {
        const pose = state[r].poses[b];
        if (b >= frames[f].n) { check(pose === null, `frame ${i}: run ${r} body ${b} not created yet but drawn`); continue; }
        let err = 0;
        for (let k = 0; k < 7; ++k) err = Math.max(err, Math.abs(pose[k] - frames[f].poses[b][k]));
        worst = Math.max(worst, err);
        ++poseChecks;
        check(err <= POSE_TOL, `frame ${i}: run ${r} body ${b} pose off by ${err}`);
      }
      check(state[r].markers === frames[f].contacts.length,
        `frame ${i}: run ${r} draws ${state[r].markers} contact markers, file has ${frames[f].contacts.length}`);
    }
  }
  console.log(`viewer test: ${times.length} frames x ${RUNS.length} runs, ${poseChecks} body poses within ${worst.toExponential(2)} of the file`);

  // the column built 1 cm into itself: frame 0 has penetrating contacts, all drawn
  await page.evaluate(() => window.pegplusViewer.setFrame(0));
  const known = expected[1].frames[0].contacts.length;
  const markers = await page.evaluate(() => window.pegplusViewer.contactMarkers(1));
  check(known > 0 && markers === known, `frame 0 of the overlap column: ${markers} markers for ${known} penetrating contacts`);
  console.log(`viewer test: overlap column frame 0: ${markers} contact markers (file: ${known} contacts, deepest ${Math.max(...expected[1].frames[0].contacts.map((c) => c.depth))} m)`);

  // step forward and back
  const fwd = await page.evaluate(() => window.pegplusViewer.stepForward());
  const back = await page.evaluate(() => window.pegplusViewer.stepBack());
  check(fwd === 1 && back === 0, `step forward/back went to ${fwd}/${back}, expected 1/0`);

  // side by side (a viewport per run) and overlaid (one)
  check(await page.evaluate(() => window.pegplusViewer.viewportCount()) === 2, 'two viewports side by side');
  check(await page.evaluate(() => window.pegplusViewer.setOverlay(true)) === 1, 'one viewport overlaid');
  check(await page.evaluate(() => window.pegplusViewer.trianglesDrawn()) > 0, 'the overlaid view draws triangles');
  check(await page.evaluate(() => window.pegplusViewer.setOverlay(false)) === 2, 'two viewports again');

  // selection: the body's name and pose
  await page.evaluate((k) => window.pegplusViewer.setFrame(k), times.length - 1);
  const text = await page.evaluate(() => window.pegplusViewer.selectBody(0));
  const last = expected[0].frames[expected[0].frames.length - 1];
  check(text.includes(expected[0].bodies[0].name) && text.includes(last.poses[0][0].toFixed(6)),
    `selection shows body 0's name and position: ${JSON.stringify(text)}`);

  // progressive loading: frames play while the rest of the file is still on its way
  const slowFrames = readTrajectory(path.join(trajDir, 'heap-standard.pptraj')).frames;
  await page.evaluate(() => { window.slowLoad = window.pegplusViewer.loadUrl('/slow/heap-standard.pptraj'); });
  await page.waitForFunction(() => window.pegplusViewer.runCount() === 3 && window.pegplusViewer.runInfo(2).frames > 0,
    null, { timeout: 20000 });
  const partial = await page.evaluate(() => window.pegplusViewer.runInfo(2));
  check(!partial.loaded && partial.frames > 0 && partial.frames < slowFrames.length,
    `half a file: ${partial.frames} of ${slowFrames.length} frames shown before the end (loaded: ${partial.loaded})`);
  const firstPose = await page.evaluate(() => { window.pegplusViewer.setFrame(0); return window.pegplusViewer.shownFrame(2); });
  check(firstPose && firstPose.step === 0, 'the partly loaded run shows its first frame');
  console.log(`viewer test: progressive load: ${partial.frames} of ${slowFrames.length} frames playable with half the file`);
  release();
  await page.evaluate(() => window.slowLoad);
  const full = await page.evaluate(() => window.pegplusViewer.runInfo(2));
  check(full.loaded && full.error === null && full.frames === slowFrames.length,
    `the slow run completes: ${full.frames} frames, error ${full.error}`);

  // offline from file://, a run picked with the file input (the gzip one): no request leaves
  // the page, the run loads whole
  const offline = await browser.newPage();
  offline.on('console', (m) => { if (m.type() === 'error') errors.push(`file:// console: ${m.text()}`); });
  offline.on('pageerror', (e) => errors.push(`file:// page error: ${e.message}`));
  const requests = [];
  offline.on('request', (r) => { if (!/^(file|data|blob):/.test(r.url())) requests.push(r.url()); });
  await offline.goto(`file://${path.resolve(viewerHtml)}`);
  await offline.waitForFunction(() => window.pegplusViewer !== undefined, null, { timeout: 20000 });
  await offline.setInputFiles('#files', files[0]);
  await offline.waitForFunction(() => window.pegplusViewer.runCount() === 1 && window.pegplusViewer.runInfo(0).loaded,
    null, { timeout: 20000 });
  const picked = await offline.evaluate(() => window.pegplusViewer.runInfo(0));
  check(picked.error === null && picked.frames === expected[0].frames.length,
    `file:// + file input: ${picked.frames} frames (file ${expected[0].frames.length}), error ${picked.error}`);
  const lastPose = await offline.evaluate((k) => { window.pegplusViewer.setFrame(k); return window.pegplusViewer.bodyPose(0, 0); },
    expected[0].frames.length - 1);
  const lastFile = expected[0].frames[expected[0].frames.length - 1].poses[0];
  check(lastPose && lastPose.every((x, k) => Math.abs(x - lastFile[k]) <= POSE_TOL), 'file:// run: last pose of body 0');
  check(requests.length === 0, `the offline page requested ${JSON.stringify(requests)}`);
  console.log(`viewer test: file:// with the file input: ${picked.frames} frames, ${requests.length} network requests`);
} catch (e) {
  errors.push(`test: ${e.stack || e}`);
} finally {
  if (browser) await browser.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
for (const e of errors) console.error(e);
failures += errors.length;
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
