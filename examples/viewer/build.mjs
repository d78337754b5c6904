// Bundles the viewer (src/main.js with three.js) with esbuild and inlines it into ONE html file
// that opens offline from file://.
//   node build.mjs --modules <dir with node_modules> --out <file.html>
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const modules = path.resolve(opt('--modules') || path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules'));
const out = opt('--out');
if (!out) { console.error('usage: node build.mjs --modules DIR/node_modules --out FILE.html'); process.exit(2); }

const here = path.dirname(fileURLToPath(import.meta.url));
const esbuild = createRequire(path.join(modules, 'noop.js'))('esbuild');
const result = await esbuild.build({
  entryPoints: [path.join(here, 'src', 'main.js')],
  bundle: true,
  format: 'iife',
  minify: true,
  target: ['chrome100', 'firefox100', 'safari15'],
  nodePaths: [modules],
  write: false,
  legalComments: 'inline',
  logLevel: 'warning',
});
// "</script" inside the bundle would end the inline script
const js = result.outputFiles[0].text.replace(/<\/script/gi, '<\\/script');
const html = readFileSync(path.join(here, 'src', 'index.html'), 'utf8');
const marker = '<script>/*BUNDLE*/</script>';
if (!html.includes(marker)) { console.error('index.html has no bundle marker'); process.exit(1); }
writeFileSync(out, html.replace(marker, () => `<script>${js}</script>`));
console.log(`pegplus viewer: ${out} (${(js.length / 1024).toFixed(0)} KiB of script)`);
