// pegplus trajectory viewer: plays .pptraj runs (docs/trajectory.md) side by side or overlaid.
// ODE's frame is kept as is: z up, quaternions (w, x, y, z) as written.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { PptrajParser, readStream } from './pptraj.js';

const RUN_TINTS = [0x6fa8dc, 0xe69138, 0x93c47d, 0xc27ba0, 0xffd966, 0x76a5af];
const MARKER_RADIUS = 0.03; // m, the contact markers' size
const DEPTH_LOG_MIN = -6, DEPTH_LOG_MAX = -2; // colour scale of contact depth, log10 m
const PLANE_SIZE = 40; // m, how much of an infinite plane is drawn

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------------------------------
// Runs
// ------------------------------------------------------------------------------------------
const runs = [];
let timeline = [];     // sorted distinct frame times of every run
let current = 0;       // index into timeline
let playing = false;
let playTime = 0;      // s of simulated time while playing
let overlay = false;
let selected = -1;     // selected body index (in every run)
let needsRender = true;

function colourForDepth(depth) {
  const x = (Math.log10(Math.max(depth, 1e-300)) - DEPTH_LOG_MIN) / (DEPTH_LOG_MAX - DEPTH_LOG_MIN);
  const hue = (1 - Math.min(1, Math.max(0, x))) * 240; // blue (shallow) .. red (deep)
  return new THREE.Color().setHSL(hue / 360, 0.9, 0.5);
}

function odeQuaternion(q) { // [w, x, y, z] -> three.js (x, y, z, w)
  return new THREE.Quaternion(q[1], q[2], q[3], q[0]);
}

// A geom's mesh from its JSON (docs/trajectory.md); three.js's cylinders and capsules run along
// y, ODE's along z.
function geomMesh(g, material) {
  let geometry;
  let along = false;
  switch (g.class) {
    case 'box': geometry = new THREE.BoxGeometry(g.lengths[0], g.lengths[1], g.lengths[2]); break;
    case 'sphere': geometry = new THREE.SphereGeometry(g.radius, 24, 16); break;
    case 'capsule': geometry = new THREE.CapsuleGeometry(g.radius, g.length, 8, 16); along = true; break;
    case 'cylinder': geometry = new THREE.CylinderGeometry(g.radius, g.radius, g.length, 24); along = true; break;
    case 'convex': {
      const pos = [];
      for (const face of g.faces)
        for (let k = 1; k + 1 < face.length; ++k)
          for (const i of [face[0], face[k], face[k + 1]]) pos.push(...g.vertices[i]);
      geometry = new THREE.BufferGeometry();
      geometry.setAttribute('position', new THREE.Float32BufferAttribute(pos, 3));
      geometry.computeVertexNormals();
      break;
    }
    case 'plane': {
      geometry = new THREE.PlaneGeometry(PLANE_SIZE, PLANE_SIZE);
      const n = new THREE.Vector3(...g.normal).normalize();
      const mesh = new THREE.Mesh(geometry, material);
      mesh.quaternion.setFromUnitVectors(new THREE.Vector3(0, 0, 1), n);
      mesh.position.copy(n.clone().multiplyScalar(g.d));
      return mesh;
    }
    default: geometry = new THREE.OctahedronGeometry(0.05); break; // a shape the format does not describe
  }
  if (along) geometry.rotateX(Math.PI / 2);
  const mesh = new THREE.Mesh(geometry, material);
  if (g.pos) mesh.position.set(g.pos[0], g.pos[1], g.pos[2]);
  if (g.quat) mesh.quaternion.copy(odeQuaternion(g.quat));
  return mesh;
}

