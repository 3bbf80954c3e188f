import { FerryError } from '../errors.ts';
import { isoWithOffset } from './message-ledger.ts';
import { countParts } from './message-parts.ts';

/**
 * An SMS template. The spec names its contents (identifier, name, text,
 * character/parts count, creation timestamp) but not the field names; the
 * emulator's names are documented in docs/emulator.md.
 */
export interface SmsTemplate {
  readonly id: string;
  readonly name: string | null;
  readonly text: string;
  readonly characters: number;
  readonly parts: number;
  readonly created_at: string;
}

/**
 * A Viber template: the spec shows neither its input nor its fields, so it is the input kept
 * as given plus a numeric `id` (numeric because `id` of the `template/viber/*` operations
 * falls under the common rule: a number) and `created_at`.
 */
export type ViberTemplate = Readonly<Record<string, unknown>> & { readonly id: number };

/**
 * The account's SMS and Viber templates. SMS template identifiers are strings (spec:
 * template/delete `id` is a string); Viber template identifiers are numbers.
 */
export class TemplateStore {
  #sms = new Map<string, SmsTemplate>();
  #viber = new Map<number, ViberTemplate>();
  #nextId = 1;
  #nextViberId = 1;

  /** Creates an SMS template from its text and optional name. */
  createSms(text: string, name: string | undefined, nowMs: number): SmsTemplate {
    const template: SmsTemplate = {
      id: String(this.#nextId++),
      name: name ?? null,
      text,
      characters: text.length,
      parts: countParts(text),
      created_at: isoWithOffset(nowMs),
    };
    this.#sms.set(template.id, template);
    return template;
  }

  /** Every SMS template, oldest first. */
  listSms(): SmsTemplate[] {
    return [...this.#sms.values()];
  }

  /**
   * Deletes the SMS templates matching `id` and/or the exact `text` (both given: both must
   * match; neither given: nothing is deleted). Returns how many were deleted.
   */
  deleteSms(id: string | undefined, text: string | undefined): number {
    if (id === undefined && text === undefined) return 0;
    let deleted = 0;
    for (const template of [...this.#sms.values()]) {
      if (id !== undefined && template.id !== id) continue;
      if (text !== undefined && template.text !== text) continue;
      this.#sms.delete(template.id);
      deleted += 1;
    }
    return deleted;
  }

  /**
   * Creates a Viber template from the operation's fields other than `type` (kept opaque).
   * @throws FerryError 'contract' when the fields cannot be serialized back (nested too deep).
   */
  createViber(fields: Readonly<Record<string, unknown>>, nowMs: number): ViberTemplate {
    try {
      JSON.stringify(fields);
    } catch (error: unknown) {
      throw new FerryError('contract', 'Template cannot be stored', {
        cause: error,
        retryable: false,
      });
    }
    const id = this.#nextViberId++;
    const template: ViberTemplate = { ...fields, id, created_at: isoWithOffset(nowMs) };
    this.#viber.set(id, template);
    return template;
  }

  /** Every Viber template, oldest first. */
  listViber(): ViberTemplate[] {
    return [...this.#viber.values()];
  }

  /** Deletes the Viber template with this `id`; returns how many were deleted (0 or 1). */
  deleteViber(id: unknown): number {
    return typeof id === 'number' && this.#viber.delete(id) ? 1 : 0;
  }

  /** Forgets every template. */
  reset(): void {
    this.#sms = new Map();
    this.#viber = new Map();
    this.#nextId = 1;
    this.#nextViberId = 1;
  }
}
