/** Balance units per currency unit: the balance is kept as an integer of 1/10_000 so billing never drifts. */
const UNITS_PER_CURRENCY = 10_000;

/** Options of the emulated account. */
export interface AccountOptions {
  /** Known alpha-names (spec: sender). */
  readonly senders: readonly string[];
  /** Starting balance, in currency units. */
  readonly initialBalance: number;
  /** Currency code of the balance record. */
  readonly currency: string;
  /** Price of one billed part, in currency units. */
  readonly pricePerPart: number;
}

/**
 * The emulated account: its alpha-names and its balance. A send is billed
 * `parts * pricePerPart`; a send that the balance cannot cover fails (see
 * docs/emulator.md: the spec does not show this case, the emulator answers the
 * item error `Insufficient balance`).
 */
export class Account {
  readonly currency: string;
  readonly #senders: ReadonlySet<string>;
  readonly #senderRecords: ReadonlyArray<{ readonly name: string; readonly status: string }>;
  readonly #initialUnits: number;
  readonly #unitsPerPart: number;
  #balanceUnits: number;

  constructor(options: AccountOptions) {
    this.currency = options.currency;
    this.#senders = new Set(options.senders);
    this.#senderRecords = options.senders.map((name) => ({ name, status: 'active' }));
    this.#initialUnits = Math.round(options.initialBalance * UNITS_PER_CURRENCY);
    this.#unitsPerPart = Math.round(options.pricePerPart * UNITS_PER_CURRENCY);
    this.#balanceUnits = this.#initialUnits;
  }

  /** Whether `name` is one of the account's alpha-names. */
  hasSender(name: string): boolean {
    return this.#senders.has(name);
  }

  /** The `sender` payload: one record per alpha-name. */
  senderRecords(): ReadonlyArray<{ readonly name: string; readonly status: string }> {
    return this.#senderRecords;
  }

  /** The current balance, in currency units. */
  get balance(): number {
    return this.#balanceUnits / UNITS_PER_CURRENCY;
  }

  /** The price of `parts` parts, in currency units. */
  priceOf(parts: number): number {
    return (parts * this.#unitsPerPart) / UNITS_PER_CURRENCY;
  }

  /** Takes `amount` currency units from the balance; returns false (and takes nothing) when it cannot cover it. */
  charge(amount: number): boolean {
    const units = Math.round(amount * UNITS_PER_CURRENCY);
    if (units > this.#balanceUnits) return false;
    this.#balanceUnits -= units;
    return true;
  }

  /** Back to the starting balance. */
  reset(): void {
    this.#balanceUnits = this.#initialUnits;
  }
}