class Run {
  constructor(name, index) {
    this.name = name;
    this.index = index;
    this.header = null;
    this.bodies = [];       // BODY records
    this.frames = [];       // parsed FRAME records, in order
    this.loaded = false;
    this.error = null;
    this.tint = new THREE.Color(RUN_TINTS[index % RUN_TINTS.length]);
    this.group = new THREE.Group();
    this.bodyGroups = [];
    this.staticMaterial = new THREE.MeshStandardMaterial({ color: 0x555b66, roughness: 0.9, side: THREE.DoubleSide, transparent: true, opacity: 0.85 });
    this.markers = new THREE.InstancedMesh(new THREE.SphereGeometry(MARKER_RADIUS, 10, 8),
      new THREE.MeshBasicMaterial({ color: 0xffffff, depthTest: false, transparent: true, opacity: 0.9 }), 64);
    this.markers.count = 0;
    this.markers.renderOrder = 10;
    this.markers.frustumCulled = false;
    this.group.add(this.markers);
    this.shown = -1;       // index into frames shown now
  }

  onHeader(h) {
    this.header = h;
    for (const g of h.static_geoms || []) this.group.add(geomMesh(g, this.staticMaterial));
    refreshRuns();
  }

  onBody(b) {
    if (b.index !== this.bodies.length) throw new Error(`BODY ${b.index} out of order`);
    this.bodies.push(b);
    const material = new THREE.MeshStandardMaterial({ color: this.tint, roughness: 0.6, metalness: 0.05,
      transparent: true, opacity: 1 });
    const group = new THREE.Group();
    group.userData = { run: this.index, body: b.index };
    for (const g of b.geoms) {
      const mesh = geomMesh(g, material);
      mesh.userData = group.userData;
      group.add(mesh);
    }
    group.visible = false;
    this.bodyGroups.push(group);
    this.group.add(group);
    refreshBodyList();
  }

  onFrame(f) {
    this.frames.push(f);
    insertTime(f.t);
  }

