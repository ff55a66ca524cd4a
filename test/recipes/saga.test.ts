// The saga recipe (examples/recipes/saga.ts) on the test engine: all bookings succeed; the
// car fails for good and the hotel and the flight are cancelled in reverse order, once each,
// after the car's retries. (That a step cut off by a crash runs again with the same key and
// a finished one never does is the engine's own guarantee, tested in test/crash/.)
import { describe, expect, it } from 'vitest';
import { createTestEngine } from '@tranquil/engine/testing';
import { bookTrip, type Booking, type TravelApi } from '../../examples/recipes/saga.ts';

function travel(failing?: Booking['kind']) {
  const calls: string[] = [];
  const api: TravelApi = {
    async book(kind, trip) {
      calls.push(`book ${kind}`);
      if (kind === failing) throw new Error(`no ${kind} available`);
      return { id: `${kind}-${trip}`, kind };
    },
    async cancel(b) {
      calls.push(`cancel ${b.kind}`);
    },
  };
  return { api, calls };
}

describe('recipe: saga with compensation', () => {
  it('books all three', async () => {
    const { api, calls } = travel();
    const t = await createTestEngine({ workflows: [bookTrip(api)] });
    const { runId } = await t.engine.trigger('book-trip', { trip: 'lis' });
    await t.idle();
    expect((await t.engine.runs.get(runId)).output).toEqual({ bookings: [{ id: 'flight-lis', kind: 'flight' }, { id: 'hotel-lis', kind: 'hotel' }, { id: 'car-lis', kind: 'car' }] });
    expect(calls).toEqual(['book flight', 'book hotel', 'book car']);
    await t.close();
  });

  it('a booking that fails for good undoes the earlier ones in reverse order, then fails the run', async () => {
    const { api, calls } = travel('car');
    const t = await createTestEngine({ workflows: [bookTrip(api)] });
    const { runId } = await t.engine.trigger('book-trip', { trip: 'lis' });
    await t.advance('1m'); // the car's retries back off 10s, 20s
    const run = await t.engine.runs.get(runId);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ name: 'TerminalError', message: 'trip lis not booked: no car available' });
    expect(calls).toEqual(['book flight', 'book hotel', 'book car', 'book car', 'book car', 'cancel hotel', 'cancel flight']);
    expect(run.steps.map((s) => `${s.name}:${s.status}`)).toEqual(['book-flight:succeeded', 'book-hotel:succeeded', 'book-car:failed', 'cancel-hotel:succeeded', 'cancel-flight:succeeded']);
    await t.close();
  });

});
