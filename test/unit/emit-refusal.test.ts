// Which ctx.emit payloads are refused (src/runtime/boundary-schemas.ts, emitRefusal): a
// subscriber's event() or input schema that refuses gives its one-line error; a schema whose
// code throws refuses too, naming the event; one that could not be asked (a workflow file's
// check child that crashed) throws, so nothing is recorded and the run resumes later.
import { expect, it } from 'vitest';
import * as z from 'zod';
import { event, workflow } from '../../sdk/index.ts';
import { schemaUnanswered, type StandardSchemaV1 } from '../../sdk/standard-schema.ts';
import { ValidationError } from '../../src/domain/errors.ts';
import { encodeValue } from '../../src/domain/value-codec.ts';
import { emitRefusal } from '../../src/runtime/boundary-schemas.ts';
import { WorkflowRegistry } from '../../src/runtime/registry.ts';

const throwing = (err: () => Error): StandardSchemaV1 => ({ '~standard': { version: 1, vendor: 'test', validate: () => { throw err(); } } });
const on = (name: string, schema?: StandardSchemaV1, input?: StandardSchemaV1) =>
  workflow(`on-${name}`, input ? { input } : {}, (w) => {
    w.trigger(event(name, schema ? { schema } : {}));
    w.run(async () => null);
  });

it('refuses in the words engine.emit uses; accepts what every schema accepts; events without schemas are not decoded', async () => {
  const registry = new WorkflowRegistry([
    on('paid', z.object({ amount: z.number().positive() })),
    on('placed', undefined, z.object({ at: z.date() })),
    on('bad', throwing(() => new TypeError('x is undefined'))),
    on('down', throwing(() => schemaUnanswered(new ValidationError('workflow file f.ts: its check child ended (1) before answering: boom')))),
    on('free'),
  ]);
  expect((await emitRefusal(registry, 'paid', { amount: -1 }))?.message).toBe("event 'paid' payload for workflow 'on-paid': amount: Too small: expected number to be >0");
  expect(await emitRefusal(registry, 'paid', { amount: 1 })).toBeUndefined();
  // The payload arrives in its stored form and is decoded for the schema (a Date stays one).
  expect(await emitRefusal(registry, 'placed', encodeValue({ at: new Date(0) }, 'p').stored)).toBeUndefined();
  expect((await emitRefusal(registry, 'placed', { at: '1970' }))?.message).toBe("event 'placed' payload for workflow 'on-placed' input: at: Invalid input: expected date, received string");
  const threw = await emitRefusal(registry, 'bad', {});
  expect([threw?.name, threw?.message]).toEqual(['ValidationError', "event 'bad' payload: a schema threw: x is undefined"]);
  await expect(emitRefusal(registry, 'down', {})).rejects.toThrow('its check child ended (1) before answering: boom');
  expect(await emitRefusal(registry, 'free', { $tqv: 'not a tagged value' })).toBeUndefined();
  expect(await emitRefusal(registry, 'nobody-listens', {})).toBeUndefined();
});

it("refuses a payload a debounced subscriber's key function cannot key, in its one line (nothing joins a burst)", async () => {
  const registry = new WorkflowRegistry([
    workflow('digest', { debounce: { period: '1m', key: (input: { user: string }) => input.user } }, (w) => {
      w.trigger(event('edited'));
      w.run(async () => null);
    }),
  ]);
  expect((await emitRefusal(registry, 'edited', { user: 7 }))?.message).toBe("workflow 'digest' debounce.key: the key function returned number, not a string");
  expect(await emitRefusal(registry, 'edited', { user: 'u1' })).toBeUndefined();
});