  // The frame shown at time t: the last frame at or before t (the first before it starts).
  frameAt(t) {
    const fr = this.frames;
    if (fr.length === 0) return -1;
    let lo = 0, hi = fr.length - 1;
    if (fr[0].t > t) return 0;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (fr[mid].t <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  show(t, showContacts) {
    const i = this.frameAt(t);
    this.shown = i;
    if (i < 0) return;
    const f = this.frames[i];
    for (let b = 0; b < this.bodyGroups.length; ++b) {
      const g = this.bodyGroups[b];
      g.visible = b < f.bodyCount;
      if (!g.visible) continue;
      const p = f.poses.subarray(7 * b, 7 * b + 7);
      g.position.set(p[0], p[1], p[2]);
      g.quaternion.set(p[4], p[5], p[6], p[3]);
      const m = g.children[0] && g.children[0].material;
      if (m) {
        m.emissive = new THREE.Color(b === selected ? 0x664400 : 0x000000);
        m.opacity = overlay && this.index > 0 ? 0.55 : 1;
      }
    }
    const contacts = showContacts ? f.contacts : [];
    if (contacts.length > this.markers.instanceMatrix.count) {
      this.group.remove(this.markers);
      const grown = new THREE.InstancedMesh(this.markers.geometry, this.markers.material, 2 * contacts.length);
      grown.renderOrder = 10;
      grown.frustumCulled = false;
      this.markers = grown;
      this.group.add(grown);
    }
    const m4 = new THREE.Matrix4();
    contacts.forEach((c, k) => {
      m4.makeTranslation(c.point[0], c.point[1], c.point[2]);
      this.markers.setMatrixAt(k, m4);
      this.markers.setColorAt(k, colourForDepth(c.depth));
    });
    this.markers.count = contacts.length;
    this.markers.instanceMatrix.needsUpdate = true;
    if (this.markers.instanceColor) this.markers.instanceColor.needsUpdate = true;
  }
}

function insertTime(t) {
  let lo = 0, hi = timeline.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (timeline[mid] < t) lo = mid + 1; else hi = mid; }
  if (timeline[lo] === t) return;
  timeline.splice(lo, 0, t);
  if (lo <= current && timeline.length > 1 && !playing) current = Math.min(current + 1, timeline.length - 1);
  scheduleUi();
}

// ------------------------------------------------------------------------------------------
// Loading (progressive)
// ------------------------------------------------------------------------------------------
async function loadRun(name, streamPromise) {
  const run = new Run(name, runs.length);
  runs.push(run);
  scene.add(run.group);
  refreshRuns();
  try {
    const stream = await streamPromise;
    const parser = new PptrajParser({
      onHeader: (h) => run.onHeader(h),
      onBody: (b) => run.onBody(b),
      onFrame: (f) => run.onFrame(f),
    });
    await readStream(stream, parser);
    run.loaded = true;
  } catch (e) {
    run.error = String(e && e.message ? e.message : e);
    console.warn(`pegplus viewer: ${name}: ${run.error}`);
  }
  refreshRuns();
  scheduleUi();
  return run;
}

function loadUrl(url) {
  return loadRun(url.split('/').pop(), fetch(url).then((r) => {
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    return r.body;
  }));
}

function loadFile(file) {
  return loadRun(file.name, Promise.resolve(file.stream()));
}

// ------------------------------------------------------------------------------------------
// three.js: one renderer, one camera shared by every viewport
// ------------------------------------------------------------------------------------------
const view = $('view');
const renderer = new THREE.WebGLRenderer({ antialias: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
renderer.setScissorTest(true);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1d2026);
scene.add(new THREE.HemisphereLight(0xffffff, 0x445566, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 1.8);
sun.position.set(5, -8, 12);
scene.add(sun);
const axes = new THREE.AxesHelper(0.5);
scene.add(axes);
const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 500);
camera.up.set(0, 0, 1);
camera.position.set(6, -8, 5);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0, 1);
controls.update();
controls.addEventListener('change', () => { needsRender = true; });
const labels = [];
let trianglesDrawn = 0; // by the last render, every viewport

function viewports() {
  const w = view.clientWidth, h = view.clientHeight;
  const shownRuns = runs.filter((r) => r.header);
  if (overlay || shownRuns.length <= 1) return [{ x: 0, w, h, runs: shownRuns }];
  const n = shownRuns.length;
  return shownRuns.map((r, i) => ({ x: Math.round((i * w) / n), w: Math.round(((i + 1) * w) / n) - Math.round((i * w) / n), h, runs: [r] }));
}

function render() {
  const w = view.clientWidth, h = view.clientHeight;
  if (renderer.domElement.width !== Math.round(w * renderer.getPixelRatio()) ||
      renderer.domElement.height !== Math.round(h * renderer.getPixelRatio()))
    renderer.setSize(w, h, false);
  const vps = viewports();
  labels.forEach((l) => l.remove());
  labels.length = 0;
  trianglesDrawn = 0;
  for (const vp of vps) {
    for (const r of runs) r.group.visible = vp.runs.includes(r);
    renderer.setViewport(vp.x, 0, vp.w, vp.h);
    renderer.setScissor(vp.x, 0, vp.w, vp.h);
    camera.aspect = vp.w / Math.max(1, vp.h);
    camera.updateProjectionMatrix();
    renderer.render(scene, camera);
    trianglesDrawn += renderer.info.render.triangles;
    const label = document.createElement('div');
    label.className = 'label';
    label.style.left = `${vp.x + 4}px`;
    label.textContent = vp.runs.map((r) => `${r.name} (${r.header.model})`).join(' + ');
    view.appendChild(label);
    labels.push(label);
  }
  for (const r of runs) r.group.visible = true;
  needsRender = false;
}

// ------------------------------------------------------------------------------------------
// UI
// ------------------------------------------------------------------------------------------
let uiScheduled = false;
function scheduleUi() { uiScheduled = true; needsRender = true; }

function currentTime() { return timeline.length ? timeline[Math.min(current, timeline.length - 1)] : 0; }

function updateFrame() {
  const t = playing ? playTime : currentTime();
  const showContacts = $('showContacts').checked;
  for (const r of runs) r.show(t, showContacts);
  const slider = $('slider');
  slider.max = String(Math.max(0, timeline.length - 1));
  slider.value = String(current);
  const steps = runs.map((r) => (r.shown >= 0 ? r.frames[r.shown].step : '-')).join(' / ');
  $('time').textContent = timeline.length
    ? `t = ${t.toFixed(4)} s  frame ${current + 1}/${timeline.length}  step ${steps}` : 'no frames yet';
  refreshSelection();
  needsRender = true;
}

function refreshRuns() {
  const el = $('runs');
  el.innerHTML = '';
  for (const r of runs) {
    const d = document.createElement('div');
    const sw = `<span style="color:#${r.tint.getHexString()}">&#9632;</span>`;
    const h = r.header;
    const info = h ? `${h.scene}, ${h.model}, h = ${h.h} s, every ${h.decimation} steps; ${r.bodies.length} bodies, ${r.frames.length} frames${r.loaded ? '' : ' (loading)'}` : 'loading';
    d.innerHTML = `${sw} <b></b>: <span class="info"></span>`;
    d.querySelector('b').textContent = r.name;
    d.querySelector('.info').textContent = r.error ? `error: ${r.error}` : info;
    if (r.error) d.className = 'err';
    el.appendChild(d);
  }
  const sel = $('bodyRun');
  const keep = sel.value;
  sel.innerHTML = '';
  runs.forEach((r, i) => {
    const o = document.createElement('option');
    o.value = String(i);
    o.textContent = r.name;
    sel.appendChild(o);
  });
  if (keep) sel.value = keep;
  refreshBodyList();
}

function refreshBodyList() {
  const run = runs[Number($('bodyRun').value || 0)];
  const el = $('bodies');
  if (!run) { el.innerHTML = ''; return; }
  while (el.children.length > run.bodies.length) el.lastChild.remove();
  for (let i = el.children.length; i < run.bodies.length; ++i) {
    const d = document.createElement('div');
    d.textContent = run.bodies[i].name;
    d.dataset.body = String(i);
    d.addEventListener('click', () => selectBody(i));
    el.appendChild(d);
  }
  for (const d of el.children) d.classList.toggle('sel', Number(d.dataset.body) === selected);
}

function fmt(x) { return (x >= 0 ? ' ' : '') + x.toFixed(6); }

function refreshSelection() {
  const el = $('selection');
  if (selected < 0) { el.textContent = 'click a body or pick one above'; return; }
  const lines = [];
  for (const r of runs) {
    const b = r.bodies[selected];
    if (!b) continue;
    const f = r.shown >= 0 ? r.frames[r.shown] : null;
    lines.push(`${r.name}: ${b.name}`);
    if (!f || selected >= f.bodyCount) { lines.push('  not created yet'); continue; }
    const p = f.poses.subarray(7 * selected, 7 * selected + 7);
    lines.push(`  pos  ${fmt(p[0])} ${fmt(p[1])} ${fmt(p[2])} m`);
    lines.push(`  quat ${fmt(p[3])} ${fmt(p[4])} ${fmt(p[5])} ${fmt(p[6])}`);
    const touching = f.contacts.filter((c) => c.a === selected || c.b === selected);
    if (touching.length) {
      const deepest = Math.max(...touching.map((c) => c.depth));
      lines.push(`  ${touching.length} penetrating contacts, deepest ${deepest.toExponential(3)} m`);
    }
  }
  el.textContent = lines.join('\n');
}

function selectBody(i) {
  selected = i;
  refreshBodyList();
  updateFrame();
}

function setFrame(i) {
  playing = false;
  $('play').innerHTML = '&#9654;';
  current = Math.max(0, Math.min(i, timeline.length - 1));
  updateFrame();
}

$('slider').addEventListener('input', (e) => setFrame(Number(e.target.value)));
$('back').addEventListener('click', () => setFrame(current - 1));
$('fwd').addEventListener('click', () => setFrame(current + 1));
$('play').addEventListener('click', () => {
  if (playing) { setFrame(current); return; }
  if (current >= timeline.length - 1) current = 0;
  playing = true;
  playTime = currentTime();
  $('play').innerHTML = '&#10074;&#10074;';
});
$('overlay').addEventListener('change', (e) => { overlay = e.target.checked; updateFrame(); });
$('showContacts').addEventListener('change', () => updateFrame());
$('bodyRun').addEventListener('change', () => refreshBodyList());
$('files').addEventListener('change', (e) => { for (const f of e.target.files) loadFile(f); });
window.addEventListener('dragover', (e) => { e.preventDefault(); });
window.addEventListener('drop', (e) => {
  e.preventDefault();
  for (const f of e.dataTransfer.files) loadFile(f);
});
window.addEventListener('resize', () => { needsRender = true; });

// click a body: pick in the viewport under the pointer
const raycaster = new THREE.Raycaster();
let downAt = null;
renderer.domElement.addEventListener('pointerdown', (e) => { downAt = [e.clientX, e.clientY]; });
renderer.domElement.addEventListener('pointerup', (e) => {
  if (!downAt || Math.hypot(e.clientX - downAt[0], e.clientY - downAt[1]) > 4) return;
  const rect = renderer.domElement.getBoundingClientRect();
  const x = e.clientX - rect.left, y = e.clientY - rect.top;
  const vp = viewports().find((v) => x >= v.x && x < v.x + v.w);
  if (!vp) return;
  camera.aspect = vp.w / Math.max(1, vp.h);
  camera.updateProjectionMatrix();
  raycaster.setFromCamera(new THREE.Vector2(((x - vp.x) / vp.w) * 2 - 1, -(y / vp.h) * 2 + 1), camera);
  const targets = vp.runs.flatMap((r) => r.bodyGroups.filter((g) => g.visible));
  const hit = raycaster.intersectObjects(targets, true)[0];
  if (hit) selectBody(hit.object.userData.body);
});

let lastTick = performance.now();
function tick(now) {
  const dt = Math.min(0.1, (now - lastTick) / 1000);
  lastTick = now;
  if (playing && timeline.length) {
    playTime += dt * Number($('speed').value);
    const end = timeline[timeline.length - 1];
    if (playTime >= end) { playTime = end; current = timeline.length - 1; setFrame(current); }
    else {
      while (current + 1 < timeline.length && timeline[current + 1] <= playTime) ++current;
      updateFrame();
    }
  }
  if (uiScheduled) { uiScheduled = false; refreshRuns(); updateFrame(); }
  if (needsRender) render();
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);

// ------------------------------------------------------------------------------------------
// Start: ?traj=URL&traj=URL2 ; a small hook for tests and scripting
// ------------------------------------------------------------------------------------------
const params = new URLSearchParams(window.location.search);
if (params.get('overlay') === '1') { overlay = true; $('overlay').checked = true; }
const initial = params.getAll('traj').map(loadUrl);
const ready = Promise.all(initial).then(() => { updateFrame(); render(); return runs.length; });

window.pegplusViewer = {
  ready,                                   // resolves when the ?traj= runs are loaded
  runCount: () => runs.length,
  loadUrl: (url) => loadUrl(url).then(() => runs.length),  // another run, streamed
  runInfo: (r) => ({ name: runs[r].name, header: runs[r].header, bodies: runs[r].bodies.length,
    frames: runs[r].frames.length, loaded: runs[r].loaded, error: runs[r].error }),
  frameCount: () => timeline.length,       // frames of the merged timeline of every run
  frameTime: (i) => timeline[i],
  setFrame: (i) => { setFrame(i); render(); return current; },
  stepForward: () => { $('fwd').click(); render(); return current; },
  stepBack: () => { $('back').click(); render(); return current; },
  currentFrame: () => current,
  shownFrame: (r) => { const i = runs[r].shown; return i < 0 ? null : { index: i, step: runs[r].frames[i].step, t: runs[r].frames[i].t }; },
  // the pose the page draws body b of run r with: [x, y, z, qw, qx, qy, qz], null when hidden
  bodyPose: (r, b) => {
    const g = runs[r].bodyGroups[b];
    if (!g || !g.visible) return null;
    return [g.position.x, g.position.y, g.position.z, g.quaternion.w, g.quaternion.x, g.quaternion.y, g.quaternion.z];
  },
  contactMarkers: (r) => runs[r].markers.count,
  setOverlay: (on) => { $('overlay').checked = !!on; overlay = !!on; updateFrame(); render(); return viewports().length; },
  viewportCount: () => viewports().length,
  selectBody: (b) => { selectBody(b); render(); return $('selection').textContent; },
  selectionText: () => $('selection').textContent,
  trianglesDrawn: () => trianglesDrawn,
};
