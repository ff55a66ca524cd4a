// Recipe: a saga. Book a flight, a hotel and a car; if a later booking fails for good, undo
// the earlier ones in reverse order, then fail the run. Every booking and every undo is a
// step: journaled, retried, and given an idempotency key, so a crash in the middle of the
// compensation resumes it without undoing anything twice. Test: test/recipes/saga.test.ts.
import { manual, TerminalError, workflow } from '@tranquil/sdk';

export interface Booking { id: string; kind: 'flight' | 'hotel' | 'car' }
/** Your travel provider's API; `key` makes each call idempotent on its side. */
export interface TravelApi {
  book(kind: Booking['kind'], trip: string, key: string): Promise<Booking>;
  cancel(booking: Booking, key: string): Promise<void>;
}

export function bookTrip(travel: TravelApi) {
  return workflow<{ trip: string }, { bookings: Booking[] }>('book-trip', (w) => {
    w.trigger(manual());
    w.defaults({ retries: { limit: 3, delay: '10s' } });
    w.run(async ({ input, step }) => {
      const done: Booking[] = [];
      try {
        for (const kind of ['flight', 'hotel', 'car'] as const) {
          done.push(await step.do(`book-${kind}`, ({ idempotencyKey }) => travel.book(kind, input.trip, idempotencyKey)));
        }
        return { bookings: done };
      } catch (err) {
        // Compensate in reverse order; each undo is its own step (retried, never run twice).
        for (const b of [...done].reverse()) {
          await step.do(`cancel-${b.kind}`, ({ idempotencyKey }) => travel.cancel(b, idempotencyKey));
        }
        throw new TerminalError(`trip ${input.trip} not booked: ${(err as Error).message}`);
      }
    });
  });
}
