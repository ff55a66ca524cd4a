// Streams written from inside a step body (docs/live-output.md, "From a step body"). A body
// cannot journal a step of its own (steps do not nest; on Restate it runs inside one
// journal entry), so an attempt's chunks are held here: each is handed to the readers of
// the executing process at once (a `stream.provisional` step event), and all of them are
// committed with the step's result (its streamed form, src/domain/value-codec.ts). An
// attempt that fails has its chunks discarded (a `stream.discarded` event tells the readers
// to rewind), so the stored stream holds the chunks of the attempt that succeeded, once.
import { ValidationError } from '../domain/errors.ts';
import { utf8Length, type Json } from '../domain/json.ts';
import { checkStateKey } from '../domain/published-state.ts';
import { encodeValue } from '../domain/value-codec.ts';
import type { BodyStreamWriter } from '../../sdk/types.ts';

/** Where an attempt's chunks go live (the RunSession: its step events). */
export interface BodyStreamHost {
  readonly maxPayloadBytes: number;
  /** Chunk `index` (from 0) of this attempt's writes to `name` was written. */
  bodyChunk(step: string, attempt: number, name: string, index: number, chunk: Json): void;
  /** The attempt ended: its chunks are committed with its result (`discarded` absent), or
   *  discarded (how many of each stream). */
  bodyEnded(step: string, attempt: number, discarded?: ReadonlyMap<string, number>): void;
}

export class AttemptStreams {
  /** [stream, chunk in stored form], in the order written: committed with the result. */
  readonly chunks: [string, Json][] = [];
  private bytes = 0;
  private over = false;
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly host: BodyStreamHost,
    private readonly step: string,
    private readonly attempt: number,
  ) {}

  writer(rawName: unknown): BodyStreamWriter {
    const name = checkStateKey(rawName, 'info.stream name');
    return { write: (chunk: unknown) => this.write(name, chunk) };
  }

  private write(name: string, chunk: unknown): void {
    if (this.over) throw new ValidationError(`info.stream('${name}'): attempt ${this.attempt} of step '${this.step}' is over; nothing more can be written from it`);
    let text: string, stored: Json;
    try {
      ({ text, stored } = encodeValue(chunk ?? null, `info.stream('${name}') chunk`, this.host.maxPayloadBytes));
    } catch (err) {
      throw new ValidationError((err as Error).message);
    }
    // The chunks travel in the step's result: together they keep within the payload limit.
    const bytes = this.bytes + utf8Length(text) + utf8Length(name) + 6;
    if (bytes > this.host.maxPayloadBytes) {
      throw new ValidationError(`info.stream('${name}'): the chunks step '${this.step}' wrote would be over the payload limit of ${this.host.maxPayloadBytes} bytes (engine config maxPayloadBytes)`);
    }
    this.bytes = bytes;
    this.chunks.push([name, stored]);
    const index = this.counts.get(name) ?? 0;
    this.counts.set(name, index + 1);
    this.host.bodyChunk(this.step, this.attempt, name, index, stored);
  }

  /** The attempt is over: later writes are refused; a failed one's chunks are discarded. */
  end(ok: boolean): void {
    if (this.over) return;
    this.over = true;
    this.host.bodyEnded(this.step, this.attempt, ok ? undefined : this.counts);
  }
}
