// The Runs panel's run page shows a child's parent and a parent's children, each linked to
// its own page (docs/children.md).
import { expect, it } from 'vitest';
import { runDetails } from '../../src/adapters/http/panel-html.ts';
import type { RunView } from '../../src/domain/run-view.ts';

const base: RunView = { runId: 't:mid', workflow: 'mid', version: 'v1', status: 'waiting', input: null, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', steps: [] };

it('links the parent and lists the children with their status', () => {
  const html = runDetails({
    ...base,
    parent: { runId: 't', step: 'mid', depth: 1, onParentCancel: 'cancel' },
    children: [{ runId: 't:mid:leaf', workflow: 'leaf', step: 'leaf', status: 'waiting' }],
  });
  expect(html).toContain(`<td id="parent"><a href="t">t</a> step 'mid'</td>`);
  expect(html).toContain(`<h3>Child runs</h3><table id="children"><tr><td><a href="t%3Amid%3Aleaf">t:mid:leaf</a></td><td>leaf</td><td><span class="st st-waiting">waiting</span></td><td>step 'leaf'</td></tr></table>`);
  expect(runDetails(base)).not.toContain('Child runs');
  expect(runDetails(base)).not.toContain('id="parent"');
});
