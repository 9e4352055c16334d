import { Transaction } from '@solana/web3.js';
import { ApiKeyRegistry } from './http/auth';
import { BlockhashRotation } from './chain/blockhash.rotation';
import { OffsetClock, type SandboxClock } from './sandbox.clock';
import { CursorCodec } from './operations/cursor';
import { FaultInjector } from './faults/injector';
import { generateDataset } from './ledger/generator';
import { IdempotencyStore } from './chain/idempotency.store';
import { decodeInstruction } from './chain/instruction.codec';
import type { LedgerInstruction } from './chain/instruction.model';
import { applyInstructions } from './ledger/rules';
import { SeededRandom, seededBytes } from './chain/prng';
import { SandboxLedger } from './ledger/ledger';
import type { ResolvedSandboxOptions } from './sandbox.options';
import { TransactionRegistry, type TransactionRecord } from './chain/transaction.registry';
import { WalletKeys } from './chain/wallet.keys';

/**
 * The sandbox's state and collaborators, shared by the HTTP routes and the programmatic admin handle.
 * reset() regenerates the ledger from the seed and forgets transactions, idempotency keys and cursors.
 */
export class SandboxCore {
  readonly clock: SandboxClock;
  readonly keys: WalletKeys;
  readonly auth: ApiKeyRegistry;
  readonly cursors: CursorCodec;
  readonly faults: FaultInjector;
  readonly blockhashes: BlockhashRotation;
  ledger!: SandboxLedger;
  registry!: TransactionRegistry;
  idempotency!: IdempotencyStore;
  /** PRNG for landing failures; separate from the fault PRNG so toggling faults does not shift it. */
  landingRng!: SeededRandom;
  epoch = 0;
  /** Counter for the nonce instruction that makes every signing a distinct transaction. */
  signings = 0n;

  constructor(readonly options: ResolvedSandboxOptions) {
    this.clock = options.clock ?? new OffsetClock();
    this.keys = new WalletKeys(options.seed);
    this.auth = new ApiKeyRegistry([
      { name: 'sandbox-full', key: options.apiKey, permissions: ['read', 'sign', 'submit', 'purchase'] },
      { name: 'sandbox-read-only', key: options.readOnlyApiKey, permissions: ['read'] },
      ...options.extraApiKeys,
    ]);
    this.cursors = new CursorCodec(seededBytes(options.seed, 'cursor-secret'));
    this.faults = new FaultInjector(options.faultSeed ?? options.seed);
    this.faults.set(options.faults, options.faultSeed);
    this.blockhashes = new BlockhashRotation(
      options.seed,
      options.blockhashRotationMs,
      options.blockhashLifetimeMs,
    );
    this.reset();
  }

  reset(): void {
    this.epoch++;
    this.ledger = new SandboxLedger(this.keys, this.options.initialBalanceMinor);
    generateDataset(this.ledger, {
      seed: this.options.seed,
      events: this.options.events,
      listings: this.options.listings,
      nowMs: this.clock.now(),
    });
    this.registry = new TransactionRegistry((record, atMs) => this.land(record, atMs));
    this.idempotency = new IdempotencyStore(this.options.idempotencyRetentionMs);
    this.landingRng = new SeededRandom(this.options.seed, 'landing', this.epoch);
  }

  /** Current sandbox time after landing or expiring everything that is due; call first in every request. */
  settle(): number {
    const now = this.clock.now();
    this.registry.settle(now);
    return now;
  }

  private land(record: TransactionRecord, atMs: number): string | undefined {
    const instructions: LedgerInstruction[] = [];
    for (const ix of Transaction.from(record.wire).instructions) {
      const decoded = ix.programId.equals(this.keys.programId) ? decodeInstruction(ix) : undefined;
      if (decoded === undefined) return 'transaction contains an instruction the program does not know';
      if (decoded !== null) instructions.push(decoded);
    }
    return applyInstructions(this.ledger, instructions, atMs);
  }
}
