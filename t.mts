import { readFileSync } from 'node:fs';
import { loadPlainWorkflow } from './src/runtime/plain/load.ts';
const ref = readFileSync('/tmp/ref.yaml', 'utf8');
console.log(JSON.stringify(loadPlainWorkflow(ref, 'ref.yaml'), null, 0).slice(0, 600));
const bads = [
  ref.replace('wait: 48h', 'wait: 48x'),
  ref.replace('action: app.load_user', 'acton: app.load_user'),
  ref.replace('id: nudge', 'id: fetch'),
  ref.replace('fetch.activated == false', 'nudge.activated == false'),
  ref.replace('{{ fetch.email }}', '{{ user.email }}'),
  ref.replace('version: 3', 'version: three'),
  ref.replace('max: 3', 'max: 3, tries: 2'),
  ref.replace('trigger: user.signed_up', 'trigger: { schedule: "bad cron" }'),
  ref.replace('trigger: user.signed_up\n', ''),
  ref.replace('version: 3', 'version: 3\nversion: 4'),
  ref.replace('{{ fetch.email }}', '{{ fetch.email '),
  ref.replace('    wait: 48h', '    wait: 48h\n    condition: "true"'),
  ref.replace('fetch.activated == false', 'fetch.activated == '),
  ref.replace('base: 30s', 'base: -30s'),
  'workflow: [',
  '',
  '- a',
];
for (const b of bads) { try { loadPlainWorkflow(b, 'ref.yaml'); console.log('LOADED?!') } catch (e) { console.log(e.name, '|', e.message) } }
